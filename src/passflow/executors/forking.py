"""Forked worker processes that already hold the parsed module.

Under CPython's GIL only processes run Python passes in parallel, and the cost
of a process executor is moving IR: printing and re-parsing a 20-op function
takes longer than canonicalize + cse on it. So nothing is sent to the workers:
they are forked when the adaptor runs, after the parent parsed the module, and
find each child at the same address as in the parent. A worker is told only
the child's index; it runs the child's pipeline on its own clone of the
adaptor's pipelines and sends back the child's rewritten regions in
`transfer`'s compact encoding (nothing at all if the pipeline left the child
unchanged), with the child's diagnostics, the text it wrote to stdout/stderr
and its statistic effects. The parent splices each result into the child as it
arrives (its only serial work per child) and, while no result is waiting, runs
pending children itself (capturing the same): with `jobs` cores it forks
up to `jobs - 1` workers, as its pool's lease grants them (a make jobserver's
tokens; without `jobs`, a CPU free at that moment: `budget`), and is the last
job. A worker is given a child only when it has none. At the end it applies the statistic
effects to the original passes and replays diagnostics and output, in child
order, so that both read as after a serial run.

A worker that raises (IR that cannot be encoded), dies (killed, out of memory,
`os._exit`) or overruns `timeout` fails that child's pipeline with an error at
the child's location; the rest go to a replacement worker (or the parent), so
every other child completes and nothing waits forever on a dead process.

Workers live for one adaptor run: the module changes as results are spliced in,
and a fork costs little next to a pipeline over many children. The parent first
runs children itself for `serial_budget` seconds and forks only if the rest
would take more than twice that, so small inputs never pay for a fork.
Instrumented runs stay in the parent (hooks observe the parent's passes and
ops), as do nested adaptors inside a worker.

No dialect is preloaded for the workers: each loads what it needs into its own
copy of the context, and the parent decodes results on one thread, loading
lazily what it has not seen. (Preloading all of xDSL's dialects costs 1.3 s on a
fresh interpreter, more than most pipelines.)
"""

from __future__ import annotations

import functools
import gc
import os
import signal
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from passflow.analysis import AnalysisManager
from passflow.diagnostics import Diagnostic, PassflowError
from passflow.execution import ChildExecutor, ChildWork
from passflow.executors.budget import (
    ForkTimer,
    default_jobs,
    lease_workers,
    worker_available,
)
from passflow.executors.capture import reset_child_capture
from passflow.executors.child_run import (
    INTERRUPT_POLL,
    ChildOutcomes,
    ChildRaised,
    ChildResult,
    ExecutorProfile,
    PipelineStatistics,
    run_child,
)
from passflow.executors.transfer import (
    ChangeDetector,
    Decoder,
    Encoder,
    shared_candidates,
)

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from passflow.executors.pool import ForkPool, PoolWorker, WorkerMain

__all__ = ["DEFAULT_SERIAL_BUDGET", "ProcessExecutor", "can_fork"]

DEFAULT_SERIAL_BUDGET = 0.05
"""Seconds of children an adaptor runs in the parent before it forks workers.

Forking and warming up two workers costs about 30 ms here (copy-on-write page
faults as they first touch the interpreter and the module), so an adaptor whose
children all finish within this budget never forks and costs what a serial run
costs; a longer one loses at most this much of its parallel time."""

_EXIT_GRACE = 5.0  # seconds a worker whose pipe closed gets to finish exiting

_in_worker = False  # set in forked workers: nested adaptors run serially there


def can_fork() -> bool:
    """Whether this platform can fork workers (multiprocessing's 'fork' start
    method, which POSIX systems have), asked without importing multiprocessing:
    a run that stays within the serial budget never loads it."""
    return hasattr(os, "fork")


