"""MLIR's threaded adaptor, clone for clone, on a thread pool.

Under CPython's GIL it gives MLIR's semantics (per-worker pass clones, thread
ids in `PipelineParentInfo`, hooks from worker threads) but no speedup: see
`passflow.executors.forking` for that.
"""

from __future__ import annotations

import queue
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures

from passflow import ir
from passflow.execution import ChildExecutor, ChildWork
from passflow.executors.budget import default_jobs
from passflow.executors.child_run import (
    INTERRUPT_POLL,
    ChildOutcomes,
    PipelineStatistics,
    run_child,
)
from passflow.pass_base import Pass, PassPipeline, pipeline_identity

__all__ = ["ThreadExecutor"]


class _WorkerClones:
    """Per adaptor, one copy of its pipelines for each worker slot.

    Made on first parallel run and reused while the adaptor's pipelines are the
    same passes with the same options; the originals never run in parallel mode.
    """

    def __init__(self) -> None:
        self._by_adaptor: weakref.WeakKeyDictionary[
            Pass, tuple[object, list[list[PassPipeline]]]
        ] = weakref.WeakKeyDictionary()

    def slots(self, work: ChildWork, count: int) -> list[list[PassPipeline]]:
        key = pipeline_identity(work.pipelines)
        found = self._by_adaptor.get(work.adaptor)
        if found is not None and found[0] == key and len(found[1]) >= count:
            return found[1]
        slots = [[pm.clone() for pm in work.pipelines] for _ in range(count)]
        self._by_adaptor[work.adaptor] = (key, slots)
        return slots


class ThreadExecutor(ChildExecutor):
    """MLIR's parallel adaptor on a thread pool.

    Each of `jobs` worker slots runs its own clone of the adaptor's pipelines;
    a task takes a free slot, runs the child's pipeline with diagnostics and
    output buffered and statistics counted, and gives the slot back. Analysis
    managers are made on the spawning thread, hooks receive
    `PipelineParentInfo(spawning thread, original adaptor)`; once every child is
    done, their statistic effects are applied to the originals and their
    diagnostics and output replayed, in child order. Nested adaptors inside a
    worker run serially on that worker (no pool deadlock).
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

    @property
    def threading_disabled(self) -> bool:
        return self.jobs <= 1

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
        ir.preload_dialects(work.state.context)
        items = work.items
        count = min(self.jobs, len(items))
        slots = self._clones.slots(work, count)
        free: queue.SimpleQueue[int] = queue.SimpleQueue()
        for slot in range(count):
            free.put(slot)
        ams = [work.am.nest(child) for _, child in items]
        counts = [PipelineStatistics(slot) for slot in slots[:count]]
        outcomes = ChildOutcomes(work)
        local = self._local

        def task(position: int) -> None:
            local.busy = True
            slot = free.get()
            try:
                outcomes.record(
                    run_child(
                        position,
                        items[position][1],
                        lambda: work.run_item(position, ams[position], slots[slot]),
                        work.state,
                        counts[slot],
                    )
                )
            finally:
                free.put(slot)
                local.busy = False

        pool = self._get_pool()
        futures: list[Future[None]] = [
            pool.submit(task, position) for position in range(len(items))
        ]
        try:
            while wait_futures(futures, timeout=INTERRUPT_POLL).not_done:
                pass
        except BaseException:  # an interrupt: children not started never start
            for future in futures:
                future.cancel()
            raise
        ok = outcomes.finish()
        for future in futures:
            error = future.exception()
            if error is not None:  # an instrumentation raised: the run aborts
                raise error
        return ok

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None and self._owns_pool:
            pool.shutdown(wait=True)
