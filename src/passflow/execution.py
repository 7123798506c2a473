"""How the children of an op run their nested pipelines: serially, or on an executor.

The nested-pipeline adaptor collects the direct children that some pipeline accepts
(`ChildWork.items`, in program order) and hands them to the run's `ChildExecutor`.
Whatever the executor, the outcome must be what a serial run gives: the same IR,
the same diagnostics in child order (with the text children wrote to
stdout/stderr between them, where a serial run writes it), every child processed
after a failure, the same statistics (each child's effect on them applied in
child order), instrumentation hooks serialized.

This module holds that contract and the in-process executors:

- `SerialExecutor`: every child on the calling thread (the fast path for small
  inputs, and what `--mlir-disable-threading` asks for);
- `ThreadExecutor`: MLIR's threaded adaptor, clone for clone. Under CPython's GIL
  it gives MLIR's semantics (per-worker pass clones, thread ids in
  `PipelineParentInfo`, hooks from worker threads) but no speedup;
- `make_executor` and `as_child_executor`, which pick or wrap one.

Executors that run children in other processes live in `passflow.executors`:
`ProcessExecutor` (forked workers that already hold the parsed module: the one
that makes passflow faster on several cores), `ShippingExecutor` (any
`concurrent.futures.Executor`) and `DaskExecutor` (a Dask cluster).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, TextIO, TypeVar, cast

from passflow import ir
from passflow.diagnostics import Diagnostic, PassflowError, Severity
from passflow.instrumentation import PipelineParentInfo
from passflow.ir import Operation
from passflow.statistics import (
    StatisticEffects,
    apply_statistic_effects,
    arm_statistics,
    statistics_of,
    take_statistic_effects,
)

if TYPE_CHECKING:
    from passflow.analysis import AnalysisManager
    from passflow.manager import OpPassManager, OpToOpPassAdaptor
    from passflow.pass_base import Pass
    from passflow.runner import RunState

__all__ = [
    "EXECUTOR_KINDS",
    "INTERRUPT_POLL",
    "ChildExecutor",
    "ChildWork",
    "ExecutorProfile",
    "SerialExecutor",
    "ThreadExecutor",
    "as_child_executor",
    "default_executor_kind",
    "default_jobs",
    "make_executor",
    "threading_sibling",
]

_T = TypeVar("_T")

EXECUTOR_KINDS = ("serial", "thread", "process", "dask")
"""What `make_executor` (and passflow-opt's `--executor`) accepts."""


@dataclass(eq=False)
class ChildWork:
    """One adaptor run: the children to process and what they run in.

    `items` pairs each child with the index (in `adaptor.managers`) of the pipeline
    that runs on it. `am` is the adaptor's op's analysis manager; each child's is
    `am.nest(child)`. `parent_info` is what the nested pipelines' hooks receive.
    """

    adaptor: OpToOpPassAdaptor
    op: Operation
    am: AnalysisManager
    state: RunState
    items: list[tuple[int, Operation]]
    parent_info: PipelineParentInfo

    def run_serially(self) -> bool:
        """Run every item in order on this thread; False if any child failed."""
        from passflow.runner import run_pipeline

        managers = self.adaptor.managers
        ok = True
        for index, child in self.items:
            if not run_pipeline(
                managers[index],
                child,
                self.am.nest(child),
                self.state,
                self.parent_info,
            ):
                ok = False
        return ok

    def run_captured(
        self, position: int, am: AnalysisManager, statistics: PipelineStatistics
    ) -> tuple[bool, list[Diagnostic], StatisticDeltas]:
        """Run item `position` on this thread with the original passes (whose
        statistics are `statistics`); whether it succeeded, its diagnostics and
        output, captured rather than emitted, and its statistic effects, taken
        rather than applied, so that the executor can replay every child's in
        child order."""
        from passflow.runner import run_pipeline

        index, child = self.items[position]
        captured: list[Diagnostic] = []

        def run() -> bool:
            token = begin_child_capture(self.state)
            try:
                ok = run_pipeline(
                    self.adaptor.managers[index],
                    child,
                    am,
                    self.state,
                    self.parent_info,
                )
            finally:
                captured.extend(end_child_capture(self.state, token))
            return ok

        ok, deltas = statistics.run_counted(run)
        return ok, captured, deltas

    def pipeline_text(self, item: int) -> str:
        """The textual pipeline item `item` runs (`func.func(cse)`), for messages."""
        return str(self.adaptor.managers[self.items[item][0]])


class ChildExecutor(ABC):
    """Runs an adaptor's children; `run` returns False if any child failed.

    Executors may hold workers: `close()` them (or use the executor as a context
    manager) when the pass manager is done.
    """

    name: str = "executor"

    @abstractmethod
    def run(self, work: ChildWork) -> bool: ...

    def close(self) -> None:  # noqa: B027  (optional hook: most executors hold nothing)
        """Release workers; called when the pass manager is done with the executor."""

    def __enter__(self) -> ChildExecutor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class SerialExecutor(ChildExecutor):
    """Every child on the calling thread, in program order: the fast path."""

    name = "serial"

    def run(self, work: ChildWork) -> bool:
        return work.run_serially()


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


def default_jobs() -> int:
    """The number of cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


# --- semantics shared by the parallel executors ------------------------------


def passes_in_order(managers: Sequence[OpPassManager]) -> Iterator[Pass]:
    """Every non-adaptor pass under `managers`, depth first in pipeline order.

    A pass that runs pipelines of its own (`nested_pipelines()`, a pipeline
    schedule's stages) is followed by their passes. Clones of a pipeline have
    the same shape, so the position of a pass in this walk names it in a
    worker's copy and in the original alike.
    """
    from passflow.manager import OpToOpPassAdaptor

    stack: list[Iterator[Pass]] = [iter(pm.passes) for pm in reversed(managers)]
    while stack:
        pass_ = next(stack[-1], None)
        if pass_ is None:
            stack.pop()
        elif isinstance(pass_, OpToOpPassAdaptor):
            stack.extend(iter(pm.passes) for pm in reversed(pass_.managers))
        else:
            yield pass_
            nested = getattr(pass_, "nested_pipelines", None)
            if callable(nested):
                stages = cast(list[tuple[str, "OpPassManager"]], nested())
                stack.extend(iter(pm.passes) for _, pm in reversed(stages))


StatisticDeltas = list[tuple[int, StatisticEffects]]
"""What one child's run did to the statistics of the passes that ran it:
(position in `passes_in_order`, effects), for the passes it changed."""


class PipelineStatistics:
    """The passes with statistics under some pipelines, by position in
    `passes_in_order`, and their statistics as per-child effects.

    A parallel executor arms the passes that will run a child (`arm`), takes
    the child's effects after it (`take`), and once every child is done applies
    them to the original passes in child order (`apply`), so that an added count
    sums and an assigned one ends as the last child's, as in a serial run,
    whichever worker ran which child (`passflow.statistics`).
    """

    __slots__ = ("_passes",)

    def __init__(self, managers: Sequence[OpPassManager]) -> None:
        self._passes: list[tuple[int, Pass]] = [
            (position, pass_)
            for position, pass_ in enumerate(passes_in_order(managers))
            if statistics_of(type(pass_))
        ]

    def arm(self) -> None:
        for _, pass_ in self._passes:
            arm_statistics(pass_)

    def take(self) -> StatisticDeltas:
        """The effects since `arm` of the passes that changed; resets them."""
        deltas: StatisticDeltas = []
        for position, pass_ in self._passes:
            added, assigned = take_statistic_effects(pass_)
            if added or assigned:
                deltas.append((position, (added, assigned)))
        return deltas

    def save(self) -> list[dict[str, object]]:
        """The current values, taken off the passes (for `restore`)."""
        saved: list[dict[str, object]] = []
        for _, pass_ in self._passes:
            values = pass_.__dict__
            saved.append(
                {
                    s.attr: values.pop(s.attr)
                    for s in statistics_of(type(pass_))
                    if s.attr in values
                }
            )
        return saved

    def restore(self, saved: list[dict[str, object]]) -> None:
        for (_, pass_), values in zip(self._passes, saved, strict=True):
            for stat in statistics_of(type(pass_)):
                pass_.__dict__.pop(stat.attr, None)
            pass_.__dict__.update(values)

    def run_counted(self, run: Callable[[], _T]) -> tuple[_T, StatisticDeltas]:
        """Run `run` on these (original) passes, their statistics set aside: its
        result and its effects, the statistics left as they were before."""
        saved = self.save()
        self.arm()
        try:
            result = run()
        finally:
            deltas = self.take()
            self.restore(saved)
        return result, deltas

    def apply(self, per_child: Iterable[StatisticDeltas | None]) -> None:
        """Apply children's effects to these passes, in the order given."""
        by_position = dict(self._passes)
        for deltas in per_child:
            for position, effects in deltas or ():
                apply_statistic_effects(by_position[position], effects)


# --- a child's output and diagnostics, in the order they happened -------------


@dataclass
class CapturedOutput(Diagnostic):
    """Text written to `sys.stdout` or `sys.stderr` (`stream`) while a child ran
    on a parallel executor, as `message`.

    It travels in the child's list of captured diagnostics, where it was
    written, so that `replay_diagnostics` writes it between the same diagnostics
    as a serial run would have; it is never emitted as a diagnostic."""

    stream: str = "stderr"


class _StreamRouter:
    """Stands in for `sys.stdout` or `sys.stderr` while children run captured:
    text written by a capturing thread goes into its child's captured
    diagnostics, text written by any other thread to the real stream."""

    def __init__(self, name: str, target: TextIO) -> None:
        self._name = name
        self._target = target

    def write(self, text: str) -> int:
        state: RunState | None = getattr(_capturing, "state", None)
        if state is None:
            return self._target.write(text)
        if text:
            state.emit(CapturedOutput(Severity.NOTE, text, stream=self._name))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if getattr(_capturing, "state", None) is None:
            self._target.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self._target, name)


_capturing = threading.local()
_routing_lock = threading.Lock()
_routing_users = 0
_routers: dict[str, _StreamRouter] = {}


def _new_routing_lock() -> None:
    """A forked child gets a free lock, whatever thread held the parent's."""
    global _routing_lock
    _routing_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_routing_lock)