class ProcessExecutor(ChildExecutor):
    """Children on `jobs` processes: this one and `jobs - 1` forked workers
    (POSIX `fork` only).

    The parent is one of the jobs: between splicing results back it runs
    children itself, with the original passes, and those children cost no
    transfer at all. `parent_runs_children=False` leaves every child past the
    serial budget to `jobs` workers (the parent only splices).
    `serial_budget`: seconds of children the parent runs itself, in order,
    before forking for the rest (0: fork at once); it forks only if the rest,
    estimated from the children run so far, would take more than twice that,
    so small inputs never pay for a fork.
    `timeout`: seconds one child may take in a worker before the worker is
    killed and the child fails (None: no limit, as for a serial run; children
    the parent runs itself have none).
    `profile` accumulates where the time of forked runs went.
    """

    name = "process"

    def __init__(
        self,
        jobs: int | None = None,
        *,
        serial_budget: float = DEFAULT_SERIAL_BUDGET,
        timeout: float | None = None,
        parent_runs_children: bool = True,
    ) -> None:
        if not can_fork():
            raise PassflowError(
                "the process executor needs the 'fork' start method, which this "
                "platform lacks; use the thread executor or wrap a "
                "concurrent.futures executor"
            )
        self.jobs = jobs if jobs is not None else default_jobs()
        self.adaptive = jobs is None
        """No `jobs` given: fork only while the machine has a CPU to spare."""
        self.serial_budget = serial_budget
        self.timeout = timeout
        self.parent_runs_children = parent_runs_children
        self.profile = ExecutorProfile()

    @property
    def threading_disabled(self) -> bool:
        return self.jobs <= 1

    @property
    def workers(self) -> int:
        """How many worker processes a parallel run forks."""
        return self.jobs - 1 if self.parent_runs_children else self.jobs

    def run(self, work: ChildWork) -> bool:
        if self.jobs <= 1 or _in_worker or work.in_process_only:
            return work.run_serially()
        return _ForkedRun(self, work).run()

    def worker_available(self) -> bool:
        """Whether a run starting now could fork a worker (the lease of
        `pool`, asked without keeping what it grants)."""
        return worker_available(self.workers, adaptive=self.adaptive)

    def pool(self, main: WorkerMain, args: tuple[Any, ...], name: str) -> ForkPool:
        """A pool for one parallel run of `main(conn, *args)` workers: up to
        `workers`, within the make jobserver's free tokens and, without
        `jobs`, the machine's spare CPUs (`passflow.executors.budget`). The adaptor's runs and sliced runs
        both fork through it."""
        # The forking machinery (multiprocessing, its pipes) loads at the first
        # fork: a run within the serial budget never needs it.
        from passflow.executors.pool import ForkPool

        lease = lease_workers(self.workers, adaptive=self.adaptive)
        return ForkPool(lease, main, args, name)


