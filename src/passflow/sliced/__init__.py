"""Sliced runs: each top-level op parsed, run and printed where it runs.

Parsing and printing are most of a run of cheap passes, so running only the
passes in parallel leaves most of the work in the parent. A sliced run scans
the text for the module's top-level ops (`scan`), hands contiguous batches of
them to workers (forked here, `local`; or any `concurrent.futures` executor,
Dask included, as text, `shipped`), and each worker parses its batch with the
ops it references by symbol beside it, verifies it, runs the pipeline and
prints it (`batch`). The parent stitches the printed text together and plays
the diagnostics back in program order (`run`).

The result is the whole run's, byte for byte, or the run falls back to the
whole file (`Fallback`, with the reason) when the sliced run cannot vouch for
that: input that does not parse or verify, ops whose printing depends on
their neighbours, pipelines that do not start with nested pipelines, runs
that something observes. Passes after the nested pipelines run in the parent,
on the ops the workers send back encoded.

Importing this package loads none of its modules: each name loads its module
on first use, so a run that does not slice pays nothing for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from passflow.lazy import lazy_exports

if TYPE_CHECKING:
    from passflow.sliced.batch import BatchResult, BatchRunner
    from passflow.sliced.outcome import ExecutorLostError, Fallback, SlicedOutcome
    from passflow.sliced.plan import SlicePlan, why_not_sliced
    from passflow.sliced.profile import SlicedProfile
    from passflow.sliced.run import run_sliced
    from passflow.sliced.scan import Piece, PieceText, SourceSlices, scan_slices
    from passflow.sliced.shipped import shipped_runner

__all__ = [
    "BatchResult",
    "BatchRunner",
    "ExecutorLostError",
    "Fallback",
    "Piece",
    "PieceText",
    "SlicePlan",
    "SlicedOutcome",
    "SlicedProfile",
    "SourceSlices",
    "run_sliced",
    "scan_slices",
    "shipped_runner",
    "why_not_sliced",
]

_MODULES = {
    "passflow.sliced.batch": (
        "BatchResult",
        "BatchRunner",
    ),
    "passflow.sliced.shipped": ("shipped_runner",),
    "passflow.sliced.outcome": (
        "ExecutorLostError",
        "Fallback",
        "SlicedOutcome",
    ),
    "passflow.sliced.profile": ("SlicedProfile",),
    "passflow.sliced.run": ("run_sliced",),
    "passflow.sliced.scan": (
        "Piece",
        "PieceText",
        "SourceSlices",
        "scan_slices",
    ),
    "passflow.sliced.plan": (
        "SlicePlan",
        "why_not_sliced",
    ),
}
"""The names this package exports, by the module that defines them."""


__getattr__ = lazy_exports(__name__, _MODULES)
