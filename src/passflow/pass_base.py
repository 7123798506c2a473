"""Passes: the unit of transformation, scheduled by a pass manager on one op at a time.

A pass is declared as a class: its display `name` (reports: `CSE`), its CLI
`argument` (`cse`), `summary`, `description`, the op it is restricted to (`op_name`),
the dialects it may create (`dependent_dialects`), its options and its statistics.
The same declarations drive parsing, printing, `--help` and generated docs.

While it runs, a pass holds per-run state on the instance (the op, the analysis
manager, whether it failed, what it preserved), exactly as MLIR's pass execution
state; the manager clones a pass for each worker, so `run_on_operation` must keep
any mutable state on `self` and touch nothing outside the op it was given.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, cast

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
from passflow.remarks import RemarkEmitter
from passflow.statistics import reset_statistics

if TYPE_CHECKING:
    from passflow.builder.constraints import Constraint
    from passflow.manager import OpPassManager
    from passflow.runner import RunState

__all__ = ["InterfacePass", "OperationPass", "Pass"]

A = TypeVar("A")
P = TypeVar("P", bound="Pass")


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
    ordering: ClassVar[tuple[Constraint, ...]] = ()
    """Ordering constraints checked wherever a `PipelineBuilder` places the pass."""

    _op: Operation | None = None
    _am: AnalysisManager | None = None
    _state: RunState | None = None
    _failed: bool = False
    _preserved: PreservedAnalyses | None = None

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
            from passflow.options import apply_options

            apply_options(self, options)

    def initialize_options(self, text: str) -> None:
        """Apply an option string (`max-iterations=3 top-down=false`); OptionError if bad."""
        from passflow.options import apply_options_string

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

    def get_dependent_dialects(self) -> Iterable[str]:
        """Dialects this pass may create ops of; loaded before the run starts."""
        return self.dependent_dialects

    def initialize(self, context: Context) -> bool | None:
        """Called once per run before any op is processed; return False to fail it.

        Use it for expensive set-up that does not depend on the IR (pattern lists);
        it must not touch the IR.
        """
        return None

    def run_on_operation(self) -> None:
        """The pass body, run on `self.get_operation()`."""
        raise NotImplementedError(
            f"pass '{self.name}' does not define run_on_operation"
        )

    # --- while running ------------------------------------------------------

    def get_operation(self) -> Operation:
        op = self._op
        if op is None:
            raise PassflowError(f"pass '{self.name}' is not running on an operation")
        return op

    def get_context(self) -> Context:
        return self._running_state().context

    def get_analysis_manager(self) -> AnalysisManager:
        am = self._am
        if am is None:
            raise PassflowError(f"pass '{self.name}' is not running on an operation")
        return am

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
        self._preserved = ALL_PRESERVED

    def mark_analyses_preserved(self, *analyses: type) -> None:
        preserved = self._preserved
        if preserved is ALL_PRESERVED:
            return
        if preserved is None:
            preserved = self._preserved = PreservedAnalyses()
        preserved.preserve(*analyses)

    def signal_pass_failure(self) -> None:
        """Fail this pass on the current op; the pipeline stops after its siblings."""
        self._failed = True

    @property
    def failed(self) -> bool:
        return self._failed

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
        state = self._running_state()
        return RemarkEmitter(state.remarks, state.emit)

    def _emit(self, severity: Severity, op: Operation, message: str) -> Diagnostic:
        diagnostic = Diagnostic(severity, message, location(op))
        self._running_state().emit(diagnostic)
        return diagnostic

    def run_pipeline(self, pipeline: OpPassManager, op: Operation) -> bool:
        """Run `pipeline` now on `op` (the current op or one nested in it).

        This is MLIR's dynamic pass pipeline: the pipeline shares this pass's
        analysis manager and instrumentation. Returns False on failure; whether
        that fails this pass is for the caller to decide.
        """
        return self._running_state().run_dynamic_pipeline(self, pipeline, op)

    def _running_state(self) -> RunState:
        state = self._state
        if state is None:
            raise PassflowError(f"pass '{self.name}' is not running")
        return state

    # --- identity and copies ------------------------------------------------

    def clone(self: P) -> P:
        """A copy with the same options and fresh statistics and run state."""
        new = copy.copy(self)
        new.__dict__ = {k: _copy_value(v) for k, v in self.__dict__.items()}
        for key in ("_op", "_am", "_state", "_failed", "_preserved"):
            new.__dict__.pop(key, None)
        reset_statistics(new)
        return new

    def options_text(self) -> str:
        """The `{key=value ...}` suffix of this pass in a textual pipeline."""
        from passflow.options import (
            explicit_options,
            format_options,
            option_values,
            options_of,
        )

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


def _copy_value(value: object) -> object:
    from passflow.manager import OpPassManager

    if isinstance(value, OpPassManager):
        return value.clone()
    if isinstance(value, list):
        return [_copy_value(v) for v in cast(list[object], value)]
    if isinstance(value, dict | set):
        return copy.copy(cast(object, value))
    return value


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
