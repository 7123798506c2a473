"""Passes: the unit of transformation, scheduled by a pass manager on one op at a time.

A pass is declared as a class: its display `name` (reports: `CSE`), its CLI
`argument` (`cse`), `summary`, `description`, the op it is restricted to (`op_name`),
the dialects it may create (`dependent_dialects`), its options and its statistics.
The same declarations drive parsing, printing, `--help` and generated docs.

While it runs, a pass holds one `PassExecutionState` (the op, the analysis
manager, the run it belongs to, whether it failed, what it preserved), as MLIR's
`Pass::passState`; the manager clones a pass for each worker, so
`run_on_operation` must keep any mutable state on `self` and touch nothing outside
the op it was given.

This module is below the pass managers: it sees a pipeline only as a
`PassPipeline` and the run only as a `PassRun`, the protocols that
`passflow.manager.OpPassManager` and `passflow.runner.RunState` implement.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar, cast

from passflow.analysis import ALL_PRESERVED, AnalysisManager, PreservedAnalyses
from passflow.diagnostics import Diagnostic, PassflowError, Severity
from passflow.ir import (
    Context,
    Operation,
    OperationName,
    OpTrait,
    has_interface,
    location,
    operation_name,
)
from passflow.options import (
    apply_options,
    apply_options_string,
    copy_option_values,
    explicit_options,
    format_options,
    option_values,
    options_of,
)
from passflow.statistics import reset_statistics

if TYPE_CHECKING:  # loaded when a pass emits remarks (`Pass.remarks`)
    from passflow.remarks import RemarkEmitter, RemarkEngine

__all__ = [
    "InterfacePass",
    "OperationPass",
    "Pass",
    "PassExecutionState",
    "PassPipeline",
    "PassRun",
    "pipeline_identity",
    "walk_passes",
]

A = TypeVar("A")
P = TypeVar("P", bound="Pass")


class PassPipeline(Protocol):
    """What passes, the runner and executors see of a pipeline
    (`passflow.OpPassManager`): its anchor, its passes in order, its scheduling
    decisions, and how it is prepared for a run and copied."""

    @property
    def anchor(self) -> str: ...

    @property
    def op_name(self) -> str | None: ...

    @property
    def passes(self) -> Sequence[Pass]: ...

    def schedule_errors(self, name: OperationName) -> tuple[str | None, ...] | None:
        """Per pass, why it may not run on ops called `name`; None if all may."""
        ...

    def op_schedule_error(self, index: int, op: Operation) -> str | None:
        """Why pass `index` may not run on `op` itself (checked per op)."""
        ...

    def adaptor_flags(self) -> tuple[bool, ...]:
        """Per pass, whether it is an adaptor (verified non-recursively)."""
        ...

    def finalize(self, run: PassRun) -> bool:
        """Merge adjacent adaptors and check op-specific pipelines."""
        ...

    def initialize(self, run: PassRun, generation: int) -> bool:
        """Call every pass's `initialize`, once per `generation`."""
        ...

    def clone(self) -> PassPipeline:
        """A deep copy: passes cloned, options kept, statistics fresh."""
        ...


class PassRun(Protocol):
    """What a running pass reaches of the run it belongs to
    (`passflow.runner.RunState`): the context, the diagnostic stream, the remark
    engine and dynamic pipelines."""

    @property
    def context(self) -> Context: ...

    @property
    def remarks(self) -> RemarkEngine | None: ...

    def emit(self, diagnostic: Diagnostic) -> None: ...

    def run_dynamic_pipeline(
        self, caller: Pass, pipeline: PassPipeline, op: Operation
    ) -> bool: ...


@dataclass(slots=True, eq=False)
class PassExecutionState:
    """A pass's state while it runs on one op: MLIR's `PassExecutionState`.

    The runner sets it as the pass's `execution_state` for the duration of each
    (pass, op) dispatch, with fresh values (one object per pass and run, reused
    from op to op), and clears it after; the pass reads and writes it through its
    methods (`get_operation`, `signal_pass_failure`, `mark_*_preserved`).
    """

    op: Operation
    analyses: AnalysisManager | None
    """The op's analysis manager; None: made from `analyses_parent` on first
    use (`analysis_manager`), as most visits never ask for one."""
    run: PassRun
    failed: bool = False
    preserved: PreservedAnalyses | None = None
    """The analyses `preserved_by` declared preserved (`mark_analyses_preserved`)."""
    analyses_parent: AnalysisManager | None = None
    """The manager `analysis_manager` nests the op's in when `analyses` is None."""
    all_preserved_by: object = None
    """The pass that declared everything preserved on this visit
    (`mark_all_analyses_preserved`). A pass, not a flag: a pass sharing the
    state with the passes before it on the op needs no reset before its visit,
    as the run loop compares this with the pass it ran."""
    preserved_by: object = None
    """The pass whose declarations `preserved` holds."""

    def preserved_of(self, pass_: object) -> PreservedAnalyses | None:
        """What `pass_` declared preserved on this visit: everything, some
        analyses, or nothing (None)."""
        if self.all_preserved_by is pass_:
            return ALL_PRESERVED
        return self.preserved if self.preserved_by is pass_ else None

    def forget_preserved(self) -> None:
        """Clear what any pass declared preserved: before a visit of a pass
        that may have declared something on an earlier op."""
        self.preserved = self.all_preserved_by = self.preserved_by = None

    @property
    def analysis_manager(self) -> AnalysisManager:
        """The op's analysis manager (made on first use)."""
        am = self.analyses
        if am is None:
            parent = self.analyses_parent
            assert parent is not None  # the runner sets one or the other
            am = self.analyses = parent.nest(self.op)
        return am


