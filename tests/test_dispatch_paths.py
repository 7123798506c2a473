"""The run loop's direct dispatch and its full path give the same run.

`RunState.pipeline_steps` decides, in one place, whether a pipeline's passes
are dispatched inline (`PipelineSteps.direct`) or each through `run_pass`.
Generated pipelines of passes that keep, change, break, fail or crash on
functions run both ways (the full path forced by an instrumentation that
observes nothing, or by an action handler that executes every action) and must
give the same IR, statistics, failure and diagnostics.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import ClassVar

import pytest
from xdsl.dialects.builtin import UnitAttr

from passflow import (
    OperationPass,
    OpPassManager,
    Pass,
    PassInstrumentation,
    PassManager,
    PassPipelineError,
    Statistic,
    ir,
)
from passflow.analysis import AnalysisManager
from passflow.diagnostics import DiagnosticEngine
from passflow.runner import RunState

Parse = Callable[[str], ir.ModuleOp]

FUNCTIONS = 5
TEXT = "".join(
    f"func.func @f{i}(%a: i32) -> i32 {{\n  func.return %a : i32\n}}\n"
    for i in range(FUNCTIONS)
)


class Counted:
    """An analysis that counts how often it was computed."""

    made: ClassVar[int] = 0

    def __init__(self, op: ir.Operation) -> None:
        type(self).made += 1


class Step(OperationPass):
    """A generated pass: what it does to function `target` (every function when
    None); it counts its visits."""

    argument = "step"
    op_name = "func.func"
    visits = Statistic(description="functions visited")

    def __init__(self, kind: str, target: str | None, serial: int) -> None:
        super().__init__()
        self.kind = kind
        self.target = target
        self.serial = serial

    def run_on_operation(self) -> None:
        self.visits += 1
        op = self.get_operation()
        if self.target is not None and ir.symbol_name(op) != self.target:
            self.mark_all_analyses_preserved()
            return
        kind = self.kind
        if kind == "keep":
            self.get_analysis(Counted)
            self.mark_all_analyses_preserved()
        elif kind == "change":
            op.attributes[f"step{self.serial}"] = UnitAttr()
        elif kind == "partial":
            self.get_analysis(Counted)
            self.mark_analyses_preserved(Counted)
        elif kind == "fail":
            self.emit_op_error(op, f"step {self.serial} failed")
            self.signal_pass_failure()
        elif kind == "refuse":  # fails without touching the op
            self.emit_op_error(op, f"step {self.serial} refused")
            self.mark_all_analyses_preserved()
            self.signal_pass_failure()
        elif kind == "crash":
            raise RuntimeError(f"step {self.serial} crashed")
        elif kind == "break":  # drops the terminator: the verifier objects
            block = op.regions[0].blocks[0]
            last = block.last_op
            assert last is not None
            block.erase_op(last)


class Observe(PassInstrumentation):
    """Has a hook, so the run dispatches through `run_pass`; observes nothing."""

    def run_before_pass(self, pass_: Pass, op: ir.Operation) -> None:
        del pass_, op


def execute_every_action(execute: Callable[[], None], action: object) -> None:
    del action
    execute()


KINDS = ("keep", "keep", "change", "partial", "fail", "refuse", "crash", "break")


def generated_spec(rng: random.Random) -> list[tuple[str, str | None]]:
    return [
        (
            rng.choice(KINDS),
            rng.choice([None, *(f"f{i}" for i in range(FUNCTIONS))]),
        )
        for _ in range(rng.randint(1, 6))
    ]


def run(
    parse: Parse,
    spec: list[tuple[str, str | None]],
    path: str,
    verify: bool,
    pass_errors: bool,
) -> tuple[bool, list[str], str, list[int], int]:
    """Outcome, diagnostics, printed IR, statistics and analyses computed."""
    module = parse(TEXT)
    pm = PassManager()
    pm.enable_verifier(verify)
    pm.enable_emit_pass_error_on_failure(pass_errors)
    seen: list[str] = []
    pm.add_diagnostic_handler(lambda d: seen.append(str(d)))
    if path == "instrumented":
        pm.add_instrumentation(Observe())
    elif path == "actions":
        pm.register_action_handler(execute_every_action)
    nested = pm.nest("func.func")
    steps = [Step(kind, target, i) for i, (kind, target) in enumerate(spec)]
    for step in steps:
        nested.add(step)
    Counted.made = 0
    try:
        pm.run(module)
        ok = True
    except PassPipelineError:
        ok = False
    return ok, seen, ir.print_op(module), [s.visits for s in steps], Counted.made


@pytest.mark.parametrize("seed", range(12))
def test_direct_and_full_dispatch_give_the_same_run(parse: Parse, seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(4):
        spec = generated_spec(rng)
        verify, pass_errors = rng.random() < 0.7, rng.random() < 0.5
        direct = run(parse, spec, "direct", verify, pass_errors)
        for path in ("instrumented", "actions"):
            assert run(parse, spec, path, verify, pass_errors) == direct, (
                spec,
                path,
                verify,
                pass_errors,
            )


def test_a_generated_run_exercises_every_outcome(parse: Parse) -> None:
    # The comparison above means something only if the runs differ in kind.
    spec: list[tuple[str, str | None]] = [
        ("change", "f1"),
        ("fail", "f2"),
        ("crash", "f3"),
        ("break", "f4"),
    ]
    ok, seen, printed, visits, _ = run(parse, spec, "direct", True, True)
    assert not ok
    assert "step0" in printed
    assert visits == [5, 5, 4, 3]
    assert any("step 1 failed" in d for d in seen)
    assert any("step 2 crashed" in d for d in seen)
    assert any("expect at least a terminator" in d for d in seen)
    assert any("failed to run pass 'Step'" in d for d in seen)
    assert len([d for d in seen if "failed to run pass" in d]) == 3


def _steps_direct(pm: PassManager, op: ir.Operation, **state: object) -> bool:
    """Whether the run would dispatch `pm`'s passes on `op` inline."""
    run_state = RunState(ir.default_context(), DiagnosticEngine(), None, False)
    for name, value in state.items():
        setattr(run_state, name, value)
    am = AnalysisManager.for_root(op)
    return run_state.pipeline_steps(pm, op, am).direct is not None


