"""The keys of the result cache: `run_keys`, the one function that computes
them, for the full run (`passflow.sliced.run`) and passflow-opt's warm path
(`passflow.tools.warm_cache`) alike.

A piece's key is the run's key and the piece's own: its text (padded to its
column) and the line it starts on (diagnostics carry both), and the text and
line of every piece it references by symbol, transitively (the ops its
verifier and passes may look up). The run's key covers the rest: the module's
shell (its header, attributes and aliases), the file name, the caller's
`salt` (passflow-opt hashes every flag that is not about where files go or
how many processes run), the Python that runs it, and the code the pipeline
runs, by content (`passflow.cache.sources.code_fingerprint`).

Everything here is computed without the pass manager, the passes or the IR,
so that the warm path can find a run's results before any of them loads.
A later key may leave a piece's position out and carry it beside the result
instead (a piece moved by an edit above it would then hit); that changes
`_piece_own` and `CACHE_FORMAT`, nothing else.
"""

from __future__ import annotations

import json
import sys
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from passflow.cache.sources import (
    PipelineCode,
    StampMemo,
    code_fingerprint,
    digest,
)

__all__ = ["CACHE_FORMAT", "RunKeys", "ScannedText", "run_keys"]

CACHE_FORMAT = 3
"""Changes when what a key covers or an entry holds changes."""


class _Text(Protocol):
    @property
    def text(self) -> str: ...

    @property
    def first_line(self) -> int: ...


class _Piece(Protocol):
    @property
    def references(self) -> frozenset[str]: ...


class ScannedText(Protocol):
    """What the keys read of a module's text cut into its top-level ops
    (`passflow.sliced.scan.SourceSlices`)."""

    @property
    def shell_text(self) -> _Text: ...

    @property
    def pieces(self) -> Sequence[_Piece]: ...

    @property
    def line_of(self) -> Sequence[int]: ...

    def piece_text(self, index: int) -> _Text: ...

    def defined_by(self) -> Mapping[str, int]: ...


@dataclass(frozen=True)
class RunKeys:
    """A run's keys: the run's own (`run`), its printed shell's (`shell`)
    and each piece's, in program order (`pieces`)."""

    run: str
    shell: str
    pieces: tuple[str, ...]


def run_keys(
    memo: StampMemo | None,
    code: PipelineCode,
    name: str,
    slices: ScannedText,
    salt: str,
) -> RunKeys:
    """The keys of a run of the pipeline `code` stands for on the module
    `slices` cut (from the file `name`), with what else the output depends
    on in `salt`; `memo` remembers the digests of the code's files."""
    shell = slices.shell_text
    run = digest(
        json.dumps(
            [
                CACHE_FORMAT,
                sys.version,
                code_fingerprint(memo, code),
                name,
                shell.text,
                shell.first_line,
                salt,
            ]
        )
    )
    return RunKeys(run, digest(run, "the printed shell"), _piece_keys(run, slices))


def _piece_own(slices: ScannedText, index: int) -> str:
    """What a piece's key holds of the piece itself: its line and its text,
    padded to its column."""
    return digest(str(slices.line_of[index]), slices.piece_text(index).text)


def _piece_keys(run: str, slices: ScannedText) -> tuple[str, ...]:
    """Each piece's key: the run's, its own, and those of the pieces it
    references, transitively."""
    count = len(slices.pieces)
    own = [_piece_own(slices, i) for i in range(count)]
    defined_by = slices.defined_by()
    direct = [
        sorted(
            {
                found
                for name in piece.references
                if (found := defined_by.get(name)) is not None and found != index
            }
        )
        for index, piece in enumerate(slices.pieces)
    ]
    keys: list[str] = []
    for index in range(count):
        seen = {index}
        queue = deque(direct[index])
        while queue:
            other = queue.popleft()
            if other not in seen:
                seen.add(other)
                queue.extend(direct[other])
        seen.discard(index)
        keys.append(digest(run, own[index], *sorted(own[i] for i in seen)))
    return tuple(keys)
