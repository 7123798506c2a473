"""Running passes: a pipeline on an op, and an adaptor over its children.

This is the hot path of passflow, MLIR's `OpToOpPassAdaptor::run`,
`runPipeline` and the adaptor's `runOnOperationImpl`, kept together as
`Pass.cpp` keeps them: `run_pipeline` runs a pipeline's passes on one op,
`run_pass` one pass on one op, and `run_adaptor` an adaptor's pipelines on the
children of its op, handing them to the run's executor (`passflow.execution`)
with `run_pipeline` as the way to run one. The pass managers
(`passflow.manager`) are the data and the scheduling rules this module reads:
which passes, which children, which checks, decided once per pipeline and op
name and cached, so dispatching a pass to an op costs a few attribute stores
and the call itself.

`RunState` is what every pass of one `PassManager.run` shares; each dispatch
gives the pass its own `PassExecutionState` for the duration.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from passflow import ir, verifier
from passflow.analysis import ALL_PRESERVED, AnalysisManager
from passflow.diagnostics import Diagnostic, DiagnosticEngine, PassflowError, Severity
from passflow.execution import ChildExecutor, ChildWork
from passflow.instrumentation import (
    InstrumentationError,
    PassInstrumentor,
    PipelineParentInfo,
)
from passflow.ir import Context, Operation, OperationName
from passflow.manager import OpToOpPassAdaptor
from passflow.pass_base import Pass, PassExecutionState, PassPipeline

if TYPE_CHECKING:  # a run without actions or remarks loads neither
    from passflow.actions import ActionHandler
    from passflow.remarks import RemarkEngine

__all__ = [
    "PassStep",
    "PipelineSteps",
    "RunState",
    "run_adaptor",
    "run_pass",
    "run_pipeline",
]

PassStep = tuple[Pass, bool, bool, PassExecutionState | None]
"""A pass of a pipeline as the run loop dispatches it: the pass, whether it is
an adaptor (`PassPipeline.adaptor_flags`), whether it checks each op
(`Pass.checks_each_op`), and its `PassExecutionState` in the run (None in a
direct plan, whose passes share one: looked up if they run the full path)."""


@dataclass(eq=False)
class PipelineSteps:
    """A pipeline's passes on ops of one name as the run loop dispatches them,
    made once per pipeline, op name and run (`RunState.pipeline_steps`).

    `direct` is the fast path's one decision: the passes, when nothing stands
    between the loop and each pass's `run_on_operation` (no instrumentation, no
    action handler, no scheduling error on this op name, no per-op check, no
    adaptor), so that `run_pipeline` dispatches them inline; None: every pass
    goes through `run_pass`. Both give the same IR, statistics, failures and
    diagnostics (tests/test_dispatch_paths.py).
    """

    passes: Sequence[Pass]
    """The pipeline's pass sequence these steps were made from (held, so that
    its identity keys the cache)."""
    steps: tuple[PassStep, ...]
    errors: tuple[str | None, ...] | None
    """Per pass, why it may not run on this op name (`schedule_errors`)."""
    direct: tuple[Pass, ...] | None
    shared: PassExecutionState
    """The `PassExecutionState` the direct passes share, one pass at a time:
    pointed at each op once, not once per pass."""
    running: bool = False
    """Whether the direct passes run on some op now: a pass that runs the same
    pipeline again (a dynamic pipeline) gets the full path for that inner run."""


@dataclass(eq=False)
class RunState:
    """What every pass of one `PassManager.run` shares: context, diagnostics,
    instrumentation, the verifier flag and how nested pipelines are executed.

    `action_handler` executes each pass as a `pass-execution` action (None: the
    pass runs directly); `emit_pass_errors` adds MLIR's `failed to run pass`
    error when a pass fails (`-emit-pass-error-on-failure`).
    """

    context: Context
    engine: DiagnosticEngine
    instrumentor: PassInstrumentor | None
    verify: bool
    executor: ChildExecutor | None = None
    generation: int = 0
    collected: list[Diagnostic] = field(default_factory=lambda: list[Diagnostic]())
    on_crash: Callable[[str], None] | None = None
    """Takes a crash's report instead of the diagnostic stream (crash recovery)."""
    _local: threading.local = field(default_factory=threading.local)
    action_handler: ActionHandler | None = None
    emit_pass_errors: bool = False
    reference_only: frozenset[int] = frozenset()
    """Ids of children of the run's op that its adaptors leave alone: ops present
    only so that symbol lookups find them (`PassManager.run(reference_only=)`)."""
    remarks: RemarkEngine | None = None
    """Receives the passes' remarks (`Pass.remarks`); None: remarks are off."""
    execution_states: dict[int, PassExecutionState] = field(
        default_factory=lambda: dict[int, PassExecutionState]()
    )
    """One `PassExecutionState` per pass (by identity: a dataclass pass is not
    hashable), reused from op to op: cheaper than a new one per dispatch, which
    would double the cost of dispatching."""
    _steps: dict[tuple[int, OperationName], PipelineSteps] = field(
        default_factory=lambda: dict[tuple[int, OperationName], PipelineSteps]()
    )

    def pipeline_steps(
        self, pm: PassPipeline, op: Operation, am: AnalysisManager
    ) -> PipelineSteps:
        """`pm`'s passes on `op` as the run loop dispatches them, made once per
        pipeline, op name and run, so that a dispatch reads them from one tuple.
        Cached by the identity of `pm.passes`, which the cache holds, so that an
        edited pipeline (or a new one at the same address) is never given
        another's steps."""
        passes = pm.passes
        name = ir.operation_name(op)
        key = (id(passes), name)
        found = self._steps.get(key)
        if found is not None and found.passes is passes:
            return found
        flags = tuple(
            (p, adaptor, p.checks_each_op)
            for p, adaptor in zip(passes, pm.adaptor_flags(), strict=True)
        )
        errors = pm.schedule_errors(name)
        hooked = self.instrumentor is not None or self.action_handler is not None
        direct = (
            None
            if hooked
            or errors is not None
            or any(adaptor or checks for _, adaptor, checks in flags)
            # A pass twice in one pipeline: its visits could not be told apart.
            or len({id(p) for p in passes}) != len(passes)
            else tuple(passes)
        )
        steps = tuple(
            (
                p,
                adaptor,
                checks,
                None if direct is not None else self.execution_state_of(p, op, am),
            )
            for p, adaptor, checks in flags
        )
        shared = PassExecutionState(op, am, self)
        found = self._steps[key] = PipelineSteps(passes, steps, errors, direct, shared)
        return found

    def execution_state_of(
        self, pass_: Pass, op: Operation, am: AnalysisManager
    ) -> PassExecutionState:
        """The pass's `PassExecutionState` in this run (made on first use)."""
        found = self.execution_states.get(id(pass_))
        if found is None:
            found = PassExecutionState(op, am, self)
            self.execution_states[id(pass_)] = found
        return found

    def emit(self, diagnostic: Diagnostic) -> None:
        """Record a diagnostic; inside `begin_capture` it is buffered for replay.

        Remarks travel as diagnostics (`RemarkEvent`) and go to the remark engine.
        """
        sink: list[Diagnostic] | None = getattr(self._local, "sink", None)
        if sink is not None:
            sink.append(diagnostic)
            return
        if self.remarks is not None:
            # Only a remark engine's emitters make events: with none, none come.
            from passflow.remarks import RemarkEvent  # loaded with the engine

            if isinstance(diagnostic, RemarkEvent):
                self.remarks.receive(diagnostic, self.emit)
                return
        self.collected.append(diagnostic)
        self.engine.deliver(diagnostic)

    def begin_capture(self) -> list[Diagnostic] | None:
        """Buffer this thread's diagnostics from now on; returns the previous
        buffer, for `end_capture`."""
        previous: list[Diagnostic] | None = getattr(self._local, "sink", None)
        self._local.sink = []
        return previous

    def end_capture(self, previous: list[Diagnostic] | None) -> list[Diagnostic]:
        """Stop buffering: the diagnostics buffered since `begin_capture`."""
        captured: list[Diagnostic] = self._local.sink
        self._local.sink = previous
        return captured

    def op_error(self, op: Operation, message: str) -> None:
        self.emit(
            Diagnostic(
                Severity.ERROR,
                f"'{ir.operation_name(op).name}' op {message}",
                ir.location(op),
            )
        )

    def crash(self, pass_: Pass, op: Operation, err: Exception) -> None:
        message = (
            f"pass '{pass_.name}' crashed on '{ir.operation_name(op).name}' op: "
            f"{type(err).__name__}: {err}"
        )
        import traceback  # for a crash only

        # The first frame is the runner calling the pass; the rest is the pass's own.
        frames = err.__traceback__.tb_next if err.__traceback__ else None
        trace = "".join(traceback.format_exception(type(err), err, frames)).rstrip()
        if self.on_crash is not None:
            self.on_crash(f"{ir.location(op)}: {message}\n{trace}")
            return
        diagnostic = Diagnostic(Severity.ERROR, message, ir.location(op))
        diagnostic.attach_note(trace)
        self.emit(diagnostic)

    def run_dynamic_pipeline(
        self, caller: Pass, pipeline: PassPipeline, op: Operation
    ) -> bool:
        """MLIR's dynamic pass pipeline: run `pipeline` on `op` (the caller's op
        or one nested in it) with the caller's analyses and instrumentation."""
        current = caller.get_operation()
        if op is not current and not ir.is_proper_ancestor(current, op):
            self.op_error(
                op,
                "Trying to schedule a dynamic pipeline on an operation that isn't "
                "nested under the current operation the pass is processing",
            )
            return False
        name = ir.operation_name(op).name
        if pipeline.op_name is not None and pipeline.op_name != name:
            self.op_error(
                op, f"can't run '{pipeline.anchor}' pass manager on '{name}' op"
            )
            return False
        if not pipeline.finalize(self):
            return False
        if not pipeline.initialize(self, self.generation):
            return False
        am = caller.get_analysis_manager()
        if op is not current:
            am = am.nest(op)
        info = PipelineParentInfo(threading.get_ident(), caller, pipeline)
        return run_pipeline(pipeline, op, am, self, info)


