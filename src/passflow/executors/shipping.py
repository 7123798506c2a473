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
while the pipeline is unchanged. The siblings a chunk's children reference by
symbol (`func.call @callee`) travel with it, encoded as they are when the chunk
is sent, and sit beside the children in the worker's shell so that symbol
lookups (the call's verifier) find them there as in the parent; the pipeline
does not run on them and they do not come back. Diagnostics and the text children write to
stdout/stderr come back per child and are replayed in child order; statistics
come back as each child's effects and are applied to the original passes in
child order, so that both read as after a serial run.

A chunk whose task fails (the worker died, the pool broke, a result could not be
pickled) is retried one child per task, so a failure costs one child: that child
fails with an error at its location, every other child completes.
"""

from __future__ import annotations

import bisect
import functools
import io
import pickle
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Executor, Future
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from typing import Any, cast

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, ParametrizedAttribute, Region
from xdsl.traits import SymbolTable

from passflow import ir
from passflow.analysis import AnalysisManager
from passflow.diagnostics import DiagnosticEngine
from passflow.execution import ChildExecutor, ChildWork
from passflow.executors.budget import default_jobs
from passflow.executors.child_run import (
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
    EncodedOp,
    Encoder,
    TransferError,
)
from passflow.ir import Context, Operation
from passflow.manager import OpPassManager
from passflow.pass_base import Pass, PassPipeline, pipeline_identity
from passflow.remarks import RemarkCategories, RemarkEngine
from passflow.runner import RunState, run_pipeline
from passflow.xdsl_adapter import XDSLPass, adapter_class

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
        self._pipelines: weakref.WeakKeyDictionary[Pass, tuple[object, bytes]] = (
            weakref.WeakKeyDictionary()
        )

    def run(self, work: ChildWork) -> bool:
        if len(work.items) < max(2, self.min_children) or work.in_process_only:
            return work.run_serially()
        return _ShippedRun(self, work).run()

    def pipeline_bytes(self, work: ChildWork) -> bytes:
        """The work's pipelines, cloned and pickled (cached while unchanged)."""
        key = pipeline_identity(work.pipelines)
        found = self._pipelines.get(work.adaptor)
        if found is not None and found[0] == key:
            return found[1]
        stream = io.BytesIO()
        _PipelinePickler(stream).dump([pm.clone() for pm in work.pipelines])
        data = stream.getvalue()
        self._pipelines[work.adaptor] = (key, data)
        return data


class _PipelinePickler(pickle.Pickler):
    """Pickles passes; an adapted xDSL pass's class (made at lookup) as the xDSL
    class it adapts, which pickles by reference."""

    def __init__(self, stream: io.BytesIO) -> None:
        super().__init__(stream, pickle.HIGHEST_PROTOCOL)

    def reducer_override(self, obj: Any) -> Any:
        if (
            isinstance(obj, type)
            and issubclass(obj, XDSLPass)
            and adapter_class(obj.xdsl_class) is obj
        ):
            return (adapter_class, (obj.xdsl_class,))
        return NotImplemented


@dataclass(eq=False)
class _Chunk:
    positions: list[int]
    shared: list[object]  # the parent's objects, at the indices the task uses


@dataclass(frozen=True, slots=True)
class _ShippedChild:
    """A child in a task: its position in the work, the index of its pipeline,
    the region of the parent it sits in, and the child itself, encoded."""

    position: int
    pipeline: int
    region: int
    op: EncodedOp


@dataclass(frozen=True, slots=True)
class _Task:
    """What one task carries besides the pipeline: the children, inside a shell
    of their parent (name, header, region count), and how to run them.

    `references` are the siblings the children reference by symbol, each with
    the index in `children` of the first child of region 0 that follows it in
    the parent (`len(children)` if none), so that they sit in the shell's first
    region in the parent's order; nothing runs on them."""

    parent_name: str
    parent_header: tuple[object, ...]
    region_count: int
    children: list[_ShippedChild]
    references: list[tuple[int, EncodedOp]]
    verify: bool
    remark_categories: RemarkCategories | None


_Symbols = tuple[dict[str, list[int]], dict[int, int], list[Operation]]
"""A parent's symbol table: names to positions, op ids to positions, the ops."""


def _symbol_roots(attrs: list[Attribute]) -> set[str]:
    """The root names of the symbol references in `attrs`, nested ones included
    (in arrays, dictionaries and parameters), as symbol lookups resolve them."""
    names: set[str] = set()
    pending: list[Attribute] = list(attrs)
    while pending:
        attr = pending.pop()
        if isinstance(attr, SymbolRefAttr):
            names.add(attr.root_reference.data)
        elif isinstance(attr, ArrayAttr):
            pending.extend(cast(ArrayAttr[Attribute], attr).data)
        elif isinstance(attr, DictionaryAttr):
            pending.extend(attr.data.values())
        elif isinstance(attr, ParametrizedAttribute):
            pending.extend(attr.parameters)
    return names


class _ShippedRun:
    """One adaptor run on a futures executor (the parent's side)."""

    def __init__(self, executor: ShippingExecutor, work: ChildWork) -> None:
        self.executor = executor
        self.work = work
        self.outcomes = ChildOutcomes(work)
        self.futures: dict[Future[bytes], _Chunk] = {}
        self.profile = ExecutorProfile(runs=1, children=len(work.items))
        context = work.state.context
        self.spec = (executor.context_factory, bool(context.allow_unregistered))
        self.pipeline = executor.pipeline_bytes(work)
        op = work.op
        self.region_of = {region: i for i, region in enumerate(op.regions)}
        self._symbols: _Symbols | None = None

    def run(self) -> bool:
        start = time.perf_counter()
        waited = 0.0
        positions = list(range(len(self.work.items)))
        count = max(
            1, min(len(positions), self.executor.jobs * self.executor.chunks_per_job)
        )
        size = -(-len(positions) // count)
        local: list[int] = []
        for first in range(0, len(positions), size):
            local.extend(self._submit(positions[first : first + size]))
        for position in local:  # children that cannot travel run here, in order
            self.outcomes.run_here(position)
        while self.futures:
            before = time.perf_counter()
            done, _ = wait_futures(list(self.futures), return_when=FIRST_COMPLETED)
            waited += time.perf_counter() - before
            for future in done:
                self._collect(future, self.futures.pop(future))
        ok = self.outcomes.finish()
        self.profile.wall = time.perf_counter() - start
        self.profile.parent_busy = self.profile.wall - waited
        self.executor.profile.add(self.profile)
        return ok

    def _submit(self, positions: list[int]) -> list[int]:
        """Send `positions` as one task; return those that cannot be encoded."""
        work = self.work
        encoder = Encoder([], grow_shared=True)
        children: list[_ShippedChild] = []
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
            children.append(_ShippedChild(position, index, region_index, encoded))
        references = self._references(encoder, children) if children else []
        if references is None:  # the worker could not resolve their symbols
            return [*unsendable, *(child.position for child in children)]
        if children:
            remarks = work.state.remarks  # workers build the remarks it enables
            task = _Task(
                work.op.name,
                encoder.header(work.op),
                len(work.op.regions),
                children,
                references,
                work.state.verify,
                None if remarks is None else remarks.categories,
            )
            future = self.executor.executor.submit(
                _run_chunk,
                self.pipeline,
                self.spec,
                pickle.dumps(encoder.shared, pickle.HIGHEST_PROTOCOL),
                encoder.dumps(task),
            )
            self.futures[future] = _Chunk(
                [child.position for child in children], encoder.shared
            )
        return unsendable

    def _references(
        self, encoder: Encoder, children: list[_ShippedChild]
    ) -> list[tuple[int, EncodedOp]] | None:
        """The siblings `children` reference by symbol, encoded for `_Task`;
        None when the worker could not resolve the references as the parent
        does (the parent op is no symbol table, so lookups go past it, or a
        referenced sibling cannot be moved): the children then run here."""
        names = _symbol_roots(encoder.introduced())
        if not names:
            return []
        op = self.work.op
        if not op.has_trait(SymbolTable) or len(op.regions[0].blocks) != 1:
            return None
        table, order, siblings = self._symbol_table()
        if not table:
            return []
        items = self.work.items
        mine = {
            order[id(items[child.position][1])]: at
            for at, child in enumerate(children)
            if child.region == 0
        }
        wanted = sorted(
            {
                ordinal
                for name in names
                for ordinal in table.get(name, ())
                if ordinal not in mine
            }
        )
        ordinals = sorted(mine)
        references: list[tuple[int, EncodedOp]] = []
        for ordinal in wanted:
            after = bisect.bisect(ordinals, ordinal)
            ahead = mine[ordinals[after]] if after < len(ordinals) else len(children)
            try:
                references.append((ahead, encoder.op(siblings[ordinal])))
            except TransferError:
                return None
        return references

    def _symbol_table(self) -> _Symbols:
        """The parent's symbols (name -> positions in its first block), the
        position of each op there and the ops, made on first use."""
        if self._symbols is None:
            table: dict[str, list[int]] = {}
            order: dict[int, int] = {}
            ops = list(self.work.op.regions[0].blocks[0].ops)
            for ordinal, sibling in enumerate(ops):
                order[id(sibling)] = ordinal
                name = ir.symbol_name(sibling)
                if name is not None:
                    table.setdefault(name, []).append(ordinal)
            self._symbols = (table, order, ops)
        return self._symbols

    def _collect(self, future: Future[bytes], chunk: _Chunk) -> None:
        work = self.work
        error = future.exception()
        if error is not None:
            if len(chunk.positions) > 1:  # find the child that broke it
                for position in chunk.positions:
                    for left in self._submit([position]):
                        self.outcomes.run_here(left)
                return
            position = chunk.positions[0]
            self.outcomes.fail(
                position,
                [],
                f"worker failed while running '{work.pipeline_text(position)}' "
                f"on this op: {type(error).__name__}: {error}",
            )
            return
        decoder = Decoder(work.state.context, chunk.shared)
        answer = decoder.loads(future.result())
        if not isinstance(answer, _Answer):
            raise TransferError(f"a worker answered {type(answer).__name__}")
        for result in answer.results:
            if isinstance(result, ChildResult):
                self.profile.worker_busy += result.seconds
                if result.rewritten is not None:
                    header, regions = result.rewritten
                    decoder.splice(work.items[result.position][1], header, regions)
                    self.profile.shipped += 1
            self.outcomes.record(result)


# --- the worker's side --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Answer:
    """What a task sends back: one outcome per child, in the task's order."""

    results: list[ChildResult | ChildRaised]


@dataclass
class _WorkerCaches:
    """A worker thread's contexts and unpickled pipelines, kept across tasks."""

    contexts: dict[object, Context] = field(default_factory=lambda: {})
    pipelines: dict[bytes, list[PassPipeline]] = field(default_factory=lambda: {})


_worker_state = threading.local()


def _worker_caches() -> _WorkerCaches:
    caches = getattr(_worker_state, "caches", None)
    if not isinstance(caches, _WorkerCaches):
        caches = _worker_state.caches = _WorkerCaches()
    return caches


def _worker_context(spec: tuple[ContextFactory | None, bool]) -> Context:
    cache = _worker_caches().contexts
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


def _worker_pipeline(data: bytes) -> list[PassPipeline]:
    """This worker thread's copy of a pipeline, unpickled once and reused."""
    cache = _worker_caches().pipelines
    found = cache.get(data)
    if found is None:
        if len(cache) >= 8:
            cache.clear()
        loaded: object = pickle.loads(data)
        if not isinstance(loaded, list):
            raise TransferError(f"a pipeline arrived as {type(loaded).__name__}")
        found = cache[data] = [
            pm for pm in cast(list[object], loaded) if isinstance(pm, OpPassManager)
        ]
    return found


def _run_chunk(
    pipeline: bytes,
    spec: tuple[ContextFactory | None, bool],
    shared_data: bytes,
    payload: bytes,
) -> bytes:
    """A task: decode the children, run their pipelines, encode what changed."""
    context = _worker_context(spec)
    pipelines = _worker_pipeline(pipeline)
    shared = cast(list[object], pickle.loads(shared_data))
    decoder = Decoder(context, shared)
    task = decoder.loads(payload)
    if not isinstance(task, _Task):
        raise TransferError(f"a task carried {type(task).__name__}")
    shell_class = context.get_optional_op(task.parent_name)
    if shell_class is None:
        raise TransferError(
            f"operation '{task.parent_name}' is not known to the worker's context"
        )
    shell = shell_class.create(
        regions=[Region(Block()) for _ in range(task.region_count)]
    )
    decoder.header_into(shell, task.parent_header)
    placed: list[tuple[_ShippedChild, Operation]] = []
    for shipped in task.children:
        child = decoder.op(shipped.op)
        block = shell.regions[shipped.region].first_block
        assert block is not None
        block.add_op(child)
        placed.append((shipped, child))
    for ahead, encoded in task.references:  # in the parent's order
        reference = decoder.op(encoded)
        first = shell.regions[0].first_block
        assert first is not None
        if ahead < len(placed):
            first.insert_op_before(reference, placed[ahead][1])
        else:
            first.add_op(reference)
    state = RunState(context, DiagnosticEngine(), None, task.verify)
    if task.remark_categories is not None:  # remarks come back with the diagnostics
        state.remarks = RemarkEngine(task.remark_categories)
    root = AnalysisManager.for_root(shell)
    encoder = Encoder(shared)
    changes = ChangeDetector()
    statistics = PipelineStatistics(pipelines)
    results: list[ChildResult | ChildRaised] = []
    for shipped, child in placed:
        chosen = pipelines[shipped.pipeline]
        results.append(
            run_child(
                shipped.position,
                child,
                functools.partial(
                    run_pipeline, chosen, child, root.nest(child), state, None
                ),
                state,
                statistics,
                encoder=encoder,
                changes=changes,
            )
        )
    return encoder.dumps(_Answer(results))
