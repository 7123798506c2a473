"""The forked workers of one parallel run: every process pool passflow has.

A run that forks (a process executor's adaptor run, a sliced run) asks its
`ProcessExecutor` for a `ForkPool` and tells it what a worker runs. The pool
forks a worker only when its `WorkerLease` grants one (`passflow.executors.budget`:
`--jobs`, the CPUs, the cgroup quota, a make jobserver's tokens), gives the
worker's token back when it ends, and hands a worker at most `QUEUED` tasks at
a time (the one it runs and the next, one near the end of the run): on a
loaded machine a worker that is not scheduled holds two tasks, the parent runs
the rest itself, and the run costs about what a serial run costs.

Workers are forked (`multiprocessing`'s 'fork' context): they inherit the
parent's state, die with it (`lifetime.become_worker`) and read task numbers
from their pipe until told to stop (`None`) or the pipe closes.
"""

from __future__ import annotations

import multiprocessing
import os
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any, cast

from passflow.executors.budget import WorkerLease
from passflow.executors.lifetime import become_worker, stop_workers

__all__ = ["QUEUED", "ForkPool", "PoolWorker", "WorkerMain"]

QUEUED = 2
"""Tasks a worker holds at most: the one it runs and the next."""

WorkerMain = Callable[..., None]
"""What a worker runs once forked: `main(conn, *args)`, reading task numbers
from `conn` and answering each."""


@dataclass(eq=False)
class PoolWorker:
    """One forked worker: its process, its end of the pipe, the tasks sent to
    it and not answered yet (at most `QUEUED`), and when it started the first."""

    process: BaseProcess
    conn: Connection
    inflight: deque[int] = field(default_factory=lambda: deque[int]())
    started: float = 0.0


class ForkPool:
    """Forked workers running `main(conn, *args)`, as many as `lease` grants."""

    def __init__(
        self, lease: WorkerLease, main: WorkerMain, args: tuple[Any, ...], name: str
    ) -> None:
        self.lease = lease
        self.main = main
        self.args = args
        self.name = name
        self.workers: dict[Connection, PoolWorker] = {}
        self.forked = 0
        self._mp = multiprocessing.get_context("fork")

    def __len__(self) -> int:
        return len(self.workers)

    def __iter__(self) -> Iterator[PoolWorker]:
        return iter(list(self.workers.values()))

    def spawn(self) -> PoolWorker | None:
        """Fork one more worker if the lease grants it, else None."""
        if not self.lease.grow():
            return None
        try:
            parent_end, child_end = self._mp.Pipe(duplex=True)
            # The worker closes every parent-side end it inherits (its own
            # included), so the parent's death is an EOF it sees.
            inherited = [parent_end, *self.workers]
            process = self._mp.Process(
                target=_worker_entry,
                args=(child_end, inherited, os.getpid(), self.main, self.args),
                name=self.name,
            )
            process.start()
        except BaseException:
            self.lease.shrink()
            raise
        child_end.close()
        worker = PoolWorker(process, parent_end)
        self.workers[parent_end] = worker
        self.forked += 1
        return worker

    def fill(self, wanted: int) -> None:
        """Fork workers until there are `wanted` or the lease grants no more."""
        while len(self.workers) < wanted and self.spawn() is not None:
            pass

    def feed(self, worker: PoolWorker, pending: deque[int]) -> None:
        """Send `worker` pending tasks until it holds `QUEUED` of them, or one
        near the end of the run (no more pending tasks than the workers'
        queues hold), so that the last tasks go to whoever is free first.

        A worker's next task waits in its pipe while it runs one: the parent
        reads results and feeds workers only between tasks of its own, and a
        worker holding one task would wait for it to come back (measured: a
        sliced run's worker idle for a seventh of its time in one run)."""
        depth = QUEUED if len(pending) > QUEUED * (len(self.workers) + 1) else 1
        while len(worker.inflight) < depth and pending:
            task = pending.popleft()
            if not worker.inflight:
                worker.started = time.perf_counter()
            worker.inflight.append(task)
            try:
                worker.conn.send(task)
            except OSError:  # it died; its pipe tells the caller's next wait
                return

    def ready(self, timeout: float) -> list[PoolWorker]:
        """The workers with an answer (or a closed pipe), within `timeout` s."""
        found = wait(list(self.workers), timeout)
        return [self.workers[cast(Connection, conn)] for conn in found]

    def drop(self, worker: PoolWorker, grace: float) -> None:
        """Forget a worker that died or was killed; its token goes back."""
        if self.workers.pop(worker.conn, None) is None:
            return
        process = worker.process
        process.join(grace)
        if process.is_alive():
            process.kill()
            process.join()
        worker.conn.close()
        self.lease.shrink()

    def stop_all(self, grace: float) -> None:
        """Ask every worker to exit, kill those still running after `grace`
        s, and give every token back."""
        workers = list(self.workers.values())
        self.workers.clear()
        try:
            stop_workers(((w.process, w.conn) for w in workers), grace)
        finally:
            self.lease.close()


def _worker_entry(
    conn: Connection,
    inherited: list[Connection],
    parent: int,
    main: WorkerMain,
    args: tuple[Any, ...],
) -> None:
    become_worker(parent, inherited)
    main(conn, *args)