def _run_body(
    pass_: Pass, execution: PassExecutionState, state: RunState, is_adaptor: bool
) -> None:
    """The pass body, a crash turned into a failure: what an action executes."""
    try:
        if is_adaptor:
            run_adaptor(pass_, execution, state)
        else:
            pass_.run_on_operation()
    except InstrumentationError:
        raise
    except Exception as err:
        state.crash(pass_, execution.op, err)
        execution.failed = True


def run_pass(
    pass_: Pass,
    op: Operation,
    am: AnalysisManager,
    state: RunState,
    is_adaptor: bool,
    execution: PassExecutionState | None = None,
) -> bool:
    """MLIR's OpToOpPassAdaptor::run for one pass on one op (checks done by caller).

    `execution` is the pass's state object in this run
    (`RunState.pipeline_steps`; None: looked up); a pass that runs itself
    re-entrantly gets a fresh one, and its outer one back after.

    The body is the pass's `run_on_operation`, or `run_adaptor` for an adaptor
    (`is_adaptor`), as MLIR's `run` calls the adaptor's own `runOnOperation`.
    With an action handler, the body runs as a `pass-execution` action, which the
    handler may skip: then the pass neither ran nor failed, preserved nothing
    (its op's analyses are dropped) and is verified, its hooks fired, as in MLIR.
    """
    outer = pass_.execution_state  # set when the pass runs itself re-entrantly
    if outer is not None:
        execution = PassExecutionState(op, am, state)
    else:
        if execution is None:
            execution = state.execution_state_of(pass_, op, am)
        execution.op = op
        execution.analyses = am
        execution.failed = False
        execution.forget_preserved()
    pass_.execution_state = execution
    instrumentor = state.instrumentor
    try:
        if instrumentor is not None:
            instrumentor.run_before_pass(pass_, op)
        if not execution.failed:
            handler = state.action_handler
            if handler is None:
                _run_body(pass_, execution, state, is_adaptor)
            else:
                from passflow.actions import PassExecutionAction  # with a handler only

                handler(
                    functools.partial(_run_body, pass_, execution, state, is_adaptor),
                    PassExecutionAction(pass_, op, is_adaptor),
                )
        _take_back_state(pass_, execution)
        return _after_body(pass_, op, am, state, is_adaptor, execution)
    finally:
        pass_.execution_state = outer


