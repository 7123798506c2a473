"""Pass managers: ordered passes anchored on an op name, nested by op.

`OpPassManager` is MLIR's: a list of passes for ops called `anchor` (or any op,
for `any`), where `nest("func.func")` adds an adaptor that runs a nested pipeline
on the matching direct children. `PassManager` is the top-level one: it owns the
context, instrumentation, diagnostics and the verifier flag, and `run(op)` raises
`PassPipelineError` with every diagnostic when anything failed.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from concurrent.futures import Executor
from enum import Enum
from typing import TYPE_CHECKING, TextIO

from passflow import ir
from passflow.analysis import AnalysisManager
from passflow.diagnostics import (
    Diagnostic,
    DiagnosticEngine,
    DiagnosticHandler,
    PassflowError,
    PassNestingError,
    PassPipelineError,
    Severity,
)
from passflow.execution import ChildExecutor, SerialExecutor, as_child_executor
from passflow.instrumentation import PassInstrumentation, PassInstrumentor
from passflow.ir import Context, Operation, OperationName
from passflow.pass_base import Pass
from passflow.runner import RunState, run_adaptor, run_pipeline, schedule_error

if TYPE_CHECKING:
    from passflow.actions import ActionHandler
    from passflow.instruments.ir_printing import IRPrinterConfig
    from passflow.instruments.progress import ProgressBar
    from passflow.instruments.reproducer import CrashReproducer, StreamFactory
    from passflow.instruments.timing import TimingDisplay, TimingFormat, TimingManager
    from passflow.remarks import RemarkEngine
    from passflow.statistics import StatisticsDisplay

__all__ = ["Nesting", "OpPassManager", "OpToOpPassAdaptor", "PassManager"]


class Nesting(Enum):
    """What `add` does with a pass restricted to another op than the manager's.

    IMPLICIT nests it in a new `op_name(...)` pipeline (mlir-opt's pass flags);
    EXPLICIT refuses it with MLIR's "did you intend to nest?" error.
    """

    IMPLICIT = "implicit"
    EXPLICIT = "explicit"


class OpPassManager:
    """An ordered list of passes that runs on ops called `anchor` (`any`: every op)."""

    def __init__(
        self,
        anchor: str = "any",
        nesting: Nesting = Nesting.EXPLICIT,
        *,
        recursive: bool = False,
    ) -> None:
        self._anchor = "any" if anchor in ("", "any") else anchor
        self.nesting = nesting
        self.recursive = recursive
        """Runs on matching ops at any depth (`**anchor(...)`), not only children."""
        self.passes: list[Pass] = []
        self._generation = 0
        self._errors_cache: dict[OperationName, tuple[str | None, ...] | None] = {}
        self._adaptor_flags: tuple[bool, ...] | None = None

    @property
    def anchor(self) -> str:
        """The op name this pipeline runs on, or `any`."""
        return self._anchor

    @property
    def op_name(self) -> str | None:
        """The anchor, or None for an op-agnostic pipeline."""
        return None if self._anchor == "any" else self._anchor

    def __len__(self) -> int:
        return len(self.passes)

    def __iter__(self) -> Iterator[Pass]:
        return iter(self.passes)

    # --- building -----------------------------------------------------------

    def nest(self, op_name: str, *, recursive: bool = False) -> OpPassManager:
        """A new pipeline for the direct children called `op_name` (MLIR's `nest`);
        `recursive=True` (`**op_name(...)` in text) runs it on such ops at any
        depth, the outermost ones only, as MLIR's recursive anchors."""
        nested = OpPassManager(op_name, self.nesting, recursive=recursive)
        self.add(OpToOpPassAdaptor([nested]))
        return nested

    def nest_any(self) -> OpPassManager:
        """A new op-agnostic pipeline for every schedulable direct child."""
        return self.nest("any")

    def add(self, pass_: Pass) -> None:
        """Append a pass; an op-restricted one for another op is nested or refused."""
        pass_op = pass_.op_name
        if pass_op is not None and self.op_name is not None and pass_op != self.op_name:
            if self.nesting is Nesting.IMPLICIT:
                self.nest(pass_op).add(pass_)
                return
            raise PassNestingError(
                f"Can't add pass '{pass_.name}' restricted to '{pass_op}' on a "
                f"PassManager intended to run on '{self._anchor}', did you intend to nest?"
            )
        self.passes.append(pass_)
        self._invalidate_caches()

    def clear(self) -> None:
        self.passes.clear()
        self._invalidate_caches()

    def clear_caches(self) -> None:
        """Forget cached scheduling decisions after `passes` was edited in place."""
        self._invalidate_caches()

    def clone(self) -> OpPassManager:
        """A deep copy: every pass cloned, options kept, statistics fresh."""
        new = OpPassManager(self._anchor, self.nesting, recursive=self.recursive)
        new.passes = [p.clone() for p in self.passes]
        return new

    def _invalidate_caches(self) -> None:
        self._errors_cache.clear()
        self._adaptor_flags = None
        self._generation = 0

    # --- scheduling ---------------------------------------------------------

    def can_schedule_on(self, name: OperationName) -> bool:
        """Whether this pipeline runs on a child called `name` (MLIR 2.4)."""
        if self._anchor != "any":
            return name.name == self._anchor
        return (
            name.is_registered
            and name.has_trait(ir.IsolatedFromAbove)
            and all(p.can_schedule_on(name) for p in self.passes)
        )

    def schedule_errors(self, name: OperationName) -> tuple[str | None, ...] | None:
        """Per pass, why it may not run on `name`; None when every pass may."""
        cache = self._errors_cache
        if name in cache:
            return cache[name]
        errors = tuple(schedule_error(p, name) for p in self.passes)
        result = errors if any(e is not None for e in errors) else None
        cache[name] = result
        return result

    def adaptor_flags(self) -> tuple[bool, ...]:
        flags = self._adaptor_flags
        if flags is None:
            flags = self._adaptor_flags = tuple(
                isinstance(p, OpToOpPassAdaptor) for p in self.passes
            )
        return flags

    def dependent_dialects(self) -> list[str]:
        names: list[str] = []
        for p in self.passes:
            if isinstance(p, OpToOpPassAdaptor):
                for pm in p.managers:
                    names.extend(pm.dependent_dialects())
            else:
                names.extend(p.get_dependent_dialects())
        return names

    def finalize(self, state: RunState) -> bool:
        """Merge adjacent adaptors and check op-specific pipelines (MLIR 2.3)."""
        merged: list[Pass] = []
        last: OpToOpPassAdaptor | None = None
        ok = True
        for p in self.passes:
            if isinstance(p, OpToOpPassAdaptor):
                if last is not None and p.try_merge_into(last, state.context):
                    continue
                if last is not None:
                    ok = last.finalize(state) and ok
                last = p
            else:
                if last is not None:
                    ok = last.finalize(state) and ok
                    last = None
            merged.append(p)
        if last is not None:
            ok = last.finalize(state) and ok
        if len(merged) != len(self.passes):
            self.passes = merged
            self._invalidate_caches()
        if not ok:
            return False
        if self.op_name is not None:
            name = ir.lookup_operation_name(state.context, self.op_name)
            if name.is_registered:
                for p in self.passes:
                    if not p.can_schedule_on(name):
                        state.emit(
                            Diagnostic(
                                Severity.ERROR,
                                f"unable to schedule pass '{p.name}' on a PassManager "
                                f"intended to run on '{self._anchor}'!",
                            )
                        )
                        return False
        return True

    def initialize(self, state: RunState, generation: int) -> bool:
        """Call `initialize` on every pass once per generation."""
        if self._generation == generation:
            return True
        self._generation = generation
        for p in self.passes:
            if isinstance(p, OpToOpPassAdaptor):
                if not all(pm.initialize(state, generation) for pm in p.managers):
                    return False
                continue
            try:
                if p.initialize(state.context) is False:
                    return False
            except Exception as err:
                state.emit(
                    Diagnostic(
                        Severity.ERROR,
                        f"pass '{p.name}' crashed in initialize: {type(err).__name__}: {err}",
                    )
                )
                return False
        return True

    # --- printing -----------------------------------------------------------

    def __str__(self) -> str:
        """The textual pipeline, anchor included: `builtin.module(func.func(cse))`."""
        return f"{self.textual_anchor}({','.join(str(p) for p in self.passes)})"

    @property
    def textual_anchor(self) -> str:
        """The anchor as pipeline text writes it: `**` first when recursive."""
        return f"**{self._anchor}" if self.recursive else self._anchor

    def pretty(self, indent: int = 0) -> str:
        """The multi-line form `--dump-pass-pipeline` prints."""
        pad = " " * indent
        inner: list[str] = []
        for p in self.passes:
            if isinstance(p, OpToOpPassAdaptor):
                inner.append(",\n".join(pm.pretty(indent + 2) for pm in p.managers))
            else:
                inner.append(p.pretty(indent + 2))
        return f"{pad}{self.textual_anchor}(\n" + ",\n".join(inner) + f"\n{pad})"

    def dump(self, stream: TextIO | None = None) -> None:
        """MLIR's `OpPassManager::dump`: the count of top-level entries, then `pretty`."""
        out = stream if stream is not None else sys.stderr
        out.write(f"Pass Manager with {len(self.passes)} passes:\n{self.pretty()}\n")


class OpToOpPassAdaptor(Pass):
    """The pass that runs nested pipelines on the direct children of its op."""

    name = "OpToOpPassAdaptor"

    def __init__(self, managers: list[OpPassManager]) -> None:
        super().__init__()
        self.managers = managers
        self._by_name: dict[OperationName, int | None] = {}

    @property
    def adaptor_name(self) -> str:
        """`Pipeline Collection : ['a', 'b']`, as MLIR's timing and statistics show."""
        names = ", ".join(f"'{pm.textual_anchor}'" for pm in self.managers)
        return f"Pipeline Collection : [{names}]"

    def __str__(self) -> str:
        return ",".join(str(pm) for pm in self.managers)

    def manager_index_for(self, name: OperationName) -> int | None:
        """Index of the first pipeline (in sorted order) that runs on ops called `name`."""
        cache = self._by_name
        if name in cache:
            return cache[name]
        found = next(
            (i for i, pm in enumerate(self.managers) if pm.can_schedule_on(name)), None
        )
        cache[name] = found
        return found

    def children_to_run(self, op: Operation) -> list[tuple[int, Operation]]:
        """(pipeline index, op) for every op the pipelines run on, in program order:
        the direct children of `op`, and for recursive pipelines the outermost
        matching ops at any depth."""
        index_for = self.manager_index_for
        deep = any(pm.recursive for pm in self.managers)
        items: list[tuple[int, Operation]] = []
        pending = [op]
        while pending:
            parent = pending.pop()
            found: list[tuple[int, Operation]] = []
            below: list[Operation] = []
            for region in parent.regions:
                for block in region.blocks:
                    for child in block.ops:
                        index = index_for(ir.operation_name(child))
                        if index is not None and (
                            parent is op or self.managers[index].recursive
                        ):
                            found.append((index, child))
                        elif deep:
                            below.append(child)
            items.extend(found)
            pending.extend(reversed(below))
        if deep:
            order = {id(o): i for i, o in enumerate(op.walk())}
            items.sort(key=lambda item: order[id(item[1])])
        return items

    def run_on_operation(self) -> None:
        run_adaptor(self)

    def get_dependent_dialects(self) -> list[str]:
        return [d for pm in self.managers for d in pm.dependent_dialects()]

    def clone(self) -> OpToOpPassAdaptor:
        return OpToOpPassAdaptor([pm.clone() for pm in self.managers])

    def finalize(self, state: RunState) -> bool:
        self._by_name.clear()
        return all(pm.finalize(state) for pm in self.managers)

    def try_merge_into(self, rhs: OpToOpPassAdaptor, context: Context) -> bool:
        """Merge this (later) adaptor into `rhs` unless an `any` pipeline conflicts."""
        if _generic_conflicts(
            self.managers, rhs.managers, context
        ) or _generic_conflicts(rhs.managers, self.managers, context):
            return False
        for pm in self.managers:
            target = next(
                (
                    other
                    for other in rhs.managers
                    if other.op_name is not None
                    and other.anchor == pm.anchor
                    and other.recursive == pm.recursive
                ),
                None,
            )
            if target is None:
                rhs.managers.append(pm)
            else:
                target.passes.extend(pm.passes)
                target._invalidate_caches()  # pyright: ignore[reportPrivateUsage]
        rhs.managers.sort(key=lambda pm: (pm.op_name is None, pm.op_name or ""))
        rhs._by_name.clear()
        return True


def _generic_conflicts(
    lhs: list[OpPassManager], rhs: list[OpPassManager], context: Context
) -> bool:
    """An `any` pipeline in `lhs` conflicts with `rhs` if it could run on one of
    rhs's anchors, or if rhs has an `any` pipeline too."""
    for generic in (pm for pm in lhs if pm.op_name is None):
        for other in rhs:
            if other.op_name is None:
                return True
            if generic.can_schedule_on(
                ir.lookup_operation_name(context, other.op_name)
            ):
                return True
    return False


class PassManager(OpPassManager):
    """The top-level pass manager: `pm.run(op)` runs the pipeline on `op`.

    It owns the context (dialects load into it before the run), the
    instrumentations, the diagnostic handlers, the verifier flag and the executor
    that runs nested pipelines on children (None: serially on the calling thread).
    """

    def __init__(
        self,
        anchor: str = "builtin.module",
        context: Context | None = None,
        *,
        nesting: Nesting = Nesting.EXPLICIT,
        executor: ChildExecutor | Executor | None = None,
    ) -> None:
        super().__init__(anchor, nesting)
        self.context = context if context is not None else ir.default_context()
        self.executor = as_child_executor(executor)
        self.instrumentor = PassInstrumentor()
        self.diagnostics = DiagnosticEngine()
        self.verify_each = True
        self._init_key: object = None
        self._init_generation = 0
        self._reproducer: CrashReproducer | None = None
        self._progress: ProgressBar | None = None
        self._timing: TimingManager | None = None
        self._timing_stream: TextIO | None = None
        self._statistics: StatisticsDisplay | None = None
        self._statistics_stream: TextIO | None = None
        self.action_handler: ActionHandler | None = None
        self.emit_pass_error_on_failure = False
        self.remarks: RemarkEngine | None = None

    def enable_ir_printing(self, config: IRPrinterConfig | None = None) -> None:
        """Print the IR around passes (mlir-opt's `--mlir-print-ir-*` flags); by
        default before and after every pass, to stderr.

        Module scope prints the whole top-level op, which worker threads may be
        rewriting meanwhile, so it needs threading off. A config with no filter
        adds nothing, as in mlir-opt. Enable printing before timing, so that the
        printing is not counted in the passes' times.
        """
        from passflow.instruments.ir_printing import (
            MODULE_SCOPE_THREADING_ERROR,
            IRPrinterConfig,
            IRPrinterInstrumentation,
        )

        if config is None:
            config = IRPrinterConfig(before_all=True, after_all=True)
        if config.module_scope and not self.threading_disabled:
            raise PassflowError(MODULE_SCOPE_THREADING_ERROR)
        if config.enabled:
            self.add_instrumentation(IRPrinterInstrumentation(config))

    def enable_timing(
        self,
        manager: TimingManager | None = None,
        *,
        display: TimingDisplay = "tree",
        output_format: TimingFormat = "text",
        stream: TextIO | None = None,
    ) -> TimingManager:
        """Time every pass, nested pipeline and analysis (`--mlir-timing`).

        Without `manager`, this pass manager owns one and prints its report to
        `stream` (stderr) at the end of every `run`, failed or not. A shared
        `manager` is the caller's to report (passflow-opt prints one report for
        all input chunks, with its own `Parser` and `Output` timers). Enable
        timing last, so that other instrumentations' work is not timed.
        """
        from passflow.instruments.timing import PassTiming, TimingManager

        if manager is None:
            manager = self._timing = TimingManager(display, output_format)
            self._timing_stream = stream
        self.add_instrumentation(PassTiming(manager))
        return manager

    def enable_statistics(
        self, display: StatisticsDisplay = "pipeline", stream: TextIO | None = None
    ) -> None:
        """Print the pass statistics report to `stream` (stderr) after every `run`,
        failed or not (`--mlir-pass-statistics`)."""
        if display not in ("pipeline", "list"):
            raise ValueError(f"unknown statistics display '{display}'")
        self._statistics = display
        self._statistics_stream = stream

    def _print_reports(self) -> None:
        """Statistics, then the owned timing report (MLIR's order)."""
        if self._statistics is not None:
            from passflow.statistics import statistics_report

            out = self._statistics_stream or sys.stderr
            out.write(statistics_report(self, self._statistics))
            out.flush()
        if self._timing is not None:
            self._timing.print_report(self._timing_stream)

    def enable_progress(
        self, stream: TextIO | None = None, *, force: bool = False
    ) -> ProgressBar:
        """Show a live progress bar on `stream` (stderr) when it is a terminal
        (or always, with `force`)."""
        from passflow.instruments.progress import ProgressBar

        self._progress = ProgressBar(stream, force=force)
        self.instrumentor.add(self._progress)
        return self._progress

    @property
    def threading_disabled(self) -> bool:
        """True when nested pipelines run serially on the calling thread."""
        return self.executor is None or isinstance(self.executor, SerialExecutor)

    def enable_crash_reproducer(
        self, target: str | StreamFactory, *, local: bool = False
    ) -> None:
        """Write a reproducer to `target` (a path, or a function opening a stream)
        when a pass fails or crashes.

        Global mode replays the whole pipeline on the IR as it was when the run
        started; `local=True` replays only the failing pass on the IR as it was
        just before it (serial runs only, and a module print per pass).
        """
        from passflow.instruments.reproducer import CrashReproducer

        if local and not self.threading_disabled:
            raise PassflowError(
                "Local crash reproduction can't be setup on a pass-manager without "
                "disabling multi-threading first."
            )
        self._reproducer = CrashReproducer(target, local)
        self.instrumentor.add(self._reproducer, first=True)

    def close(self) -> None:
        """Release the executor's workers (thread pools, Dask clusters it started)."""
        if self.executor is not None:
            self.executor.close()

    def enable_verifier(self, enabled: bool = True) -> None:
        """Verify the IR after each pass (default on); off trades safety for speed."""
        self.verify_each = enabled

    def register_action_handler(self, handler: ActionHandler | None) -> None:
        """Execute every pass as a `pass-execution` action through `handler`
        (None removes it): MLIR's `registerActionHandler`, here per pass manager.

        A `DebugCounter` skips pass applications to bisect a miscompile; an
        `ExecutionContext` with observers logs or profiles them
        (`passflow.actions`). While a handler is installed, nested pipelines run
        serially, in program order, so that actions are numbered the same way
        every run.
        """
        self.action_handler = handler

    def enable_emit_pass_error_on_failure(self, enabled: bool = True) -> None:
        """Emit `failed to run pass '<Name>'` at the op when a pass fails
        (`-emit-pass-error-on-failure`), so a long pipeline's failure names its
        pass even when the pass's own diagnostic does not."""
        self.emit_pass_error_on_failure = enabled

    def enable_remarks(self, engine: RemarkEngine | None) -> None:
        """Send the passes' optimization remarks (`Pass.remarks`) to `engine`
        (None: remarks off). The engine prints through this pass manager's
        diagnostic handlers unless it was given its own; finalizing it (the
        `final` policy's report, its output file) is the caller's, after the
        last run."""
        if engine is not None and engine.diagnostics is None:
            engine.diagnostics = self.diagnostics
        self.remarks = engine

    def add_instrumentation(self, instrumentation: PassInstrumentation) -> None:
        self.instrumentor.add(instrumentation)

    def add_diagnostic_handler(self, handler: DiagnosticHandler) -> None:
        """Receive every diagnostic as it is emitted (replaces stderr printing)."""
        self.diagnostics.handlers.append(handler)

    def assign(self, other: OpPassManager) -> None:
        """Replace anchor and passes with `other`'s (mlir-opt's `-pass-pipeline`)."""
        self._anchor = other.anchor
        self.nesting = other.nesting
        self.passes = list(other.passes)
        self._invalidate_caches()

    def run(self, op: Operation) -> None:
        """Run the pipeline on `op`; raise `PassPipelineError` if anything failed."""
        state = RunState(
            self.context,
            self.diagnostics,
            self.instrumentor if self.instrumentor else None,
            self.verify_each,
            self.executor,
            action_handler=self.action_handler,
            emit_pass_errors=self.emit_pass_error_on_failure,
            remarks=self.remarks,
        )
        name = ir.operation_name(op).name
        if self.op_name is not None and name != self.op_name:
            # As mlir-opt: refused before the run starts, so no report is printed.
            state.emit(
                Diagnostic(
                    Severity.ERROR,
                    f"can't run '{self._anchor}' pass manager on '{name}' op",
                    ir.location(op),
                )
            )
            raise PassPipelineError(state.collected)
        progress = self._progress
        if progress is not None:
            progress.start(op)
        if self._timing is not None:
            self._timing.clear()  # the report's Total is this run
        try:
            ok = self._run(op, state)
        finally:
            if progress is not None:
                progress.stop()
            self._print_reports()
        if not ok:
            raise PassPipelineError(state.collected)

    def _run(self, op: Operation, state: RunState) -> bool:
        ir.load_dialects(self.context, self.dependent_dialects())
        if not self.finalize(state):
            return False
        key = (
            tuple(self.context.registered_dialect_names),
            tuple(_pass_identities(self)),
        )
        if key != self._init_key:
            self._init_generation += 1
            if not self.initialize(state, self._init_generation):
                return False
            self._init_key = key
        state.generation = self._init_generation
        am = AnalysisManager.for_root(op, state.instrumentor)
        reproducer = self._reproducer
        if reproducer is None:
            return run_pipeline(self, op, am, state, None)
        state.on_crash = reproducer.record_crash
        reproducer.begin_run(
            op,
            self,
            state.emit,
            disable_threading=self.threading_disabled,
            verify_each=self.verify_each,
        )
        ok = False
        interrupted = False
        try:
            ok = run_pipeline(self, op, am, state, None)
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            reproducer.end_run(failed=not ok, interrupted=interrupted)
        return ok


def _pass_identities(pm: OpPassManager) -> Iterator[int]:
    """Every pass of `pm`'s tree, in pre-order; iterative, so nesting of any
    depth costs linear time (a `yield from` chain would cost its depth per pass)."""
    stack: list[Iterator[Pass]] = [iter(pm.passes)]
    while stack:
        p = next(stack[-1], None)
        if p is None:
            stack.pop()
            continue
        yield id(p)
        if isinstance(p, OpToOpPassAdaptor):
            stack.extend(iter(nested.passes) for nested in reversed(p.managers))