def test_the_one_place_that_decides_direct_dispatch(parse: Parse) -> None:
    module = parse(TEXT)
    func = ir.direct_children(module)[0]
    plain = PassManager("func.func")
    plain.add(Step("keep", None, 0))
    assert _steps_direct(plain, func)
    assert not _steps_direct(plain, func, action_handler=execute_every_action)
    hooked = PassManager("func.func")
    hooked.add_instrumentation(Observe())
    assert not _steps_direct(plain, func, instrumentor=hooked.instrumentor)
    # An adaptor in the pipeline, or a pass refused on this op name.
    assert not _steps_direct(
        PassManager.parse("builtin.module(func.func(cse))"), module
    )
    assert not _steps_direct(plain, module)


class Log(OperationPass):
    """Logs the function it runs on."""

    argument = "log"
    op_name = "func.func"

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    def run_on_operation(self) -> None:
        self.log.append(f"log {ir.symbol_name(self.get_operation())}")
        self.mark_all_analyses_preserved()


class RunsItsPipeline(OperationPass):
    """Runs the pipeline it belongs to again on its function (once deep),
    checks that its own state came back, and then breaks its function (drops
    the terminator) without preserving anything: the verifier must see it,
    whatever the inner run's passes preserved."""

    argument = "runs-its-pipeline"
    op_name = "func.func"

    def __init__(self, log: list[str], pipeline: OpPassManager) -> None:
        super().__init__()
        self.log = log
        self.pipeline = pipeline
        self.depth = 0

    def run_on_operation(self) -> None:
        op = self.get_operation()
        self.log.append(f"enter {ir.symbol_name(op)} at depth {self.depth}")
        if self.depth == 0:
            self.depth += 1
            ok = self.run_pipeline(self.pipeline, op)
            self.depth -= 1
            self.log.append(f"inner {'ok' if ok else 'failed'}")
            block = op.regions[0].blocks[0]
            last = block.last_op
            assert last is not None
            block.erase_op(last)
        self.log.append(f"back on {ir.symbol_name(self.get_operation())}")


