"""The keys of the result cache: `run_keys`, the one function that computes
them, for the full run (`passflow.sliced.run`) and passflow-opt's warm path
(`passflow.tools.warm_cache`) alike.

A piece's key is the run's key and the piece's own: its text (padded to its
column), and the text of every piece it references by symbol, transitively
(the ops its verifier and passes may look up). Not where they stand: a piece
moved by an edit above it is a hit, its result's positions moved to its line
(`passflow.cache.placement`). Beside each key are the piece's line and its
anchor, a digest of every position that result could depend on (the shell's,
the piece's and its references' lines): a result that cannot move is held to
it. The run's key covers the rest: the module's
shell (its header, attributes and aliases), the file name, the caller's
`salt` (passflow-opt hashes every flag that is not about where files go or
how many processes run), the Python that runs it, and the code the pipeline
runs, by content (`passflow.cache.sources.code_fingerprint`).

Everything here is computed without the pass manager, the passes or the IR,
so that the warm path can find a run's results before any of them loads.
A store keeps the keys of the last few texts it saw (`known_run_keys`), under
a digest of everything `run_keys` computes them from, so that a run of a
text the store saw before neither scans it nor computes its keys again.
"""

from __future__ import annotations

import json
import sys
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar, cast

from passflow.cache.sources import (
    PipelineCode,
    StampMemo,
    code_fingerprint,
    digest,
)

__all__ = [
    "CACHE_FORMAT",
    "KeyInputs",
    "KeyMemo",
    "RunKeys",
    "ScannedText",
    "known_run_keys",
    "run_keys",
]