def _route_output() -> None:
    """Put routers in place of sys.stdout and sys.stderr (counted)."""
    global _routing_users
    with _routing_lock:
        _routing_users += 1
        if _routing_users == 1:
            for name in ("stdout", "stderr"):
                current = cast(TextIO | None, getattr(sys, name))
                if current is not None and not isinstance(current, _StreamRouter):
                    router = _StreamRouter(name, current)
                    _routers[name] = router
                    setattr(sys, name, router)


def _unroute_output() -> None:
    global _routing_users
    with _routing_lock:
        _routing_users -= 1
        if _routing_users == 0:
            for name, router in _routers.items():
                if getattr(sys, name) is router:  # unless someone replaced it since
                    setattr(sys, name, router._target)  # pyright: ignore[reportPrivateUsage]
            _routers.clear()


CaptureToken = tuple["list[Diagnostic] | None", "RunState | None"]
"""What `begin_child_capture` returns and `end_child_capture` needs."""


def begin_child_capture(state: RunState) -> CaptureToken:
    """Start capturing, on this thread, a child's diagnostics and the text it
    writes to sys.stdout and sys.stderr, in the order they happen.

    Text written straight to a file descriptor (C code, `os.write(2, ...)`,
    subprocesses) or to a stream object taken before the run is not seen."""
    _route_output()
    sink = state.begin_capture()
    previous: RunState | None = getattr(_capturing, "state", None)
    _capturing.state = state
    return sink, previous


