"""A sliced run on any `concurrent.futures.Executor` (a Dask cluster, a process
pool): batches go out as text and come back as text, or as encoded IR when
passes follow the nested pipelines.

Each task carries its pieces' text (and the text of the pieces they reference),
the module's shell and the pipeline as text; the worker parses them, runs the
pipeline, prints the result and sends back a `BatchResult`. A worker keeps one
`BatchRunner` per run (same pipeline, shell and settings), so the shell, the
aliases and the pipeline are parsed once per worker.

What the executor pickles (Dask with cloudpickle, a process pool with pickle):

* **To a worker**, per task: the task function, `run_shipped_batch`, by
  reference (its module is imported there); a `ShippedSpec` — the pipeline's
  text, the file's name, the shell's text and the line it starts on, four
  flags (unregistered ops, generic printing, pass errors, `keep_ops`), the
  run's `context_factory` if it has one (a module-level function, by
  reference), and the plugins the parent loaded (their module names or file
  paths, `registry.loaded_plugins`); a `ShippedBatch` — the batch's number, the text of its pieces
  and of the pieces they reference, with their indices and first lines. No IR and no pass objects: the worker parses the text and rebuilds
  the pass manager from the pipeline's text, after loading the same plugins.
* **Back**, per task: a `BatchResult` — the diagnostics (`Diagnostic`:
  severity, message, file, line, column, notes) and the text the passes wrote
  (`CapturedOutput`), in order; the batch's ops printed, as text; their symbol
  names before and after the run and the printed headers of the referenced
  ops; a fallback reason, or the exception of a task that failed. When passes
  follow the nested pipelines (`keep_ops`) the ops come back instead as
  `encoded`: `passflow.executors.transfer`'s encoding of them, bytes that the
  parent unpickles (`pickle.loads`: xDSL attribute objects and tuples of ints
  and strings) and decodes into ops, looking their classes up by name in its
  own context.

Unpickling a result can run code in the parent, as with any Dask client: a
run trusts whatever runs its tasks (SECURITY.md).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, CancelledError, Executor, Future
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass

from passflow import ir, registry
from passflow.executors.child_run import INTERRUPT_POLL
from passflow.ir import Context
from passflow.manager import Nesting
from passflow.pass_manager import PassManager
from passflow.pipeline_text import parse_pass_pipeline
from passflow.sliced.batch import BatchResult, BatchRunner
from passflow.sliced.outcome import ExecutorLostError
from passflow.sliced.plan import RemoteRun, SlicePlan
from passflow.sliced.scan import PieceText

__all__ = [
    "ExecutorLostError",
    "ShippedBatch",
    "ShippedSpec",
    "run_shipped_batch",
    "shipped_runner",
]

ContextFactory = Callable[[], Context]


_IN_FLIGHT_PER_JOB = 3  # tasks queued per job, so no worker waits for the next


@dataclass(frozen=True)
class ShippedSpec:
    """What every batch of one run shares: the pipeline (as text), the file's
    name, the module's shell and how to parse and print."""

    pipeline: str
    name: str
    shell: PieceText
    allow_unregistered: bool
    generic: bool
    emit_pass_errors: bool
    keep_ops: bool = False
    context_factory: ContextFactory | None = None
    plugins: tuple[tuple[str, str], ...] = ()
    """The plugins the parent loaded (spec, title): a worker loads the same."""
    history: bool = False
    """The run records an IR history: each batch sends its records back."""


@dataclass(frozen=True)
class ShippedBatch:
    """One batch: its pieces and the pieces they reference, as text."""

    batch: int
    own: list[tuple[int, PieceText]]
    references: list[tuple[int, PieceText]]
    watched: frozenset[int]
    separately: bool = False


_idle: dict[ShippedSpec, list[BatchRunner]] = {}
"""This worker's runners not running a batch now, for the run it serves last."""
_idle_lock = threading.Lock()