def _take_back_state(pass_: Pass, execution: PassExecutionState) -> None:
    """Give `pass_` back `execution`, the state it ran with, after its body:
    a pass that signalled a failure holds a copy (`Pass.signal_pass_failure`),
    whose `preserved` is what it declared and goes back too."""
    held = pass_.execution_state
    if held is not execution and held is not None:
        execution.preserved = held.preserved
        execution.preserved_by = held.preserved_by
        execution.all_preserved_by = held.all_preserved_by
        pass_.execution_state = execution


def _after_body(
    pass_: Pass,
    op: Operation,
    am: AnalysisManager,
    state: RunState,
    is_adaptor: bool,
    execution: PassExecutionState,
) -> bool:
    """What follows a pass's body in `run_pass`: analyses it did not preserve
    dropped, the op verified, the after-hook, the pass error; whether it
    succeeded."""
    preserved = execution.preserved_of(pass_)
    if preserved is None or (
        preserved is not ALL_PRESERVED and not preserved.is_all()
    ):  # the pass may have changed the op
        am.invalidate(preserved)
        if not execution.failed and state.verify:
            problem = verifier.verify(op, recursive=not is_adaptor)
            if problem is not None:
                state.emit(problem)
                execution.failed = True
    instrumentor = state.instrumentor
    if instrumentor is not None:
        if execution.failed:
            instrumentor.run_after_pass_failed(pass_, op)
        else:
            instrumentor.run_after_pass(pass_, op)
    failed = execution.failed
    if failed and state.emit_pass_errors and not is_adaptor:
        # An adaptor fails because a nested pass did, which already said so.
        state.emit(
            Diagnostic(
                Severity.ERROR,
                f"failed to run pass '{pass_.name}'",
                ir.location(op),
            )
        )
    return not failed


