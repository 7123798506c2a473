"""How the children of an op run their nested pipelines: serially, or on an executor.

The nested-pipeline adaptor collects the direct children that some pipeline accepts
(`ChildWork.items`, in program order) and hands them to the run's `ChildExecutor`.
Whatever the executor, the outcome must be what a serial run gives: the same IR,
the same diagnostics in child order, every child processed after a failure,
statistics summed over worker clones, instrumentation hooks serialized.

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
import threading
import weakref
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from passflow import ir
from passflow.diagnostics import Diagnostic, PassflowError
from passflow.instrumentation import PipelineParentInfo
from passflow.ir import Operation
from passflow.statistics import add_statistics, merge_statistics, statistics_of

if TYPE_CHECKING:
    from passflow.analysis import AnalysisManager
    from passflow.manager import OpPassManager, OpToOpPassAdaptor
    from passflow.pass_base import Pass
    from passflow.runner import RunState

__all__ = [
    "EXECUTOR_KINDS",
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
        self, position: int, am: AnalysisManager
    ) -> tuple[bool, list[Diagnostic]]:
        """Run item `position` on this thread with the original passes; whether
        it succeeded, and its diagnostics, captured rather than emitted so that
        the executor can replay every child's in child order."""
        from passflow.runner import run_pipeline

        index, child = self.items[position]
        previous = self.state.begin_capture()
        try:
            ok = run_pipeline(
                self.adaptor.managers[index], child, am, self.state, self.parent_info
            )
        finally:
            diagnostics = self.state.end_capture(previous)
        return ok, diagnostics

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

    Clones of a pipeline have the same shape, so the position of a pass in this
    walk names it in a worker's copy and in the original alike.
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


StatisticDeltas = list[tuple[int, dict[str, int]]]
"""Counts taken from a worker's clones: (position in `passes_in_order`, values)."""


def take_statistics(managers: Sequence[OpPassManager]) -> StatisticDeltas:
    """The non-zero statistics of `managers`' passes, resetting them to zero."""
    deltas: StatisticDeltas = []
    for position, pass_ in enumerate(passes_in_order(managers)):
        stats = statistics_of(type(pass_))
        if not stats:
            continue
        values = {
            s.attr: value for s in stats if (value := pass_.__dict__.pop(s.attr, 0))
        }
        if values:
            deltas.append((position, values))
    return deltas


class _Counts:
    """A bag of statistic values shaped like a pass for `add_statistics`."""

    def __init__(self, values: dict[str, int]) -> None:
        self.__dict__.update(values)


def add_statistic_deltas(
    managers: Sequence[OpPassManager], deltas: StatisticDeltas
) -> None:
    """Sum counts taken from a worker's clones into the original passes."""
    if not deltas:
        return
    passes = list(passes_in_order(managers))
    for position, values in deltas:
        add_statistics(passes[position], _Counts(values))


def replay_diagnostics(
    state: RunState, per_child: Sequence[Sequence[Diagnostic] | None]
) -> None:
    """Emit buffered diagnostics in child order, as a serial run would have."""
    for diagnostics in per_child:
        if diagnostics:
            for diagnostic in diagnostics:
                state.emit(diagnostic)


def child_error(child: Operation, message: str) -> Diagnostic:
    """An error at `child` about its pipeline (a worker that died or raised)."""
    from passflow.diagnostics import Severity

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


class ThreadExecutor(ChildExecutor):
    """MLIR's parallel adaptor on a thread pool.

    Each of `jobs` worker slots runs its own clone of the adaptor's pipelines;
    a task takes a free slot, runs the child's pipeline with diagnostics
    buffered, and gives the slot back. Analysis managers are made on the
    spawning thread, hooks receive `PipelineParentInfo(spawning thread, original
    adaptor)`, clone statistics are summed into the originals after every run and
    diagnostics are replayed in child order. Nested adaptors inside a worker run
    serially on that worker (no pool deadlock). Under the GIL this is about
    semantics, not speed: see `ProcessExecutor` for that.
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
        local = self._local

        def task(position: int) -> bool:
            local.busy = True
            slot = free.get()
            previous = state.begin_capture()
            try:
                index, child = items[position]
                return run_pipeline(
                    slots[slot][index], child, ams[position], state, work.parent_info
                )
            finally:
                diagnostics[position] = state.end_capture(previous)
                free.put(slot)
                local.busy = False

        pool = self._get_pool()
        futures: list[Future[bool]] = [
            pool.submit(task, position) for position in range(len(items))
        ]
        wait_futures(futures)
        for slot in slots[:count]:
            for original, clone in zip(work.adaptor.managers, slot, strict=True):
                merge_statistics(original, [clone])
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