def _new_runner(spec: ShippedSpec) -> BatchRunner:
    for plugin, title in spec.plugins:
        registry.load_plugin(plugin, title)
    context = (
        spec.context_factory()
        if spec.context_factory is not None
        else ir.default_context(allow_unregistered=spec.allow_unregistered)
    )
    pm = PassManager("builtin.module", context, nesting=Nesting.IMPLICIT)
    pm.assign(parse_pass_pipeline(spec.pipeline))
    pm.enable_emit_pass_error_on_failure(spec.emit_pass_errors)
    if spec.history:  # recorded per batch, never written here (`take_batch`)
        from passflow.instruments.ir_history import IRHistory  # asked for

        pm.enable_ir_history(IRHistory(""))
    runner = BatchRunner(pm, spec.shell, spec.name, generic=spec.generic)
    runner.keep_ops = spec.keep_ops
    runner.ship = True
    gc.freeze()  # each batch collects its garbage: only the new objects
    return runner


def run_shipped_batch(spec: ShippedSpec, batch: ShippedBatch) -> BatchResult:
    """A task: run one batch in the worker that received it, with a runner of
    this run's (made on the worker's first batch of the run, then reused by
    whichever thread runs the next)."""
    with _idle_lock:
        if spec not in _idle:
            _idle.clear()  # a new run: the last one's runners go
        idle = _idle.setdefault(spec, [])
        runner = idle.pop() if idle else None
    if runner is None:
        try:
            runner = _new_runner(spec)
        except Exception as err:  # the worker cannot rebuild the run: run it whole
            return BatchResult(batch.batch, fallback=f"{type(err).__name__}: {err}")
    try:
        return runner.run(
            batch.batch,
            batch.own,
            batch.references,
            batch.watched,
            separately=batch.separately,
        )
    finally:
        with _idle_lock:
            _idle.setdefault(spec, []).append(runner)


def shipped_runner(
    executor: Executor,
    jobs: int,
    *,
    allow_unregistered: bool,
    context_factory: ContextFactory | None = None,
) -> RemoteRun:
    """Run a plan's batches as tasks of `executor` (`run_sliced(remote=)`)."""

    def remote(plan: SlicePlan, runner: BatchRunner) -> list[BatchResult]:
        spec = ShippedSpec(
            str(runner.pm),
            runner.name,
            plan.slices.shell_text,
            allow_unregistered,
            runner.generic,
            runner.pm.emit_pass_error_on_failure,
            runner.keep_ops,
            context_factory,
            tuple(registry.loaded_plugins().items()),
            runner.history is not None,
        )
        return _collect(executor, spec, plan, jobs * _IN_FLIGHT_PER_JOB)

    return remote


def _collect(
    executor: Executor, spec: ShippedSpec, plan: SlicePlan, in_flight: int
) -> list[BatchResult]:
    results: dict[int, BatchResult] = {}
    waiting: set[Future[BatchResult]] = set()
    next_batch = 0
    count = len(plan.batches)
    try:
        while len(results) < count:
            while next_batch < count and len(waiting) < in_flight:
                span = plan.batches[next_batch]
                shipped = ShippedBatch(
                    next_batch,
                    plan.own(next_batch),
                    plan.references(next_batch),
                    frozenset(i for i in span if i in plan.watched),
                    plan.separately,
                )
                try:
                    waiting.add(executor.submit(run_shipped_batch, spec, shipped))
                except RuntimeError as err:  # shut down (`cannot schedule ...`)
                    raise ExecutorLostError(
                        f"the executor refused the run's tasks: {err}"
                    ) from None
                next_batch += 1
            done, waiting = wait_futures(
                waiting, INTERRUPT_POLL, return_when=FIRST_COMPLETED
            )
            for future in done:
                try:
                    result = future.result()
                except CancelledError:  # the executor shut down under us
                    raise ExecutorLostError(
                        "the executor cancelled the run's tasks: its scheduler or "
                        "pool went away"
                    ) from None
                except Exception as err:  # a worker died: the parent runs it whole
                    return [BatchResult(-1, fallback=f"{type(err).__name__}: {err}")]
                if result.fallback is not None:
                    return [result]
                results[result.batch] = result
    finally:
        for future in waiting:
            future.cancel()
    return [results[i] for i in range(count)]