class Pass:
    """Base of every pass, including the adaptors that run nested pipelines."""

    name: ClassVar[str] = "Pass"
    argument: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    description: ClassVar[str] = ""
    op_name: ClassVar[str | None] = None
    dependent_dialects: ClassVar[tuple[str, ...]] = ()
    kinds: ClassVar[tuple[str, ...]] = ()
    """What the pass is for (`Cleanup`, `Lowering`, ...), for `PipelineBuilder` anchors."""
    ordering: ClassVar[tuple[object, ...]] = ()
    """Ordering constraints (`passflow.builder`'s `Requires`, `AfterLast`, ...)
    checked, and validated, wherever a `PipelineBuilder` places the pass."""

    execution_state: PassExecutionState | None = None
    """Set by the pass manager while the pass runs on an op, None otherwise."""

    is_adaptor: ClassVar[bool] = False
    """Whether this pass only runs nested pipelines (MLIR's `OpToOpPassAdaptor`):
    reports show its pipelines rather than the pass."""

    checks_each_op: ClassVar[bool] = False
    """Whether the class overrides `can_schedule_on_op` (set automatically), so the
    runner asks it per op; other passes pay nothing for the hook."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__
        cls.checks_each_op = cls.can_schedule_on_op is not Pass.can_schedule_on_op

    def __init__(self, **options: object) -> None:
        if options:
            apply_options(self, options)

    def initialize_options(self, text: str) -> None:
        """Apply an option string (`max-iterations=3 top-down=false`); OptionError if bad."""
        apply_options_string(self, text)

    # --- declarations -------------------------------------------------------

    def can_schedule_on(self, name: OperationName) -> bool:
        """Whether this pass may run on ops called `name`; by default, its `op_name`."""
        return self.op_name is None or name.name == self.op_name

    def can_schedule_on_op(self, op: Operation) -> bool:
        """Whether this pass may run on `op` itself, once `can_schedule_on` accepted
        its name: MLIR's `canScheduleOn(Operation *)`. By default, always; an
        `InterfacePass` on `SymbolOpInterface` refuses an unnamed module here.
        """
        return True

    def unsafe_effect(self) -> str | None:
        """What this pass, as configured, does beyond the IR that a pipeline from
        an untrusted file must not trigger: start a program, read a file. None
        (the default) for a pass that only transforms the IR; see
        `passflow.trust`."""
        return None

    def external_inputs(self) -> Sequence[str] | None:
        """The files this pass, as configured, reads besides the IR, which the
        result cache keys a run on by content (docs/cache.md). None when its
        result depends on what the cache cannot key (it starts a program):
        then no run of it is cached. By default, nothing for a pass without an
        `unsafe_effect()`, and None for one with it: a pass that reads files
        says which by overriding this."""
        return () if self.unsafe_effect() is None else None

    def get_dependent_dialects(self) -> Iterable[str]:
        """Dialects this pass may create ops of; loaded before the run starts."""
        return self.dependent_dialects

    @property
    def display_name(self) -> str:
        """How reports (timing, statistics, traces) name this pass: its `name`;
        an adaptor names its pipelines, as MLIR's `getAdaptorName`."""
        return self.name

    def nested_pipelines(self) -> Sequence[PassPipeline]:
        """The pipelines this pass runs itself (an adaptor's, a pipeline
        schedule's stages), in order: what `walk_passes`, statistics, clones
        and reports descend into. None by default."""
        return ()

    def pipeline_label(self, pipeline: PassPipeline) -> str:
        """How timing and statistics name `pipeline`, a pipeline this pass runs:
        MLIR's `'func.func' Pipeline`; a pipeline schedule names its stages."""
        return f"'{pipeline.anchor}' Pipeline"

    def initialize(self, context: Context) -> bool | None:
        """Set the pass up before it runs on any op; return False to fail the run.

        Called once per *initialization*, as MLIR's `initialize`, not once per
        run: the first `PassManager.run` initializes every pass of the pipeline
        (nested ones included), and a later run initializes them again only if
        the pipeline changed since (other pass objects or options:
        `pipeline_identity`) or the context has other dialects registered; a
        run that changes neither keeps the previous initialization, and so
        does the pass's state. A pipeline a pass runs dynamically
        (`run_pipeline`) is initialized the first time it runs under each
        initialization. An exception raised here is reported as an error and
        fails the run; so does False, and the next run initializes again.

        Use it for expensive set-up that does not depend on the IR (pattern
        lists); it must not touch the IR.
        """
        return None

    def run_on_operation(self) -> None:
        """The pass body, run on `self.get_operation()`."""
        raise NotImplementedError(
            f"pass '{self.name}' does not define run_on_operation"
        )

    # --- while running ------------------------------------------------------

    def get_operation(self) -> Operation:
        # Called on almost every visit: asked, not checked first (a third of
        # the call), with None (not running) caught as the AttributeError.
        try:
            return self.execution_state.op  # pyright: ignore[reportOptionalMemberAccess]
        except AttributeError:
            raise self._not_running() from None

    def get_context(self) -> Context:
        return self._execution().run.context

    def get_analysis_manager(self) -> AnalysisManager:
        return self._execution().analysis_manager

    def get_analysis(self, analysis: type[A]) -> A:
        return self.get_analysis_manager().get_analysis(analysis)

    def get_cached_analysis(self, analysis: type[A]) -> A | None:
        return self.get_analysis_manager().get_cached_analysis(analysis)

    def get_cached_parent_analysis(
        self, analysis: type[A], parent: Operation | None = None
    ) -> A | None:
        """Cached analysis of `parent` (default: the direct parent op); never computes."""
        if parent is None:
            parent = self.get_operation().parent_op()
            if parent is None:
                return None
        return self.get_analysis_manager().get_cached_parent_analysis(analysis, parent)

    def get_cached_child_analysis(
        self, analysis: type[A], child: Operation
    ) -> A | None:
        return self.get_analysis_manager().get_cached_child_analysis(analysis, child)

    def get_child_analysis(self, analysis: type[A], child: Operation) -> A:
        return self.get_analysis_manager().get_child_analysis(analysis, child)

    def mark_all_analyses_preserved(self) -> None:
        """Declare the op unchanged: keeps every analysis and skips verification."""
        try:  # as in get_operation: None (not running) is the AttributeError
            self.execution_state.all_preserved_by = self  # pyright: ignore[reportOptionalMemberAccess]
        except AttributeError:
            raise self._not_running() from None

    def mark_analyses_preserved(self, *analyses: type) -> None:
        execution = self._execution()
        if execution.all_preserved_by is self:
            return
        preserved = execution.preserved
        if preserved is None or execution.preserved_by is not self:
            preserved = execution.preserved = PreservedAnalyses()
            execution.preserved_by = self
        preserved.preserve(*analyses)

    def signal_pass_failure(self) -> None:
        """Fail this pass on the current op; the pipeline stops after its siblings.

        The run loop learns of it from the one field it reads after every visit
        (`all_preserved_by`, cleared here), so the pass goes on with a copy of
        its state: what it declares preserved from now on goes to the copy,
        which the runner reads back after the body, as MLIR keeps a failed
        pass's preserved analyses."""
        execution = self.execution_state
        if execution is None:
            raise self._not_running()
        held = copy.copy(execution)
        held.failed = execution.failed = True
        execution.all_preserved_by = None
        self.execution_state = held

    @property
    def failed(self) -> bool:
        """Whether the pass failed on the op it is running on."""
        execution = self.execution_state
        return execution is not None and execution.failed

    def emit_error(self, op: Operation, message: str) -> Diagnostic:
        """Report an error at `op` (does not by itself fail the pass)."""
        return self._emit(Severity.ERROR, op, message)

    def emit_op_error(self, op: Operation, message: str) -> Diagnostic:
        """Report an error prefixed with the op name, as MLIR's `emitOpError`."""
        return self._emit(
            Severity.ERROR, op, f"'{operation_name(op).name}' op {message}"
        )

    def emit_warning(self, op: Operation, message: str) -> Diagnostic:
        return self._emit(Severity.WARNING, op, message)

    def emit_remark(self, op: Operation, message: str) -> Diagnostic:
        return self._emit(Severity.REMARK, op, message)

    @property
    def remarks(self) -> RemarkEmitter:
        """Optimization remarks of this run (`passflow.remarks`): MLIR's
        `remark::passed/missed/failed/analysis(loc, opts) << ...`, as
        `self.remarks.passed(op, RemarkOpts.name(...).category(...), add(...))`.

        Unlike `emit_remark`, these are filtered by category, numbered, kept to
        the last per op by the `final` policy and written to remark files; with
        no remark engine on the pass manager they cost nothing.
        """
        from passflow.remarks import RemarkEmitter  # for a pass that emits remarks

        run = self._execution().run
        return RemarkEmitter(run.remarks, run.emit)

    def emit_diagnostic(self, diagnostic: Diagnostic) -> None:
        """Report a diagnostic built whole (with its notes), so that it reaches
        the handlers in one piece (does not by itself fail the pass)."""
        self._execution().run.emit(diagnostic)

    def _emit(self, severity: Severity, op: Operation, message: str) -> Diagnostic:
        diagnostic = Diagnostic(severity, message, location(op), operation=op)
        self.emit_diagnostic(diagnostic)
        return diagnostic

    def run_pipeline(self, pipeline: PassPipeline, op: Operation) -> bool:
        """Run `pipeline` now on `op` (the current op or one nested in it).

        This is MLIR's dynamic pass pipeline: the pipeline shares this pass's
        analysis manager and instrumentation. Returns False on failure; whether
        that fails this pass is for the caller to decide.
        """
        return self._execution().run.run_dynamic_pipeline(self, pipeline, op)

    def _execution(self) -> PassExecutionState:
        execution = self.execution_state
        if execution is None:
            raise self._not_running()
        return execution

    def _not_running(self) -> PassflowError:
        return PassflowError(f"pass '{self.name}' is not running on an operation")

    # --- identity and copies ------------------------------------------------

    def clone(self: P) -> P:
        """A copy with the same options and fresh statistics and run state.

        Options are copied as their declarations say (lists, option structs and
        pipelines are never shared); any other list, dict or set the pass keeps
        on itself is copied one level deep, so clones running on different
        workers do not share mutable state. A pass holding anything else that
        clones must not share overrides `clone`.
        """
        new = copy.copy(self)
        new.__dict__ = {
            key: _copy_container(value) for key, value in self.__dict__.items()
        }
        new.__dict__.pop("execution_state", None)
        copy_option_values(self, new)
        reset_statistics(new)
        return new

    def options_text(self) -> str:
        """The `{key=value ...}` suffix of this pass in a textual pipeline."""
        declared = options_of(type(self))
        if not declared:
            return ""
        return format_options(
            option_values(self), declared, explicit=explicit_options(self)
        )

    def __str__(self) -> str:
        return (self.argument or f"unknown<{self.name}>") + self.options_text()

    def pretty(self, indent: int = 0) -> str:
        """This pass as `--dump-pass-pipeline` shows it: `str(self)`, indented.

        A pass that runs pipelines of its own (a pipeline schedule) shows them here.
        """
        return " " * indent + str(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}>"