@pytest.mark.parametrize("path", ["direct", "instrumented"])
def test_a_pipeline_run_again_inside_itself(parse: Parse, path: str) -> None:
    log: list[str] = []
    pm = PassManager()
    seen: list[str] = []
    pm.add_diagnostic_handler(lambda d: seen.append(d.message))
    if path == "instrumented":
        pm.add_instrumentation(Observe())
    nested = pm.nest("func.func")
    nested.add(Log(log))
    nested.add(RunsItsPipeline(log, nested))
    nested.add(Log(log))
    with pytest.raises(PassPipelineError):
        pm.run(parse(TEXT.split("func.func @f2")[0]))
    once = [
        "log {0}",
        "enter {0} at depth 0",
        "log {0}",
        "enter {0} at depth 1",
        "back on {0}",
        "log {0}",
        "inner ok",
        "back on {0}",
    ]
    assert log == [line.format(f) for f in ("f0", "f1") for line in once]
    assert seen == ["empty block: expect at least a terminator"] * 2


class Names(Pass):
    """Logs the name of every op it runs on (any op)."""

    argument = "names"

    def __init__(self, log: list[str], label: str) -> None:
        super().__init__()
        self.log = log
        self.label = label

    def run_on_operation(self) -> None:
        op = self.get_operation()
        self.log.append(f"{self.label} {ir.operation_name(op).name}")
        self.mark_all_analyses_preserved()


MIXED = """
func.func @f0() {
  func.return
}
builtin.module {
}
builtin.module {
}
func.func @f1() {
  func.return
}
builtin.module {
}
func.func @f2() {
  func.return
}
"""


def test_consecutive_children_of_mixed_names_run_in_program_order(
    parse: Parse,
) -> None:
    # The serial loop runs each stretch of children of one name as a batch:
    # an op of another name ends it.
    log: list[str] = []
    pm = PassManager()
    nested = pm.nest_any()
    first, second = Names(log, "first"), Names(log, "second")
    nested.add(first)
    nested.add(second)
    pm.run(parse(MIXED))
    names = ["func.func", "builtin.module", "builtin.module", "func.func"]
    names += ["builtin.module", "func.func"]
    assert log == [f"{which} {name}" for name in names for which in ("first", "second")]
    assert first.execution_state is None and second.execution_state is None


class RunsASibling(OperationPass):
    """Runs, on its function, a pipeline holding a pass of its own pipeline
    (which is held by the run's state meanwhile)."""

    argument = "runs-a-sibling"
    op_name = "func.func"

    def __init__(self, log: list[str], sibling: Pass) -> None:
        super().__init__()
        self.log = log
        inner = OpPassManager("func.func")
        inner.add(sibling)
        self.inner = inner

    def run_on_operation(self) -> None:
        op = self.get_operation()
        ok = self.run_pipeline(self.inner, op)
        self.log.append(f"inner {'ok' if ok else 'failed'} on {ir.symbol_name(op)}")
        self.mark_all_analyses_preserved()


def test_a_sibling_run_inside_the_batch_gets_its_state_back(parse: Parse) -> None:
    log: list[str] = []
    sibling = Log(log)
    pm = PassManager()
    nested = pm.nest("func.func")
    nested.add(sibling)
    nested.add(RunsASibling(log, sibling))
    nested.add(Log(log))
    pm.run(parse(TEXT))
    once = ["log {0}", "log {0}", "inner ok on {0}", "log {0}"]
    assert log == [line.format(f"f{i}") for i in range(FUNCTIONS) for line in once]
    assert all(p.execution_state is None for p in nested.passes)


class Interrupts(OperationPass):
    """Raises what the run must not swallow, on its second function."""

    argument = "interrupts"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        if ir.symbol_name(self.get_operation()) == "f1":
            raise KeyboardInterrupt
        self.mark_all_analyses_preserved()


