"""What a sliced run does: its batches, what each needs beside it, and which
pipelines it applies to."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from passflow.manager import OpToOpPassAdaptor
from passflow.pass_manager import PassManager
from passflow.sliced.batch import BatchResult, BatchRunner
from passflow.sliced.scan import PieceText, SourceSlices

__all__ = ["BATCHES_PER_JOB", "MAX_BATCH", "RemoteRun", "SlicePlan", "why_not_sliced"]

BATCHES_PER_JOB = 8
"""Batches per job: enough for the jobs to finish together."""

MAX_BATCH = 16
"""Pieces per batch at most: a batch of 20-op functions takes about 50 ms,
the granularity at which the parent decides to fork (the serial budget)."""


def why_not_sliced(pm: PassManager) -> str | None:
    """Why `pm` cannot run sliced, or None if it can: its pipeline must start
    with nested pipelines (an adaptor, not recursive; what follows runs in the
    parent), nothing but diagnostic handlers may watch the run
    (`PassManager.observed`), and the verifier must be on."""
    if pm.observed:
        return "the run is observed (instrumentation, statistics, actions, remarks)"
    if not pm.verify_each:
        return "the verifier is off"
    if not pm.passes or not isinstance(pm.passes[0], OpToOpPassAdaptor):
        return "the pipeline does not start with nested pipelines"
    adaptor = pm.passes[0]
    if any(nested.recursive for nested in adaptor.managers):
        return "a nested pipeline is recursive"
    return None


@dataclass(frozen=True)
class SlicePlan:
    """The batches of a sliced run: contiguous ranges of pieces, in order."""

    slices: SourceSlices
    batches: tuple[tuple[int, ...], ...]
    defined_by: dict[str, int]
    watched: frozenset[int]
    """Pieces another piece references: their headers are compared after the
    run, since the other piece only saw them as they were."""
    separately: bool = False
    """Each piece runs and prints on its own (`BatchRunner.run(separately=)`),
    for the result cache: its outcome is its own."""

    @staticmethod
    def of(
        slices: SourceSlices,
        jobs: int,
        pieces: Sequence[int] | None = None,
        *,
        separately: bool = False,
    ) -> SlicePlan:
        """Batches of `pieces` (default: all of them, in order)."""
        chosen = list(range(len(slices.pieces)) if pieces is None else pieces)
        count = len(chosen)
        size = max(1, min(MAX_BATCH, math.ceil(count / (jobs * BATCHES_PER_JOB))))
        batches = tuple(tuple(chosen[i : i + size]) for i in range(0, count, size))
        return SlicePlan(
            slices, batches, slices.defined_by(), slices.referenced(), separately
        )

    def own(self, batch: int) -> list[tuple[int, PieceText]]:
        """The batch's pieces as texts to parse, each with its first piece's
        index: a run of pieces with only whitespace and comments between them
        is one text, read by one parser (a parser per piece made parsing a
        tenth slower), unless another piece references one of them (its
        header is checked on its own)."""
        runs: list[list[int]] = []
        for index in self.batches[batch]:
            if runs and self._joins(runs[-1][-1], index):
                runs[-1].append(index)
            else:
                runs.append([index])
        return [(run[0], self.slices.run_text(run[0], run[-1])) for run in runs]

    def _joins(self, previous: int, index: int) -> bool:
        return (
            index == previous + 1
            and previous not in self.watched
            and index not in self.watched
            and self.slices.blank_between(previous, index)
        )

    def references(self, batch: int) -> list[tuple[int, PieceText]]:
        """The pieces outside `batch` that its pieces reference by symbol
        (and, when its pieces run one at a time, those inside it)."""
        span = self.batches[batch]
        needed = sorted(
            {
                index
                for i in span
                for name in self.slices.pieces[i].references
                if (index := self.defined_by.get(name)) is not None
                and (self.separately or index not in span)
            }
        )
        return [(i, self.slices.piece_text(i)) for i in needed]


RemoteRun = Callable[[SlicePlan, BatchRunner], list[BatchResult]]
"""Runs a plan's batches in other processes (`passflow.sliced.shipped`), given
the parent's runner (for the shell it parsed and the pass manager's pipeline)."""