def end_child_capture(state: RunState, token: CaptureToken) -> list[Diagnostic]:
    """Stop capturing: the child's diagnostics and `CapturedOutput`, in order."""
    sink, previous = token
    _capturing.state = previous
    try:
        captured = state.end_capture(sink)
    finally:
        _unroute_output()
    merged: list[Diagnostic] = []
    for item in captured:  # one piece per stream between two diagnostics
        last = merged[-1] if merged else None
        if (
            isinstance(item, CapturedOutput)
            and isinstance(last, CapturedOutput)
            and last.stream == item.stream
        ):
            merged[-1] = CapturedOutput(
                Severity.NOTE, last.message + item.message, stream=item.stream
            )
        else:
            merged.append(item)
    return merged


def reset_child_capture() -> None:
    """Forget a capture this thread inherited (a forked worker: its parent may
    have forked inside a child's capture)."""
    _capturing.state = None


def replay_diagnostics(
    state: RunState, per_child: Sequence[Sequence[Diagnostic] | None]
) -> None:
    """Emit buffered diagnostics in child order, as a serial run would have, and
    write each child's captured output between them where it was written."""
    for diagnostics in per_child:
        if diagnostics:
            for diagnostic in diagnostics:
                if isinstance(diagnostic, CapturedOutput):
                    stream = sys.stdout if diagnostic.stream == "stdout" else sys.stderr
                    stream.write(diagnostic.message)
                else:
                    state.emit(diagnostic)


