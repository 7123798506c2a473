"""What a sliced run gives back (`SlicedOutcome`, or a `Fallback` to the whole
run), and how the results of its pieces add up to it (`stitch`).

Nothing here needs the IR or the pass manager: passflow-opt's warm path
(`passflow.tools.warm_cache`) stitches pieces the result cache holds without
loading them.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from passflow.diagnostics import Diagnostic, PassflowError
from passflow.sliced.profile import SlicedProfile

if TYPE_CHECKING:
    from passflow.ir import Operation

__all__ = ["ExecutorLostError", "Fallback", "PieceResult", "SlicedOutcome", "stitch"]


class ExecutorLostError(PassflowError):
    """The executor a sliced run ships its batches to went away (a Dask
    scheduler that died, a pool that was shut down): the run cannot finish
    there, nor fall back to a whole run on it."""


@dataclass
class SlicedOutcome:
    """A sliced run that stands for a run of the whole file: its diagnostics
    and the text its passes wrote, in order (`events`), and its result: the
    printed module (`output`, when the workers printed it) or the module
    itself (`module`, when passes after the nested pipelines ran here).
    `failed`: the pipeline failed, and there is no result."""

    events: list[Diagnostic]
    output: str | None = None
    module: Operation | None = None
    failed: bool = False
    profile: SlicedProfile = field(default_factory=SlicedProfile)


@dataclass(frozen=True)
class Fallback:
    """The file must run whole, in the parent: why."""

    reason: str


class PieceResult(Protocol):
    """What a piece, or a batch of pieces, gave: its diagnostics and captured
    output in order, whether the pipeline failed on it, its ops as printed
    inside the module (None if it failed, or if they came back as ops), and
    the symbols its ops defined before and after the run."""

    @property
    def events(self) -> Sequence[Diagnostic]: ...
    @property
    def failed(self) -> bool: ...
    @property
    def body(self) -> str | None: ...
    @property
    def initial_symbols(self) -> Sequence[str]: ...
    @property
    def symbols(self) -> Sequence[str]: ...


def stitch(
    prefix: str,
    results: Sequence[PieceResult],
    headers: Iterable[tuple[str, str]],
) -> SlicedOutcome | Fallback:
    """The run of the whole file that `results` (in program order) add up to,
    or a `Fallback` when they cannot stand for it: two ops define the same
    symbol (the module's verifier would say so), or an op that another piece
    references changed outside its regions (`headers`: each such op's
    header before and after the run; that piece was checked against the op as
    it was). `prefix` is the printed module up to its first op."""
    for names in (
        [name for result in results for name in result.initial_symbols],
        [name for result in results for name in result.symbols],
    ):
        if len(set(names)) != len(names):
            return Fallback("two top-level ops define the same symbol")
    if any(before != after for before, after in headers):
        return Fallback("a referenced op changed outside its regions")
    events = [event for result in results for event in result.events]
    if any(result.failed for result in results):
        return SlicedOutcome(events, failed=True)
    if any(result.body is None for result in results):
        return SlicedOutcome(events)  # the ops came back: the caller runs the rest
    body = "\n".join(result.body or "" for result in results)
    return SlicedOutcome(events, output=prefix + body + "\n}")
