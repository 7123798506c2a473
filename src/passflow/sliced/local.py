"""A sliced run on this machine: the parent and `jobs - 1` forked workers.

Workers are forked after the scan, before anything is parsed: they inherit the
text, the plan and the pass manager, and are told batch numbers. The parent
is one of the jobs, as in the process executor: it runs batches itself for
`serial_budget` seconds and forks only if the rest would take more than twice
that, and afterwards runs a batch whenever no worker result is waiting.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import deque
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import cast

from passflow.executors.child_run import INTERRUPT_POLL
from passflow.executors.forking import DEFAULT_SERIAL_BUDGET
from passflow.executors.lifetime import become_worker, stop_workers
from passflow.sliced.batch import BatchResult, BatchRunner
from passflow.sliced.plan import SlicePlan
from passflow.sliced.profile import SlicedProfile

__all__ = ["run_local"]

_FORK_PAYS = 2.0  # fork when the rest would take this many serial budgets
_PREFETCH = 2  # batches queued per worker
_EXIT_GRACE = 1.0  # seconds a worker told to stop gets to exit


@dataclass(eq=False)
class _Worker:
    process: BaseProcess
    conn: Connection
    inflight: deque[int] = field(default_factory=lambda: deque[int]())


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
    jobs: int,
    profile: SlicedProfile,
    *,
    serial_budget: float = DEFAULT_SERIAL_BUDGET,
) -> list[BatchResult]:
    """Every batch's result in order, or the first that asks for a fallback;
    `profile` learns how many workers were forked and where the parent's time
    went."""
    return _LocalRun(plan, runner, jobs, profile).run(serial_budget)


class _LocalRun:
    def __init__(
        self, plan: SlicePlan, runner: BatchRunner, jobs: int, profile: SlicedProfile
    ) -> None:
        self.plan = plan
        self.runner = runner
        self.jobs = jobs
        self.profile = profile
        self.results: dict[int, BatchResult] = {}
        self.pending: deque[int] = deque(range(len(plan.batches)))
        self.workers: dict[Connection, _Worker] = {}
        self.fallback: BatchResult | None = None

    def run(self, budget: float) -> list[BatchResult]:
        start = time.perf_counter()
        done = 0
        while self.pending and time.perf_counter() - start < budget:
            if not self._run_here():
                return self._ordered()
            done += 1
        if self.pending and self.jobs > 1:
            spent = time.perf_counter() - start
            if spent / max(done, 1) * len(self.pending) >= _FORK_PAYS * budget:
                self._parallel()
                return self._ordered()
        while self.pending:
            if not self._run_here():
                break
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

    def _parallel(self) -> None:
        try:
            for _ in range(self.jobs - 1):
                self._spawn()
            self._collect()
        except BaseException:  # an interrupt (or a bug): no grace for the workers
            self._stop_all(grace=0.0)
            raise
        self._stop_all(grace=0.0 if self.fallback is not None else _EXIT_GRACE)

    def _collect(self) -> None:
        """Read results and run batches here until every batch is done or one
        asks for a fallback."""
        while len(self.results) < len(self.plan.batches):
            before = time.perf_counter()
            ready = wait(list(self.workers), 0.0 if self.pending else INTERRUPT_POLL)
            if not self.pending:
                self.profile.waited += time.perf_counter() - before
            for conn in ready:
                if not self._read(self.workers[cast(Connection, conn)]):
                    return
            if ready:
                continue
            if self.pending and not self._run_here():
                return

    def _spawn(self) -> None:
        mp = multiprocessing.get_context("fork")
        parent_end, child_end = mp.Pipe(duplex=True)
        inherited = [parent_end, *self.workers]
        process = mp.Process(
            target=_worker_main,
            args=(child_end, inherited, os.getpid(), self.plan, self.runner),
            name="passflow-slice-worker",
        )
        process.start()
        child_end.close()
        self.profile.workers += 1
        worker = _Worker(process, parent_end)
        self.workers[parent_end] = worker
        self._feed(worker)

    def _feed(self, worker: _Worker) -> None:
        while len(worker.inflight) < _PREFETCH and self.pending:
            batch = self.pending.popleft()
            worker.inflight.append(batch)
            try:
                worker.conn.send(batch)
            except OSError:  # it died; its pipe tells the main loop
                return

    def _read(self, worker: _Worker) -> bool:
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
        self._feed(worker)
        return True

    def _stop_all(self, grace: float) -> None:
        """Ask every worker to exit; kill those still running after `grace` s."""
        workers = list(self.workers.values())
        self.workers.clear()
        stop_workers(((w.process, w.conn) for w in workers), grace)


def _worker_main(
    conn: Connection,
    inherited: list[Connection],
    parent: int,
    plan: SlicePlan,
    runner: BatchRunner,
) -> None:
    """A worker's loop: run the batch it is told, send back its result."""
    become_worker(parent, inherited)
    runner.ship = True
    while True:
        try:
            batch = conn.recv()
        except EOFError:  # the parent is gone
            return
        if not isinstance(batch, int):
            return
        conn.send(run_batch(plan, runner, batch))