def child_error(child: Operation, message: str) -> Diagnostic:
    """An error at `child` about its pipeline (a worker that died or raised)."""
    return Diagnostic(Severity.ERROR, message, ir.location(child))


def in_process_only(work: ChildWork) -> bool:
    """Whether `work` must stay in this process: instrumentations observe the
    passes and ops of this process (IR printing, timing, reproducers), so an
    instrumented run never ships children elsewhere."""
    return work.state.instrumentor is not None


_siblings: weakref.WeakKeyDictionary[Pass, Pass] = weakref.WeakKeyDictionary()


def threading_sibling(pass_: Pass) -> Pass:
    """The original pass a worker clone was made from, or `pass_` itself.

    MLIR's `getThreadingSiblingOrThis`: instrumentations that aggregate per pass
    (timing) use it to merge what the clones of one pass did on worker threads.
    """
    return _siblings.get(pass_, pass_)


class _WorkerClones:
    """Per adaptor, one copy of its pipelines for each worker slot.

    Made on first parallel run and reused while the adaptor's pipelines are the
    same passes with the same options; the originals never run in parallel mode.
    """

    def __init__(self) -> None:
        self._by_adaptor: weakref.WeakKeyDictionary[
            OpToOpPassAdaptor, tuple[object, list[list[OpPassManager]]]
        ] = weakref.WeakKeyDictionary()

    def slots(
        self, adaptor: OpToOpPassAdaptor, count: int
    ) -> list[list[OpPassManager]]:
        key = (
            tuple(id(p) for p in passes_in_order(adaptor.managers)),
            str(adaptor),
        )
        found = self._by_adaptor.get(adaptor)
        if found is not None and found[0] == key and len(found[1]) >= count:
            return found[1]
        slots = [[pm.clone() for pm in adaptor.managers] for _ in range(count)]
        originals = list(passes_in_order(adaptor.managers))
        for slot in slots:
            for clone, original in zip(passes_in_order(slot), originals, strict=True):
                _siblings[clone] = original
        self._by_adaptor[adaptor] = (key, slots)
        return slots


# --- threads -----------------------------------------------------------------


INTERRUPT_POLL = 0.05
"""Seconds an executor waiting for its children blocks before it looks for an
interrupt again: Ctrl-C, forwarded into the waiting thread as an exception
(`passflow.deep_stack`), is seen only between two waits."""


