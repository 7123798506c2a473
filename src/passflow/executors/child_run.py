"""Running one child the way every parallel executor does, and what comes back.

Whichever executor runs a child, and wherever (the spawning thread, a worker
thread, a forked worker, a Dask worker), it runs it the same way:
`run_child` captures the child's diagnostics and output, counts its statistic
effects, and, for a worker in another process, encodes the child if the
pipeline changed it. The outcome is a `ChildResult` (or a `ChildRaised` when
the worker itself failed): the typed message workers send back, which the
executor applies in child order once every child is done.

Also here: `PipelineStatistics`, how statistics stay executor-independent;
`ExecutorProfile`, where a parallel run's time went; and the few constants the
executors share.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from passflow import ir
from passflow.diagnostics import Diagnostic, Severity
from passflow.execution import ChildRunState, ChildWork
from passflow.executors.capture import (
    begin_child_capture,
    end_child_capture,
    replay_diagnostics,
)
from passflow.ir import Operation
from passflow.pass_base import Pass, PassPipeline, walk_passes
from passflow.statistics import (
    StatisticEffects,
    apply_statistic_effects,
    arm_statistics,
    set_statistics_aside,
    statistics_of,
    take_statistic_effects,
)

if TYPE_CHECKING:
    from passflow.executors.transfer import ChangeDetector, Encoder

__all__ = [
    "INTERRUPT_POLL",
    "ChildOutcomes",
    "ChildRaised",
    "ChildResult",
    "ExecutorProfile",
    "PipelineStatistics",
    "StatisticDeltas",
    "child_error",
    "run_child",
]

_T = TypeVar("_T")

INTERRUPT_POLL = 0.05
"""Seconds an executor waiting for its children blocks before it looks for an
interrupt again: Ctrl-C, forwarded into the waiting thread as an exception
(`passflow.deep_stack`), is seen only between two waits."""


StatisticDeltas = list[tuple[int, StatisticEffects]]
"""What one child's run did to the statistics of the passes that ran it:
(position in `walk_passes`, effects), for the passes it changed."""


class PipelineStatistics:
    """The passes with statistics under some pipelines, by position in
    `walk_passes`, and their statistics as per-child effects.

    `run_counted` runs a child with the statistics of these passes set aside
    and returns the child's effects; once every child is done, the executor
    `apply`s them to the original passes in child order, so that an added
    count sums and an assigned one ends as the last child's, as in a serial
    run, whichever worker ran which child (`passflow.statistics`).
    """

    __slots__ = ("_passes",)

    def __init__(self, pipelines: Sequence[PassPipeline]) -> None:
        self._passes: list[tuple[int, Pass]] = [
            (position, pass_)
            for position, pass_ in enumerate(walk_passes(pipelines))
            if statistics_of(type(pass_))
        ]

    def run_counted(self, run: Callable[[], _T]) -> tuple[_T, StatisticDeltas]:
        """Run `run` on these passes, their statistics set aside: its result and
        its effects, the statistics left as they were before."""
        saved = [set_statistics_aside(pass_) for _, pass_ in self._passes]
        for _, pass_ in self._passes:
            arm_statistics(pass_)
        try:
            result = run()
        finally:
            deltas: StatisticDeltas = []
            for (position, pass_), values in zip(self._passes, saved, strict=True):
                added, assigned = take_statistic_effects(pass_)
                if added or assigned:
                    deltas.append((position, (added, assigned)))
                pass_.__dict__.update(values)
        return result, deltas

    def apply(self, per_child: Iterable[StatisticDeltas | None]) -> None:
        """Apply children's effects to these passes, in the order given."""
        by_position = dict(self._passes)
        for deltas in per_child:
            for position, effects in deltas or ():
                apply_statistic_effects(by_position[position], effects)


EncodedChild = tuple[tuple[object, ...], tuple[object, ...]]
"""A rewritten child in `transfer`'s encoding: (header, regions)."""


@dataclass(frozen=True, slots=True)
class ChildResult:
    """What running child `position` gave: whether its pipeline succeeded, its
    diagnostics and output (`CapturedOutput`) in order, its statistic effects,
    its rewritten IR when it ran elsewhere and changed (None: unchanged or run
    here), and the seconds it took."""

    position: int
    ok: bool
    diagnostics: list[Diagnostic]
    statistics: StatisticDeltas
    rewritten: EncodedChild | None
    seconds: float


@dataclass(frozen=True, slots=True)
class ChildRaised:
    """A worker failed child `position` itself (its IR could not be encoded, a
    bug): the diagnostics captured before, and the error."""

    position: int
    diagnostics: list[Diagnostic]
    error: str


