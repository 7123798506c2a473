"""Children shipped to any `concurrent.futures.Executor` and back.

For an executor whose workers do not share this process's memory (a
`ProcessPoolExecutor`, Dask's `client.get_executor()`), children travel both
ways in `transfer`'s compact encoding, in contiguous chunks (`chunks_per_job` per
worker) so that per-task overhead is paid a few times, not once per child. Each
chunk carries its children inside a shell of their parent op (its name,
properties and attributes, none of its other children) so a pass that reads its
parent's attributes sees them. The pipeline travels pickled once per task: its
pass classes must be importable on the workers (xDSL's passes, adapted by name,
are); every worker thread unpickles it once and keeps that copy — its clone —
while the pipeline is unchanged. Diagnostics and the text children write to
stdout/stderr come back per child and are replayed in child order; statistics
come back as each child's effects and are applied to the original passes in
child order, so that both read as after a serial run.

A chunk whose task fails (the worker died, the pool broke, a result could not be
pickled) is retried one child per task, so a failure costs one child: that child
fails with an error at its location, every other child completes.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from xdsl.ir import Block, Region

from passflow import ir
from passflow.analysis import AnalysisManager
from passflow.diagnostics import Diagnostic, DiagnosticEngine
from passflow.execution import (
    ChildExecutor,
    ChildWork,
    ExecutorProfile,
    PipelineStatistics,
    StatisticDeltas,
    begin_child_capture,
    child_error,
    default_jobs,
    end_child_capture,
    in_process_only,
    passes_in_order,
    replay_diagnostics,
)
from passflow.executors.transfer import (
    ChangeDetector,
    Decoder,
    Encoder,
    TransferError,
)
from passflow.ir import Context, Operation
from passflow.remarks import RemarkCategories, RemarkEngine

if TYPE_CHECKING:
    from passflow.manager import OpPassManager, OpToOpPassAdaptor

__all__ = ["ShippingExecutor"]

ContextFactory = Callable[[], Context]
"""Makes a worker's context; must be picklable (a module-level function)."""


class ShippingExecutor(ChildExecutor):
    """Children of an adaptor run as tasks of `executor`, wherever it runs them.

    `jobs` (default: this machine's cores) is the parallelism to plan chunks for;
    `context_factory` builds the context workers decode IR in (default: every
    xDSL dialect, unregistered ops allowed if the run's context allows them);
    it is how dialects of your own reach the workers. Fewer children than
    `min_children` run serially here. The executor is the caller's: `close()`
    leaves it running.
    """

    name = "futures"

    def __init__(
        self,
        executor: Executor,
        *,
        jobs: int | None = None,
        chunks_per_job: int = 4,
        min_children: int = 2,
        context_factory: ContextFactory | None = None,
    ) -> None:
        self.executor = executor
        self.jobs = jobs if jobs is not None else default_jobs()
        self.chunks_per_job = chunks_per_job
        self.min_children = min_children
        self.context_factory = context_factory
        self.profile = ExecutorProfile()
        self._pipelines: weakref.WeakKeyDictionary[
            OpToOpPassAdaptor, tuple[object, bytes]
        ] = weakref.WeakKeyDictionary()

    def run(self, work: ChildWork) -> bool:
        if len(work.items) < max(2, self.min_children) or in_process_only(work):
            return work.run_serially()
        return _ShippedRun(self, work).run()

    def pipeline_bytes(self, adaptor: OpToOpPassAdaptor) -> bytes:
        """The adaptor's pipelines, cloned and pickled (cached while unchanged)."""
        key = (tuple(id(p) for p in passes_in_order(adaptor.managers)), str(adaptor))
        found = self._pipelines.get(adaptor)
        if found is not None and found[0] == key:
            return found[1]
        stream = io.BytesIO()
        _PipelinePickler(stream).dump([pm.clone() for pm in adaptor.managers])
        data = stream.getvalue()
        self._pipelines[adaptor] = (key, data)
        return data