def run_pipeline(
    pm: PassPipeline,
    op: Operation,
    am: AnalysisManager,
    state: RunState,
    parent: PipelineParentInfo | None,
) -> bool:
    """Run every pass of `pm` on `op`, stopping at the first failure.

    Pipeline hooks fire only for nested and dynamic pipelines (`parent` given);
    `run_after_pipeline` is skipped on failure, as in MLIR. The analyses of `op`
    are dropped when the pipeline ends, whatever the outcome.
    """
    instrumentor = state.instrumentor if parent is not None else None
    try:
        if instrumentor is not None and parent is not None:
            instrumentor.run_before_pipeline(pm.op_name, parent)
        plan = state.pipeline_steps(pm, op, am)
        if _runs_direct(plan):
            if not _run_direct(plan, (op,), state, am=am):
                return False
        elif not _run_steps(plan, pm, op, am, state):
            return False
        if instrumentor is not None and parent is not None:
            instrumentor.run_after_pipeline(pm.op_name, parent)
        return True
    finally:
        am.clear()


def run_children(work: ChildWork, state: RunState) -> bool:
    """Run every item of `work` on this thread, in program order; False if any
    child failed (`ChildWork.run_in_order`): `run_pipeline` for each, with each
    run of consecutive children that one direct plan takes (every function of
    a module, in `func.func(...)`) handed to `_run_direct` at once."""
    items = work.items
    pipelines = work.pipelines
    parent = work.am
    # One pipeline on ops of one name: every child is such an op
    # (`children_to_run`), one plan takes them all.
    uniform = len(pipelines) == 1 and pipelines[0].op_name is not None
    ok = True
    position = 0
    count = len(items)
    while position < count:
        index, child = items[position]
        pm = pipelines[index]
        plan = state.pipeline_steps(pm, child, parent)
        if not _runs_direct(plan):
            if not run_pipeline(pm, child, parent.nest(child), state, work.parent_info):
                ok = False
            position += 1
            continue
        end = count if uniform else _same_plan_end(items, position)
        children = [item[1] for item in items[position:end]]
        if not _run_direct(plan, children, state, parent=parent):
            ok = False
        position = end
    return ok


def _same_plan_end(items: Sequence[tuple[int, Operation]], position: int) -> int:
    """Where the run of items that `items[position]`'s plan takes ends: the
    first item of another pipeline or op name after it."""
    index, child = items[position]
    name = ir.operation_name(child)
    # Ops of a registered op's class have its name: no lookup per op.
    kind = name.op_class
    end = position + 1
    count = len(items)
    while end < count:
        other_index, other = items[end]
        if other_index != index or (
            type(other) is not kind and ir.operation_name(other) is not name
        ):
            break
        end += 1
    return end


def _run_steps(
    plan: PipelineSteps,
    pm: PassPipeline,
    op: Operation,
    am: AnalysisManager,
    state: RunState,
) -> bool:
    """Each pass of `plan` on `op` through `run_pass`, its scheduling checked
    first: the full path. False at the first failure."""
    errors = plan.errors
    for index, (pass_, is_adaptor, checks_op, execution) in enumerate(plan.steps):
        message = errors[index] if errors is not None else None
        if message is None and checks_op:
            message = pm.op_schedule_error(index, op)
        if message is not None:
            state.op_error(op, message)
            return False
        if not run_pass(pass_, op, am, state, is_adaptor, execution):
            return False
    return True


def _runs_direct(plan: PipelineSteps) -> bool:
    """Whether `_run_direct` may run `plan`: nothing stands between the loop
    and the passes (`PipelineSteps.direct`), and none of them is running now
    (a pass that runs a pipeline holding itself or a sibling, re-entrantly)."""
    direct = plan.direct
    return (
        direct is not None
        and not plan.running
        and all(p.execution_state is None for p in direct)
    )