def test_no_pass_keeps_its_state_after_an_interrupted_run(parse: Parse) -> None:
    pm = PassManager()
    nested = pm.nest("func.func")
    before, after = Log([]), Log([])
    passes = [before, Interrupts(), after]
    for pass_ in passes:
        nested.add(pass_)
    with pytest.raises(KeyboardInterrupt):
        pm.run(parse(TEXT))
    assert all(p.execution_state is None for p in passes)
    assert before.log == ["log f0", "log f1"] and after.log == ["log f0"]


class Computes(OperationPass):
    """Computes `Counted` on its function and checks its manager's op."""

    argument = "computes"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        assert self.get_analysis_manager().operation is self.get_operation()
        self.get_analysis(Counted)
        self.mark_all_analyses_preserved()


class FindsCached(Log):
    """Records whether `Counted` is cached on its function."""

    argument = "finds-cached"

    def run_on_operation(self) -> None:
        found = self.get_cached_analysis(Counted) is not None
        self.log.append(f"{ir.symbol_name(self.get_operation())} {found}")
        self.mark_all_analyses_preserved()


def function_pipeline(path: str, passes: list[Pass]) -> PassManager:
    """A pass manager running `passes` on each function: through the direct
    loop, or the full path (`"instrumented"`: a hook that observes nothing)."""
    pm = PassManager()
    if path == "instrumented":
        pm.add_instrumentation(Observe())
    nested = pm.nest("func.func")
    for pass_ in passes:
        nested.add(pass_)
    return pm


@pytest.mark.parametrize("path", ["direct", "instrumented"])
def test_each_function_has_its_own_analyses_and_drops_them_after(
    parse: Parse, path: str
) -> None:
    # The direct loop makes a function's analysis manager only when a pass
    # asks: it must be that function's, keep what one pass computed for the
    # next, and be gone before the next function.
    log: list[str] = []
    pm = function_pipeline(path, [FindsCached(log), Computes(), FindsCached(log)])
    Counted.made = 0
    pm.run(parse(TEXT))
    assert Counted.made == FUNCTIONS
    assert log == [f"f{i} {found}" for i in range(FUNCTIONS) for found in (False, True)]


UNREGISTERED = """
"test.a"() : () -> ()
"test.b"() : () -> ()
"test.a"() : () -> ()
"test.c"() : () -> ()
"""


def test_unregistered_ops_of_other_names_are_not_taken_for_the_anchor(
    parse: Parse,
) -> None:
    # Unregistered ops may share a class: the adaptor's lookup by class must not
    # take `test.b` for `test.a`. (A pass may not run on an unregistered op, as
    # in MLIR: each `test.a`, and only those, says so.)
    pm = PassManager()
    pm.nest("test.a").add(Names([], "a"))
    with pytest.raises(PassPipelineError) as raised:
        pm.run(parse(UNREGISTERED))
    message = "'test.a' op trying to schedule a pass on an unregistered operation"
    assert [str(d) for d in raised.value.diagnostics] == [
        f"input.mlir:{line}:1: error: {message}" for line in (2, 4)
    ]


class FailsThenKeeps(OperationPass):
    """On `f1`: computes `Counted` and declares everything preserved before and
    after signalling a failure. Logs whether it starts each function unfailed."""

    argument = "fails-then-keeps"
    op_name = "func.func"

    def __init__(self, log: list[str]) -> None:
        super().__init__()
        self.log = log

    def run_on_operation(self) -> None:
        name = ir.symbol_name(self.get_operation())
        self.log.append(f"{name} failed={self.failed}")
        if name == "f1":
            self.get_analysis(Counted)
            self.mark_all_analyses_preserved()
            self.signal_pass_failure()
            self.mark_all_analyses_preserved()
            assert self.failed
        else:
            self.mark_all_analyses_preserved()


@pytest.mark.parametrize("path", ["direct", "instrumented"])
def test_a_failure_is_seen_whatever_the_pass_declares_after_it(
    parse: Parse, path: str
) -> None:
    # The direct loop reads one field after each visit: a failure signalled
    # before `mark_all_analyses_preserved` must still stop that function's
    # pipeline, leave the others running, and leave the pass its own state.
    log: list[str] = []
    failing = FailsThenKeeps(log)
    pm = function_pipeline(path, [failing, Log(log)])
    module = parse(TEXT)
    with pytest.raises(PassPipelineError):
        pm.run(module)
    expected: list[str] = []
    for i in range(FUNCTIONS):
        expected.append(f"f{i} failed=False")
        if i != 1:
            expected.append(f"log f{i}")
    assert log == expected
    assert failing.execution_state is None