class _PipelinePickler(pickle.Pickler):
    """Pickles passes; xDSL's adapted passes (classes made at lookup) by name."""

    def __init__(self, stream: io.BytesIO) -> None:
        super().__init__(stream, pickle.HIGHEST_PROTOCOL)

    def reducer_override(self, obj: Any) -> Any:
        from passflow.xdsl_passes import XDSLPass, adapter_for

        if (
            isinstance(obj, type)
            and issubclass(obj, XDSLPass)
            and adapter_for(obj.argument) is obj
        ):
            return (adapter_for, (obj.argument,))
        return NotImplemented


@dataclass(eq=False)
class _Chunk:
    positions: list[int]
    shared: list[object]  # the parent's objects, at the indices the task uses


class _ShippedRun:
    """One adaptor run on a futures executor (the parent's side)."""

    def __init__(self, executor: ShippingExecutor, work: ChildWork) -> None:
        self.executor = executor
        self.work = work
        count = len(work.items)
        self.ok = [False] * count
        self.diagnostics: list[list[Diagnostic] | None] = [None] * count
        # Each child's statistic effects, applied to the originals in child order.
        self.statistics = PipelineStatistics(work.adaptor.managers)
        self.effects: list[StatisticDeltas | None] = [None] * count
        self.futures: dict[Future[bytes], _Chunk] = {}
        self.profile = ExecutorProfile(runs=1, children=count)
        context = work.state.context
        self.spec = (executor.context_factory, bool(context.allow_unregistered))
        self.pipeline = executor.pipeline_bytes(work.adaptor)
        op = work.op
        self.region_of = {region: i for i, region in enumerate(op.regions)}

    def run(self) -> bool:
        start = time.perf_counter()
        waited = 0.0
        work = self.work
        positions = list(range(len(work.items)))
        count = max(
            1, min(len(positions), self.executor.jobs * self.executor.chunks_per_job)
        )
        size = -(-len(positions) // count)
        local: list[int] = []
        for first in range(0, len(positions), size):
            local.extend(self._submit(positions[first : first + size]))
        for position in local:  # children that cannot travel run here, in order
            self._run_here(position)
        while self.futures:
            before = time.perf_counter()
            done, _ = wait_futures(list(self.futures), return_when=FIRST_COMPLETED)
            waited += time.perf_counter() - before
            for future in done:
                self._collect(future, self.futures.pop(future))
        self.statistics.apply(self.effects)
        replay_diagnostics(work.state, self.diagnostics)
        self.profile.wall = time.perf_counter() - start
        self.profile.parent_busy = self.profile.wall - waited
        self.executor.profile.add(self.profile)
        return all(self.ok)

    def _submit(self, positions: list[int]) -> list[int]:
        """Send `positions` as one task; return those that cannot be encoded."""
        work = self.work
        encoder = Encoder([], grow_shared=True)
        shell = (work.op.name, encoder.header(work.op), len(work.op.regions))
        children: list[tuple[int, int, int, object]] = []
        sent: list[int] = []
        unsendable: list[int] = []
        for position in positions:
            index, child = work.items[position]
            region = child.parent_region()
            region_index = 0 if region is None else self.region_of.get(region, 0)
            try:
                encoded = encoder.op(child)
            except TransferError:  # uses values from outside: never scheduled anyway
                unsendable.append(position)
                continue
            children.append((position, index, region_index, encoded))
            sent.append(position)
        if sent:
            remarks = work.state.remarks  # workers build the remarks it enables
            categories = None if remarks is None else remarks.categories
            payload = encoder.dumps((shell, children, work.state.verify, categories))
            future = self.executor.executor.submit(
                _run_chunk,
                self.pipeline,
                self.spec,
                pickle.dumps(encoder.shared, pickle.HIGHEST_PROTOCOL),
                payload,
            )
            self.futures[future] = _Chunk(sent, encoder.shared)
        return unsendable

    def _run_here(self, position: int) -> None:
        child = self.work.items[position][1]
        (
            self.ok[position],
            self.diagnostics[position],
            self.effects[position],
        ) = self.work.run_captured(position, self.work.am.nest(child), self.statistics)

    def _collect(self, future: Future[bytes], chunk: _Chunk) -> None:
        work = self.work
        error = future.exception()
        if error is not None:
            if len(chunk.positions) > 1:  # find the child that broke it
                for position in chunk.positions:
                    for left in self._submit([position]):
                        self._run_here(left)
                return
            position = chunk.positions[0]
            child = work.items[position][1]
            self.diagnostics[position] = [
                child_error(
                    child,
                    f"worker failed while running '{work.pipeline_text(position)}' "
                    f"on this op: {type(error).__name__}: {error}",
                )
            ]
            return
        decoder = Decoder(work.state.context, chunk.shared)
        results = cast(list[tuple[object, ...]], decoder.loads(future.result()))
        for position, ok, diagnostics, deltas, payload, seconds in results:
            position = cast(int, position)
            self.profile.worker_busy += cast(float, seconds)
            self.diagnostics[position] = cast(list[Diagnostic], diagnostics)
            self.ok[position] = bool(ok)
            self.effects[position] = cast(StatisticDeltas, deltas)
            if payload is not None:
                header, regions = cast(
                    tuple[tuple[object, ...], tuple[object, ...]], payload
                )
                decoder.splice(work.items[position][1], header, regions)
                self.profile.shipped += 1


# --- the worker's side --------------------------------------------------------

_worker_state = threading.local()


def _worker_context(spec: tuple[ContextFactory | None, bool]) -> Context:
    cache = cast(
        dict[object, Context], _worker_state.__dict__.setdefault("contexts", {})
    )
    found = cache.get(spec)
    if found is None:
        factory, allow_unregistered = spec
        found = (
            factory()
            if factory is not None
            else ir.default_context(allow_unregistered=allow_unregistered)
        )
        ir.preload_dialects(found)
        cache[spec] = found
    return found


def _worker_pipeline(data: bytes) -> list[OpPassManager]:
    """This worker thread's copy of a pipeline, unpickled once and reused."""
    cache = cast(
        dict[bytes, list["OpPassManager"]],
        _worker_state.__dict__.setdefault("pipelines", {}),
    )
    key = hashlib.sha256(data).digest()
    found = cache.get(key)
    if found is None:
        if len(cache) >= 8:
            cache.clear()
        found = cache[key] = cast(list["OpPassManager"], pickle.loads(data))
    return found


def _run_chunk(
    pipeline: bytes,
    spec: tuple[ContextFactory | None, bool],
    shared_data: bytes,
    payload: bytes,
) -> bytes:
    """A task: decode the children, run their pipelines, encode what changed."""
    from passflow.runner import RunState, run_pipeline

    context = _worker_context(spec)
    managers = _worker_pipeline(pipeline)
    shared = cast(list[object], pickle.loads(shared_data))
    decoder = Decoder(context, shared)
    shell_spec, children, verify, categories = cast(
        tuple[
            tuple[str, tuple[object, ...], int],
            list[tuple[int, int, int, object]],
            bool,
            RemarkCategories | None,
        ],
        decoder.loads(payload),
    )
    name, header, region_count = shell_spec
    shell_class = context.get_optional_op(name)
    if shell_class is None:
        raise TransferError(f"operation '{name}' is not known to the worker's context")
    shell = shell_class.create(regions=[Region(Block()) for _ in range(region_count)])
    decoder.header_into(shell, header)
    placed: list[tuple[int, int, Operation]] = []
    for position, index, region, encoded in children:
        child = decoder.op(cast(tuple[object, ...], encoded))
        block = shell.regions[region].first_block
        assert block is not None
        block.add_op(child)
        placed.append((position, index, child))
    state = RunState(context, DiagnosticEngine(), None, verify)
    if categories is not None:  # remarks come back with the diagnostics
        state.remarks = RemarkEngine(categories)
    root = AnalysisManager.for_root(shell)
    encoder = Encoder(shared)
    changes = ChangeDetector()
    statistics = PipelineStatistics(managers)
    results: list[tuple[object, ...]] = []
    for position, index, child in placed:
        start = time.perf_counter()
        statistics.arm()  # counts of an earlier task that failed are dropped here
        token = begin_child_capture(state)
        try:
            before = changes.before(child)
            ok = run_pipeline(managers[index], child, root.nest(child), state, None)
        finally:
            diagnostics = end_child_capture(state, token)
        payload_out = (
            (encoder.header(child), encoder.regions(child))
            if changes.changed(child, before)
            else None
        )
        results.append(
            (
                position,
                ok,
                diagnostics,
                statistics.take(),
                payload_out,
                time.perf_counter() - start,
            )
        )
    return encoder.dumps(results)