def _run_direct(
    plan: PipelineSteps,
    ops: Sequence[Operation],
    state: RunState,
    *,
    am: AnalysisManager | None = None,
    parent: AnalysisManager | None = None,
) -> bool:
    """`run_pass` for each pass of `plan` on each of `ops`, inlined, less what
    `PipelineSteps.direct` rules out (hooks, actions, adaptors, per-op checks):
    the hot path, most of the cost of a trivial pass's visit. Each op's
    analyses are `am`'s, or (None) a manager nested in `parent`, made when a
    pass first asks for one (`PassExecutionState.analysis_manager`); cleared
    after the op. The passes hold the plan's shared execution state from the
    first op to the last, so that a visit costs the call and the check of what
    it preserved. An op's pipeline stops at its first failure; the others run.
    False if any op failed."""
    direct = plan.direct
    assert direct is not None  # `_runs_direct`
    execution = plan.shared
    execution.analyses_parent = parent
    plan.running = True
    for pass_ in direct:
        pass_.execution_state = execution
    ok = True
    try:
        for op in ops:
            execution.op = op
            execution.analyses = am
            execution.failed = False
            # Once an op (`PassExecutionState.forget_preserved`, inlined): each
            # pass's visit is told apart by the pass itself (the plan's passes
            # are distinct objects).
            execution.all_preserved_by = execution.preserved_by = None
            try:
                for pass_ in direct:
                    try:
                        pass_.run_on_operation()
                    except InstrumentationError:
                        raise
                    except Exception as err:
                        state.crash(pass_, op, err)
                        execution.failed = True
                        _after_visit(pass_, op, state, execution)
                        ok = False
                        break
                    # Not the pass (or a failure: `Pass.signal_pass_failure`
                    # clears it): the after-work. The pass set it; pyright sees
                    # only the None above.
                    if execution.all_preserved_by is not pass_ and not _after_visit(  # pyright: ignore[reportUnnecessaryComparison]
                        pass_, op, state, execution
                    ):
                        ok = False
                        break
            finally:
                made = execution.analyses
                if made is not None:
                    made.clear()
        return ok
    finally:
        for pass_ in direct:
            pass_.execution_state = None
        execution.analyses = execution.analyses_parent = None
        plan.running = False


def _after_visit(
    pass_: Pass, op: Operation, state: RunState, execution: PassExecutionState
) -> bool:
    """`run_pass`'s after-work for a visit of `_run_direct`'s: whether the
    pass succeeded."""
    _take_back_state(pass_, execution)
    return _after_body(pass_, op, execution.analysis_manager, state, False, execution)


def run_adaptor(adaptor: Pass, execution: PassExecutionState, state: RunState) -> None:
    """Run an adaptor's pipelines on the children of its op (MLIR's
    `OpToOpPassAdaptor::runOnOperationImpl`): the body `run_pass` runs for an
    `OpToOpPassAdaptor`, whose own `run_on_operation` is never called.

    The children its pipelines accept (`OpToOpPassAdaptor.children_to_run`, less
    the run's reference-only ops) go to the run's executor, serially on this
    thread when there is at most one. A failing child does not stop its
    siblings; the adaptor fails after all of them were processed.
    """
    if not isinstance(adaptor, OpToOpPassAdaptor):
        raise PassflowError(f"pass '{adaptor.name}' is not an OpToOpPassAdaptor")
    op = execution.op
    items = adaptor.children_to_run(op)
    if state.reference_only:
        skip = state.reference_only
        items = [item for item in items if id(item[1]) not in skip]
    # Only a recursive pipeline (`**name(...)`) finds ops below the children.
    nested = any(pm.recursive for pm in adaptor.managers) and any(
        child.parent_op() is not op for _, child in items
    )
    parent_info = PipelineParentInfo(threading.get_ident(), adaptor)

    def run_child(pm: PassPipeline, child: Operation, am: AnalysisManager) -> bool:
        # A closure, not a partial with keywords: a third of the cost per child.
        return run_pipeline(pm, child, am, state, parent_info)

    work = ChildWork(
        adaptor,
        op,
        execution.analysis_manager,
        state,
        items,
        parent_info,
        run_child,
        functools.partial(run_children, state=state),
    )
    executor = state.executor
    # Actions are numbered, logged and profiled in execution order: with a
    # handler installed, children run here, one after the other, in program
    # order, so that a debug counter skips the same pass applications every
    # run and observers see this process's IR (docs/decisions.md).
    ok = (
        work.run_serially()
        if len(items) <= 1
        or executor is None
        or state.action_handler is not None
        or nested  # executors ship direct children only
        else executor.run(work)
    )
    if not ok:
        execution.failed = True