class Declares(OperationPass):
    """On each function, one of: declares `Counted` and then everything
    preserved (`"both"`), everything (`"all"`), or nothing while changing the
    function (`"change"`) or breaking it (`"break"`: drops its terminator);
    `plan` gives the choice for a function and this pass's visit of it."""

    argument = "declares"
    op_name = "func.func"

    def __init__(self, plan: Callable[[str, int], str]) -> None:
        super().__init__()
        self.plan = plan
        self.seen: dict[str, int] = {}

    def run_on_operation(self) -> None:
        op = self.get_operation()
        name = ir.symbol_name(op) or ""
        visit = self.seen[name] = self.seen.get(name, 0) + 1
        choice = self.plan(name, visit)
        if choice == "both":
            self.mark_analyses_preserved(Counted)
            self.mark_all_analyses_preserved()
        elif choice == "all":
            self.mark_all_analyses_preserved()
        elif choice == "break":
            block = op.regions[0].blocks[0]
            last = block.last_op
            assert last is not None
            block.erase_op(last)
        else:
            op.attributes[f"changed{visit}"] = UnitAttr()


def run_declarations(parse: Parse, path: str, passes: list[Pass | None]) -> list[str]:
    """The log of the `FindsCached` passes (each None in `passes`) in a
    `func.func` pipeline of `Computes` then `passes`."""
    log: list[str] = []
    pipeline = [FindsCached(log) if p is None else p for p in passes]
    function_pipeline(path, [Computes(), *pipeline]).run(parse(TEXT))
    return log


@pytest.mark.parametrize("path", ["direct", "instrumented"])
def test_what_one_pass_declared_is_not_taken_for_the_next(
    parse: Parse, path: str
) -> None:
    # A pass that declares some analyses and then everything leaves its
    # declarations behind it; the next pass, declaring nothing, must not be
    # taken to have preserved them.
    first = Declares(lambda name, visit: "both")
    second = Declares(lambda name, visit: "change")
    log = run_declarations(parse, path, [first, None, second, None])
    assert log == [f"f{i} {found}" for i in range(FUNCTIONS) for found in (True, False)]


def breaks_unverified(parse: Parse, path: str, passes: list[Pass]) -> list[str]:
    """The diagnostics of a verified `func.func` pipeline of `passes`."""
    seen: list[str] = []
    pm = function_pipeline(path, passes)
    pm.add_diagnostic_handler(lambda d: seen.append(str(d)))
    with pytest.raises(PassPipelineError):
        pm.run(parse(TEXT))
    return seen


BROKEN = "input.mlir:{}:1: error: empty block: expect at least a terminator"


@pytest.mark.parametrize("path", ["direct", "instrumented"])
def test_what_a_pass_declared_on_one_function_is_not_taken_for_the_next(
    parse: Parse, path: str
) -> None:
    # The direct loop tells visits apart by the pass: what the pass declared
    # on f0 must not count for its visit of f1, where it breaks the function
    # and the verifier must see it.
    keeps_f0 = Declares(lambda name, visit: "all" if name == "f0" else "break")
    seen = breaks_unverified(parse, path, [keeps_f0])
    assert seen == [BROKEN.format(1 + 3 * i) for i in range(1, FUNCTIONS)]


@pytest.mark.parametrize("path", ["direct", "instrumented"])
def test_a_pass_twice_in_one_pipeline(parse: Parse, path: str) -> None:
    # Its two visits of a function could not be told apart by the pass: such
    # a pipeline takes the full path, and the second visit is verified.
    twice = Declares(lambda name, visit: "all" if visit % 2 else "break")
    seen = breaks_unverified(parse, path, [twice, twice])
    assert seen == [BROKEN.format(1 + 3 * i) for i in range(FUNCTIONS)]