def run_child(
    position: int,
    child: Operation,
    run: Callable[[], bool],
    state: ChildRunState,
    statistics: PipelineStatistics,
    *,
    encoder: Encoder | None = None,
    changes: ChangeDetector | None = None,
    contain_errors: bool = False,
) -> ChildResult | ChildRaised:
    """Run `run` (a child's pipeline) with its diagnostics and output captured
    and its statistic effects counted.

    With an `encoder` (a worker in another process), the child comes back
    encoded if the run changed it (per `changes`, else always).
    `contain_errors` (a worker) turns an exception of the run or of the
    encoding into a `ChildRaised` carrying the diagnostics captured before it;
    otherwise it propagates (an instrumentation that raised aborts the run).
    """
    start = time.perf_counter()
    diagnostics: list[Diagnostic] = []
    try:
        before = changes.before(child) if changes is not None else None
        token = begin_child_capture(state)
        try:
            ok, deltas = statistics.run_counted(run)
        finally:
            diagnostics = end_child_capture(state, token)
        rewritten: EncodedChild | None = None
        if encoder is not None and (changes is None or changes.changed(child, before)):
            rewritten = (encoder.header(child), encoder.regions(child))
    except Exception as err:
        if not contain_errors:
            raise
        return ChildRaised(position, diagnostics, f"{type(err).__name__}: {err}")
    return ChildResult(
        position, ok, diagnostics, deltas, rewritten, time.perf_counter() - start
    )


def child_error(child: Operation, message: str) -> Diagnostic:
    """An error at `child` about its pipeline (a worker that died or raised)."""
    return Diagnostic(Severity.ERROR, message, ir.location(child))


class ChildOutcomes:
    """The outcomes of one adaptor run's children, kept by position until every
    child is done, then applied in child order: statistics to the original
    passes, diagnostics and output replayed, as a serial run would have."""

    def __init__(self, work: ChildWork, first: int = 0) -> None:
        self.work = work
        self.first = first
        """Children before it ran as a serial run runs them (their diagnostics
        emitted, their statistics counted as they ran): only those from
        `first` on are kept here."""
        count = len(work.items)
        self.ok = [False] * count
        self.diagnostics: list[list[Diagnostic] | None] = [None] * count
        self.effects: list[StatisticDeltas | None] = [None] * count
        self.statistics = PipelineStatistics(work.pipelines)

    def run_here(self, position: int) -> None:
        """Run child `position` on this thread with the original passes."""
        child = self.work.items[position][1]
        self.record(
            run_child(
                position,
                child,
                lambda: self.work.run_item(position),
                self.work.state,
                self.statistics,
            )
        )

    def record(self, result: ChildResult | ChildRaised) -> None:
        """Keep a child's outcome (a `ChildRaised` fails the child)."""
        if isinstance(result, ChildRaised):
            self.fail(
                result.position,
                result.diagnostics,
                f"running '{self.work.pipeline_text(result.position)}' on this op "
                f"raised {result.error}",
            )
            return
        self.ok[result.position] = result.ok
        self.diagnostics[result.position] = result.diagnostics
        self.effects[result.position] = result.statistics

    def fail(self, position: int, diagnostics: list[Diagnostic], message: str) -> None:
        """Child `position` failed for a reason outside its pipeline: its
        diagnostics so far, then `message` at the child."""
        child = self.work.items[position][1]
        self.diagnostics[position] = [*diagnostics, child_error(child, message)]
        self.ok[position] = False

    def finish(self) -> bool:
        """Apply every child's statistics and replay its diagnostics, in child
        order; whether every child succeeded."""
        first = self.first
        self.statistics.apply(self.effects[first:])
        replay_diagnostics(self.work.state, self.diagnostics[first:])
        return all(self.ok[first:])


@dataclass
class ExecutorProfile:
    """Where the time of an executor's parallel runs went (summed over runs).

    `children` counts the children of the parallel part of the runs,
    `in_parent` those of them the spawning thread ran itself, taking
    `parent_work` seconds. `parent_busy` is the rest of the wall time the
    spawning thread spent working rather than waiting (forking, feeding workers,
    splicing results back): work no other process can take over, so the serial
    fraction of a parallel run is `parent_busy / wall`. `worker_busy` sums the
    time workers spent on children (run + encode), and `shipped` counts children
    whose rewritten IR came back (unchanged children send nothing). Benchmarks
    use it to fit a model of where the time goes; it costs nothing to keep.
    """

    runs: int = 0
    children: int = 0
    in_parent: int = 0
    wall: float = 0.0
    parent_busy: float = 0.0
    parent_work: float = 0.0
    worker_busy: float = 0.0
    shipped: int = 0

    def add(self, other: ExecutorProfile) -> None:
        self.runs += other.runs
        self.children += other.children
        self.in_parent += other.in_parent
        self.wall += other.wall
        self.parent_busy += other.parent_busy
        self.parent_work += other.parent_work
        self.worker_busy += other.worker_busy
        self.shipped += other.shipped