class _ForkedRun:
    """One adaptor run on forked workers (the parent's side)."""

    def __init__(self, executor: ProcessExecutor, work: ChildWork) -> None:
        self.executor = executor
        self.work = work
        self.outcomes: ChildOutcomes  # made when it forks
        self.pending: deque[int] = deque()
        self.remaining = 0
        self.decoders: dict[PoolWorker, Decoder] = {}
        self.profile = ExecutorProfile(runs=1)
        self.ams: list[AnalysisManager] = []
        self.shared: list[object] = []
        """What the workers' results may refer to by index (`transfer`), found
        when they are forked: a run that never forks never looks."""

    def run(self) -> bool:
        """Run the children as a serial run does (on this thread, in order,
        nothing captured) until forking for the rest pays and a worker is free
        now (`ProcessExecutor.worker_available`), then fork for the rest. With
        no worker free (a loaded machine, no jobserver token) it looks again
        later (`budget.ForkTimer`), and a run that never gets one costs what
        the serial run costs."""
        work = self.work
        executor = self.executor
        count = len(work.items)
        timer = ForkTimer(executor.serial_budget, executor.worker_available)
        ok = True
        for position in range(count):
            if timer.fork_now(count - position):
                return self._fork_for(position) and ok
            if not work.run_item(position):
                ok = False
            timer.done += 1
        return ok

    def _run_here(self, position: int) -> None:
        """Run child `position` in this process, with the original passes."""
        self.outcomes.run_here(position)

    def _fork_for(self, first: int) -> bool:
        """Fork workers and run children `first`... on them and, between
        splicing their results, here; whether all of them succeeded."""
        start = time.perf_counter()
        waited = 0.0
        here = 0.0
        self.outcomes = ChildOutcomes(self.work, first)
        # Made on the spawning thread (MLIR's prepass); the workers inherit them
        # (handles: a child's map is made where a pass first asks it an analysis).
        self.ams = [self.work.am.nest(child) for _, child in self.work.items]
        self.shared = shared_candidates([child for _, child in self.work.items])
        self.pending.extend(range(first, len(self.work.items)))
        self.remaining = len(self.pending)
        self.profile.children = self.remaining
        self.wanted = wanted = min(self.executor.workers, self.remaining)
        self.pool = self.executor.pool(
            _worker_main, (self.work, self.ams, self.shared), "passflow-worker"
        )
        gc_enabled = gc.isenabled()
        # No collections while splicing (they would rescan the whole module), and
        # the module frozen out of the workers' collections (no copy-on-write).
        gc.disable()
        gc.freeze()
        stopped = False
        try:
            self._grow(wanted)
            while self.remaining:
                # The parent runs children when it may, or when no worker was
                # granted (a jobserver without a free token).
                parent_runs = self.executor.parent_runs_children or not self.pool
                run_one = parent_runs and bool(self.pending)
                if self.pool:
                    # Results first, so that workers never starve while we run one.
                    before = time.perf_counter()
                    ready = self.pool.ready(0.0 if run_one else self._wait_limit())
                    if not run_one:
                        waited += time.perf_counter() - before
                    for worker in ready:
                        if worker.conn in self.pool.workers:
                            self._read(worker)
                    if ready:
                        continue
                    self._kill_overdue()
                if not run_one:
                    continue
                before = time.perf_counter()
                self._run_here(self.pending.popleft())
                self.remaining -= 1
                self.profile.in_parent += 1
                here += time.perf_counter() - before
                if self.pending and len(self.pool) < wanted:
                    self._grow(wanted)  # a token may have come free
        except BaseException:  # an interrupt (or a bug): no grace for the workers
            self.pool.stop_all(grace=0.0)
            stopped = True
            raise
        finally:
            if not stopped:
                self.pool.stop_all(_EXIT_GRACE)
            gc.unfreeze()
            if gc_enabled:
                gc.enable()
        self.profile.wall = time.perf_counter() - start
        self.profile.parent_work = here
        self.profile.parent_busy = self.profile.wall - waited - here
        self.executor.profile.add(self.profile)
        return self.outcomes.finish()

    # --- workers ------------------------------------------------------------

    def _grow(self, wanted: int) -> None:
        """Fork workers up to `wanted`, as the pool's lease allows, and give
        each new one a child."""
        while len(self.pool) < wanted and self.pending:
            worker = self.pool.spawn()
            if worker is None:
                return
            self.decoders[worker] = Decoder(self.work.state.context, self.shared)
            self.pool.feed(worker, self.pending)

    def _read(self, worker: PoolWorker) -> None:
        try:
            data = worker.conn.recv_bytes()
        except (EOFError, OSError):
            self._lost(worker, None)
            return
        message = self.decoders[worker].loads(data)
        if not isinstance(message, ChildResult | ChildRaised):
            raise PassflowError(f"worker {worker.process.pid} sent {message!r}")
        index = message.position
        if not worker.inflight or worker.inflight[0] != index:
            raise PassflowError(f"worker {worker.process.pid} answered out of turn")
        worker.inflight.popleft()
        worker.started = time.perf_counter()
        if isinstance(message, ChildResult):
            self._done(worker, message)
        else:
            self._fail(
                index,
                message.diagnostics,
                f"worker process {worker.process.pid} raised {message.error} while "
                f"running '{self.work.pipeline_text(index)}' on this op",
            )
        self.pool.feed(worker, self.pending)

    def _done(self, worker: PoolWorker, result: ChildResult) -> None:
        self.profile.worker_busy += result.seconds
        if result.rewritten is not None:
            header, regions = result.rewritten
            try:
                self.decoders[worker].splice(
                    self.work.items[result.position][1], header, regions
                )
            except Exception as err:
                self._fail(
                    result.position,
                    result.diagnostics,
                    f"the result of worker process {worker.process.pid} could not "
                    f"be spliced back ({type(err).__name__}: {err})",
                )
                return
            self.profile.shipped += 1
        self.outcomes.record(result)
        self.remaining -= 1

    def _fail(self, index: int, diagnostics: list[Diagnostic], message: str) -> None:
        self.outcomes.fail(index, diagnostics, message)
        self.remaining -= 1

    def _lost(self, worker: PoolWorker, reason: str | None) -> None:
        """A worker died: its current child fails, the rest go elsewhere
        (a replacement, if the lease grants one, or this process)."""
        self.pool.drop(worker, _EXIT_GRACE)
        self.decoders.pop(worker, None)
        process = worker.process
        if reason is None:
            code = process.exitcode
            if code is not None and code < 0:
                reason = f"killed by signal {signal.Signals(-code).name}"
            else:
                reason = f"exit code {code}"
        if worker.inflight:
            index = worker.inflight.popleft()
            self._fail(
                index,
                [],
                f"worker process {process.pid} died ({reason}) while running "
                f"'{self.work.pipeline_text(index)}' on this op",
            )
            self.pending.extendleft(reversed(worker.inflight))
        self._grow(self.wanted)

    def _wait_limit(self) -> float:
        """How long to wait for a result: until the next deadline, and never
        longer than `INTERRUPT_POLL`."""
        deadline = self._time_to_deadline()
        return INTERRUPT_POLL if deadline is None else min(deadline, INTERRUPT_POLL)

    def _time_to_deadline(self) -> float | None:
        limit = self.executor.timeout
        if limit is None:
            return None
        busy = [w.started for w in self.pool if w.inflight]
        if not busy:
            return None
        return max(0.0, min(busy) + limit - time.perf_counter())

    def _kill_overdue(self) -> None:
        limit = self.executor.timeout
        if limit is None:
            return
        now = time.perf_counter()
        for worker in self.pool:
            if worker.inflight and now - worker.started >= limit:
                worker.process.kill()
                self._lost(worker, f"timed out after {limit:g} s")


def _worker_main(
    conn: Connection,
    work: ChildWork,
    ams: list[AnalysisManager],
    shared: list[object],
) -> None:
    """A worker's loop: run the child it is told, send back what changed."""
    global _in_worker
    _in_worker = True
    gc.enable()  # the inherited module is frozen: collections only see new objects
    reset_child_capture()  # the parent may have forked inside a child's capture
    pipelines = [pm.clone() for pm in work.pipelines]
    statistics = PipelineStatistics(pipelines)
    encoder = Encoder(shared)
    changes = ChangeDetector()
    while True:
        try:
            index = conn.recv()
        except EOFError:  # the parent is gone
            return
        if not isinstance(index, int):
            return
        result = run_child(
            index,
            work.items[index][1],
            functools.partial(work.run_item, index, ams[index], pipelines),
            work.state,
            statistics,
            encoder=encoder,
            changes=changes,
            contain_errors=True,
        )
        try:
            data = encoder.dumps(result)
        except Exception as err:  # a result that cannot be pickled
            data = encoder.dumps(ChildRaised(index, [], f"{type(err).__name__}: {err}"))
        conn.send_bytes(data)