def _copy_container(value: object) -> object:
    if isinstance(value, list | dict | set):
        return copy.copy(cast(object, value))
    return value


def walk_passes(pipelines: Iterable[PassPipeline]) -> Iterator[Pass]:
    """Every pass under `pipelines`, depth first in pipeline order: each pass,
    then the passes of its `nested_pipelines()`.

    The one walk over a pass tree. Clones of a pipeline have its shape, so a
    pass's position in this walk names it in every clone. Iterative, so
    nesting of any depth costs linear time.
    """
    stack: list[Iterator[Pass]] = [iter(pm.passes) for pm in reversed(list(pipelines))]
    while stack:
        pass_ = next(stack[-1], None)
        if pass_ is None:
            stack.pop()
            continue
        yield pass_
        nested = pass_.nested_pipelines()
        if nested:
            stack.extend(iter(pm.passes) for pm in reversed(nested))


def pipeline_identity(pipelines: Iterable[PassPipeline]) -> object:
    """A key equal for two states of `pipelines` exactly when they hold the same
    pass objects with the same options: what caches of clones, pickled copies
    and initialization compare."""
    pipelines = list(pipelines)
    return (
        tuple(id(pass_) for pass_ in walk_passes(pipelines)),
        tuple(str(pm) for pm in pipelines),
    )


class OperationPass(Pass):
    """A pass on one op: any op (op-agnostic) or only ops named `op_name`."""


class InterfacePass(OperationPass):
    """A pass on any op that has `interface` (an xDSL trait such as
    `CallableOpInterface` or `SymbolOpInterface`): MLIR's InterfacePass."""

    interface: ClassVar[type[OpTrait]]

    def can_schedule_on(self, name: OperationName) -> bool:
        return name.has_trait(self.interface)

    def can_schedule_on_op(self, op: Operation) -> bool:
        """MLIR's `isa<Interface>(op)`: an op of a symbol kind that has no name
        (`module {}`) is not a symbol."""
        return has_interface(op, self.interface)