class ThreadExecutor(ChildExecutor):
    """MLIR's parallel adaptor on a thread pool.

    Each of `jobs` worker slots runs its own clone of the adaptor's pipelines;
    a task takes a free slot, runs the child's pipeline with diagnostics and
    output buffered and statistics armed, and gives the slot back. Analysis
    managers are made on the spawning thread, hooks receive
    `PipelineParentInfo(spawning thread, original adaptor)`; once every child is
    done, their statistic effects are applied to the originals and their
    diagnostics and output replayed, in child order. Nested adaptors inside a
    worker run serially on that worker (no pool deadlock). Under the GIL this is
    about semantics, not speed: see `ProcessExecutor` for that.
    """

    name = "thread"

    def __init__(
        self, jobs: int | None = None, *, pool: ThreadPoolExecutor | None = None
    ) -> None:
        self.jobs = jobs if jobs is not None else default_jobs()
        self._pool = pool
        self._owns_pool = pool is None
        self._clones = _WorkerClones()
        self._local = threading.local()
        self._lock = threading.Lock()

    def _get_pool(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(
                    self.jobs, thread_name_prefix="passflow-worker"
                )
            return self._pool

    def run(self, work: ChildWork) -> bool:
        if self.jobs <= 1 or getattr(self._local, "busy", False):
            return work.run_serially()
        from passflow.runner import run_pipeline

        state = work.state
        ir.preload_dialects(state.context)
        items = work.items
        count = min(self.jobs, len(items))
        slots = self._clones.slots(work.adaptor, count)
        free: queue.SimpleQueue[int] = queue.SimpleQueue()
        for slot in range(count):
            free.put(slot)
        ams = [work.am.nest(child) for _, child in items]
        diagnostics: list[list[Diagnostic] | None] = [None] * len(items)
        counts = [PipelineStatistics(slot) for slot in slots[:count]]
        effects: list[StatisticDeltas | None] = [None] * len(items)
        local = self._local

        def task(position: int) -> bool:
            local.busy = True
            slot = free.get()
            counts[slot].arm()
            token = begin_child_capture(state)
            try:
                index, child = items[position]
                return run_pipeline(
                    slots[slot][index], child, ams[position], state, work.parent_info
                )
            finally:
                diagnostics[position] = end_child_capture(state, token)
                effects[position] = counts[slot].take()
                free.put(slot)
                local.busy = False

        pool = self._get_pool()
        futures: list[Future[bool]] = [
            pool.submit(task, position) for position in range(len(items))
        ]
        try:
            while wait_futures(futures, timeout=INTERRUPT_POLL).not_done:
                pass
        except BaseException:  # an interrupt: children not started never start
            for future in futures:
                future.cancel()
            raise
        PipelineStatistics(work.adaptor.managers).apply(effects)
        replay_diagnostics(state, diagnostics)
        ok = True
        for future in futures:
            error = future.exception()
            if error is not None:  # an instrumentation raised: the run aborts
                raise error
            ok = future.result() and ok
        return ok

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None and self._owns_pool:
            pool.shutdown(wait=True)


# --- choosing an executor ------------------------------------------------------


def default_executor_kind() -> str:
    """What passflow-opt uses without `--executor`: forked processes where the
    platform can fork, else serial.

    Measured (bench/parallel.py): processes beat serial from about a hundred
    functions of cheap passes, and because the parent runs children itself for
    `serial_budget` seconds and forks only if the rest would take twice that,
    smaller inputs cost what a serial run costs. Threads never beat serial under
    the GIL."""
    import multiprocessing

    return "process" if "fork" in multiprocessing.get_all_start_methods() else "serial"


def make_executor(
    kind: str, jobs: int | None = None, scheduler: str | None = None
) -> ChildExecutor:
    """The executor passflow-opt's `--executor`, `--jobs` and `--scheduler` ask for.

    `jobs` (default: the usable cores) bounds the workers; one job means serial.
    `scheduler` is a Dask scheduler address (`tcp://host:8786`) for `dask`; without
    one, `dask` starts a local cluster of `jobs` worker processes.
    """
    if kind not in EXECUTOR_KINDS:
        raise PassflowError(
            f"unknown executor '{kind}' (expected one of: {', '.join(EXECUTOR_KINDS)})"
        )
    if scheduler is not None and kind != "dask":
        raise PassflowError(
            f"a scheduler address needs the dask executor, not '{kind}'"
        )
    if jobs is not None and jobs < 1:
        raise PassflowError(f"the number of jobs must be at least 1, got {jobs}")
    if kind == "serial" or (jobs == 1 and kind != "dask"):
        return SerialExecutor()
    if kind == "thread":
        return ThreadExecutor(jobs)
    if kind == "process":
        from passflow.executors.forking import ProcessExecutor

        return ProcessExecutor(jobs)
    from passflow.executors.dask import DaskExecutor

    return DaskExecutor(scheduler, jobs=jobs)


def as_child_executor(
    executor: ChildExecutor | Executor | None, jobs: int | None = None
) -> ChildExecutor | None:
    """Accept a `ChildExecutor` as is and wrap a `concurrent.futures.Executor`.

    A `ThreadPoolExecutor` becomes a `ThreadExecutor` on that pool (children share
    this process's IR); any other executor (a `ProcessPoolExecutor`, Dask's
    `client.get_executor()`, ...) runs elsewhere, so children are shipped to it
    and their rewritten IR shipped back (`ShippingExecutor`).
    """
    if executor is None or isinstance(executor, ChildExecutor):
        return executor
    if isinstance(executor, ThreadPoolExecutor):
        return ThreadExecutor(jobs, pool=executor)
    from passflow.executors.shipping import ShippingExecutor

    return ShippingExecutor(executor, jobs=jobs)