CACHE_FORMAT = 4
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
    (`passflow.sliced.scan.SourceSlices`): the `text` cut, from its
    `first_line`, and the cut."""

    @property
    def text(self) -> str: ...

    @property
    def first_line(self) -> int: ...

    @property
    def shell_text(self) -> _Text: ...

    @property
    def pieces(self) -> Sequence[_Piece]: ...

    @property
    def line_of(self) -> Sequence[int]: ...

    def piece_text(self, index: int) -> _Text: ...

    def defined_by(self) -> Mapping[str, int]: ...

    def referenced(self) -> frozenset[int]: ...


@dataclass(frozen=True)
class RunKeys:
    """A run's keys: the run's own (`run`), its printed shell's (`shell`)
    and each piece's, in program order (`pieces`), with each piece's first
    line (`lines`) and anchor (`anchors`, `passflow.cache.placement`), and
    the pieces others reference by symbol (`referenced`: a hit of one must
    hold its header)."""

    run: str
    shell: str
    pieces: tuple[str, ...]
    lines: tuple[int, ...]
    anchors: tuple[str, ...]
    referenced: frozenset[int]

    def to_json(self) -> str:
        return json.dumps(
            [self.run, self.shell, self.pieces, self.lines, self.anchors,
             sorted(self.referenced)],
            separators=(",", ":"),
        )  # fmt: skip

    @staticmethod
    def from_json(text: str) -> RunKeys | None:
        """The keys `to_json` wrote, or None for text it did not write."""
        try:
            fields: object = json.loads(text)
        except ValueError:
            return None
        if not isinstance(fields, list) or len(cast("list[object]", fields)) != 6:
            return None
        run, shell, *lists = cast("list[object]", fields)
        pieces, anchors = _items(str, lists[0]), _items(str, lists[2])
        lines, referenced = _items(int, lists[1]), _items(int, lists[3])
        if (
            not isinstance(run, str)
            or not isinstance(shell, str)
            or pieces is None
            or lines is None
            or anchors is None
            or referenced is None
            or not len(pieces) == len(lines) == len(anchors)
            or not all(0 <= index < len(pieces) for index in referenced)
        ):
            return None
        return RunKeys(run, shell, pieces, lines, anchors, frozenset(referenced))


KeyInputs = tuple[PipelineCode, str, str, str, int]
"""What `run_keys` computes a run's keys from besides the store: the code,
the file's name, the salt, and the text scanned with its first line (the
scan is a function of these two)."""

_Item = TypeVar("_Item", str, int)


def _items(kind: type[_Item], value: object) -> tuple[_Item, ...] | None:
    """`value`, a JSON list of `kind` only (no bool for int), as a tuple."""
    if not isinstance(value, list):
        return None
    items = tuple(cast("list[object]", value))
    if not all(type(item) is kind for item in items):
        return None
    return cast("tuple[_Item, ...]", items)


class KeyMemo(StampMemo, Protocol):
    """A `StampMemo` that also remembers the keys `run_keys` computed while
    it is open (the result cache's store, which serves one run), and keeps
    those of the last few texts for the runs after it."""

    computed_keys: dict[KeyInputs, RunKeys]

    def kept_scan(self, key: str) -> str | None: ...

    def keep_scan(self, key: str, value: str) -> None: ...


def run_keys(
    memo: KeyMemo | None,
    code: PipelineCode,
    name: str,
    slices: ScannedText,
    salt: str,
) -> RunKeys:
    """The keys of a run of the pipeline `code` stands for on the module
    `slices` cut (from the file `name`), with what else the output depends
    on in `salt`; `memo` remembers the digests of the code's files, and the
    keys computed while it is open (a full run that takes over from the warm
    path computes none again)."""
    if memo is None:
        return _run_keys(None, code, name, slices, salt)
    inputs = (code, name, salt, slices.text, slices.first_line)
    found = memo.computed_keys.get(inputs)
    if found is None:
        found = memo.computed_keys[inputs] = _run_keys(memo, code, name, slices, salt)
        memo.keep_scan(_scan_key(memo, inputs), found.to_json())
    return found


def known_run_keys(
    memo: KeyMemo, code: PipelineCode, name: str, text: str, first_line: int, salt: str
) -> RunKeys | None:
    """The keys `run_keys` computed for the scan of `text` from `first_line`
    with these arguments, while `memo` is open or in one of the last runs
    that kept it; None if it did not."""
    inputs = (code, name, salt, text, first_line)
    found = memo.computed_keys.get(inputs)
    if found is None:
        kept = memo.kept_scan(_scan_key(memo, inputs))
        found = None if kept is None else RunKeys.from_json(kept)
        if found is not None:
            memo.computed_keys[inputs] = found
    return found


def _scan_key(memo: KeyMemo, inputs: KeyInputs) -> str:
    """What the keys of a scan are kept under: everything they are computed
    from, the code by content."""
    code, name, salt, text, first_line = inputs
    return digest(
        "scan", str(CACHE_FORMAT), sys.version, code_fingerprint(memo, code),
        name, salt, str(first_line), text,
    )  # fmt: skip


def _run_keys(
    memo: StampMemo | None,
    code: PipelineCode,
    name: str,
    slices: ScannedText,
    salt: str,
) -> RunKeys:
    shell = slices.shell_text
    run = digest(
        json.dumps(
            [
                CACHE_FORMAT,
                sys.version,
                code_fingerprint(memo, code),
                name,
                _without_blank_lines(shell.text),
                salt,
            ]
        )
    )
    pieces, anchors = _piece_keys(run, slices)
    return RunKeys(
        run,
        digest(run, "the printed shell"),
        pieces,
        tuple(slices.line_of),
        anchors,
        slices.referenced(),
    )


def _without_blank_lines(text: str) -> str:
    """The shell without what only moves its lines: no string spans lines, so
    blank lines and trailing spaces change no alias, and nothing a run prints
    holds an alias's position (the anchor holds where the shell starts)."""
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip())


def _piece_keys(
    run: str, slices: ScannedText
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Each piece's key (the run's, its text, and those of the pieces it
    references, transitively) and its anchor (their lines and the shell's)."""
    count = len(slices.pieces)
    own = [digest(slices.piece_text(i).text) for i in range(count)]
    lines = slices.line_of
    shell_line = str(slices.shell_text.first_line)
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
    anchors: list[str] = []
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
        anchors.append(
            digest(
                shell_line, str(lines[index]), *(str(lines[i]) for i in sorted(seen))
            )
        )
    return tuple(keys), tuple(anchors)
