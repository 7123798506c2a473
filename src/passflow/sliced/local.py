"""A sliced run on this machine: the parent and the workers its process
executor's pool grants (`passflow.executors.pool`: up to `jobs - 1`, within a
make jobserver's tokens).

Workers are forked after the scan and the shell: they inherit the text, the
plan and the pass manager, and are told batch numbers, one at a time. The
parent is one of the jobs, as in the process executor: it runs batches itself
for the executor's serial budget and forks only if the rest would take more
than twice that and a worker is free now (`budget.ForkTimer`, the rule the
adaptor's process runs follow too); without one it goes on alone, asking again
now and then, and makes no pool. Once forked, it runs a batch whenever no
worker result is waiting.
"""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING

from passflow.executors.budget import ForkTimer
from passflow.executors.child_run import INTERRUPT_POLL
from passflow.executors.forking import ProcessExecutor
from passflow.sliced.batch import BatchResult, BatchRunner
from passflow.sliced.plan import SlicePlan
from passflow.sliced.profile import SlicedProfile

if TYPE_CHECKING:  # the pool loads when the run forks (executor.pool)
    from multiprocessing.connection import Connection

    from passflow.executors.pool import ForkPool, PoolWorker

__all__ = ["run_local"]

_EXIT_GRACE = 1.0  # seconds a worker told to stop gets to exit


def run_batch(plan: SlicePlan, runner: BatchRunner, batch: int) -> BatchResult:
    """Batch `batch` of `plan`, run here."""
    return runner.run(
        batch,
        plan.own(batch),
        plan.references(batch),
        plan.watched,
        separately=plan.separately,
    )


def run_local(
    plan: SlicePlan,
    runner: BatchRunner,
    executor: ProcessExecutor | None,
    profile: SlicedProfile,
) -> list[BatchResult]:
    """Every batch's result in order, or the first that asks for a fallback:
    in this process alone without an `executor`, else here and in the
    workers of its pool. `profile` learns how many workers were forked and
    where the parent's time went."""
    return _LocalRun(plan, runner, executor, profile).run()


class _LocalRun:
    def __init__(
        self,
        plan: SlicePlan,
        runner: BatchRunner,
        executor: ProcessExecutor | None,
        profile: SlicedProfile,
    ) -> None:
        self.plan = plan
        self.runner = runner
        self.executor = executor
        self.profile = profile
        self.results: dict[int, BatchResult] = {}
        self.pending: deque[int] = deque(range(len(plan.batches)))
        self.fallback: BatchResult | None = None

    def run(self) -> list[BatchResult]:
        """Run batches here until forking for the rest pays and a worker is
        free now (`ProcessExecutor.worker_available`), then fork for the rest.
        With no worker free it looks again later (`budget.ForkTimer`): a run
        that never gets one makes no pool and forks nothing."""
        executor = self.executor
        timer: ForkTimer | None = None
        if executor is not None and executor.workers > 0:
            timer = ForkTimer(executor.serial_budget, executor.worker_available)
        while self.pending:
            if (
                timer is not None
                and executor is not None
                and timer.fork_now(len(self.pending))
            ):
                self._parallel(executor)
                return self._ordered()
            if not self._run_here():
                break
            if timer is not None:
                timer.done += 1
        return self._ordered()

    def _ordered(self) -> list[BatchResult]:
        if self.fallback is not None:
            return [self.fallback]
        return [self.results[i] for i in range(len(self.plan.batches))]

    def _run_here(self) -> bool:
        batch = self.pending.popleft()
        start = time.perf_counter()
        result = run_batch(self.plan, self.runner, batch)
        self.profile.here += time.perf_counter() - start
        self.profile.in_parent += 1
        return self._record(result)

    def _record(self, result: BatchResult) -> bool:
        if result.fallback is not None:
            self.fallback = result
            return False
        self.results[result.batch] = result
        return True

    def _parallel(self, executor: ProcessExecutor) -> None:
        pool = executor.pool(
            _worker_main, (self.plan, self.runner), "passflow-slice-worker"
        )
        self.wanted = min(executor.workers, len(self.pending))
        try:
            self._grow(pool)
            self._collect(pool)
        except BaseException:  # an interrupt (or a bug): no grace for the workers
            pool.stop_all(grace=0.0)
            raise
        finally:
            self.profile.workers += pool.forked
        pool.stop_all(grace=0.0 if self.fallback is not None else _EXIT_GRACE)

    def _grow(self, pool: ForkPool) -> None:
        """Fork workers up to `wanted` as the pool's lease allows, each given
        a batch."""
        while len(pool) < self.wanted and self.pending:
            worker = pool.spawn()
            if worker is None:
                return
            pool.feed(worker, self.pending)

    def _collect(self, pool: ForkPool) -> None:
        """Read results and run batches here until every batch is done or one
        asks for a fallback."""
        while len(self.results) < len(self.plan.batches):
            before = time.perf_counter()
            ready = pool.ready(0.0 if self.pending else INTERRUPT_POLL)
            if not self.pending:
                self.profile.waited += time.perf_counter() - before
            for worker in ready:
                if not self._read(pool, worker):
                    return
            if ready:
                continue
            if self.pending:
                if not self._run_here():
                    return
                if len(pool) < self.wanted:
                    self._grow(pool)  # a token may have come free

    def _read(self, pool: ForkPool, worker: PoolWorker) -> bool:
        try:
            result = worker.conn.recv()
        except (EOFError, OSError):
            code = worker.process.exitcode
            self.fallback = BatchResult(
                worker.inflight[0] if worker.inflight else -1,
                fallback=f"worker process {worker.process.pid} died (exit code {code})",
            )
            return False
        if not isinstance(result, BatchResult) or not worker.inflight:
            self.fallback = BatchResult(-1, fallback=f"a worker sent {result!r}")
            return False
        worker.inflight.popleft()
        if not self._record(result):
            return False
        pool.feed(worker, self.pending)
        return True


def _worker_main(conn: Connection, plan: SlicePlan, runner: BatchRunner) -> None:
    """A worker's loop: run the batch it is told, send back its result."""
    runner.ship = True
    while True:
        try:
            batch = conn.recv()
        except EOFError:  # the parent is gone
            return
        if not isinstance(batch, int):
            return
        conn.send(run_batch(plan, runner, batch))
