"""Pass manager structure and execution: the rules of reference §2."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

import pytest
from xdsl.dialects import arith, builtin

from passflow import (
    Nesting,
    OperationPass,
    OpPassManager,
    OpToOpPassAdaptor,
    PassflowError,
    PassManager,
    PassNestingError,
    PassPipelineError,
    Statistic,
    ir,
)
from passflow.options import ListOption
from passflow.testing import TestFunctionPass, TestInterfacePass, TestModulePass

Parse = Callable[[str], ir.ModuleOp]

TWO_FUNCS = """\
func.func @a() {
  func.return
}
func.func @b() {
  func.return
}
"""


class Record(OperationPass):
    """Appends (label, op name, symbol) to a shared log; fails on `fail_on`."""

    argument = "record"
    log: ClassVar[list[tuple[str, str, str | None]]] = []

    def __init__(self, label: str = "r", fail_on: str | None = None) -> None:
        super().__init__()
        self.label = label
        self.fail_on = fail_on

    def run_on_operation(self) -> None:
        op = self.get_operation()
        sym = ir.symbol_name(op)
        Record.log.append((self.label, ir.operation_name(op).name, sym))
        if self.fail_on is not None and sym == self.fail_on:
            self.emit_op_error(op, f"{self.label} failed")
            self.signal_pass_failure()


class FuncRecord(Record):
    op_name = "func.func"


@pytest.fixture(autouse=True)
def _clear_log() -> None:
    Record.log.clear()


def run_errors(pm: PassManager, op: ir.Operation) -> list[str]:
    with pytest.raises(PassPipelineError) as info:
        pm.run(op)
    return [str(d) for d in info.value.diagnostics]


# --- building ---------------------------------------------------------------


def test_nesting_builds_the_textual_pipeline() -> None:
    pm = PassManager()
    fpm = pm.nest("func.func")
    fpm.add(TestFunctionPass())
    pm.add(TestModulePass())
    pm.nest_any().add(TestFunctionPass())
    assert str(pm) == (
        "builtin.module(func.func(test-function-pass),test-module-pass,"
        "any(test-function-pass))"
    )
    assert str(OpPassManager()) == "any()"


def test_explicit_nesting_refuses_mismatched_pass_with_mlir_message() -> None:
    pm = PassManager(nesting=Nesting.EXPLICIT)
    with pytest.raises(PassNestingError) as info:
        pm.add(TestFunctionPass())
    assert str(info.value) == (
        "Can't add pass 'TestFunctionPass' restricted to 'func.func' on a "
        "PassManager intended to run on 'builtin.module', did you intend to nest?"
    )


def test_implicit_nesting_adds_a_fresh_adaptor_each_time() -> None:
    pm = PassManager(nesting=Nesting.IMPLICIT)
    pm.add(TestFunctionPass())
    pm.add(TestModulePass())
    pm.add(TestFunctionPass())
    pm.add(TestFunctionPass())
    assert str(pm) == (
        "builtin.module(func.func(test-function-pass),test-module-pass,"
        "func.func(test-function-pass),func.func(test-function-pass))"
    )


def test_op_agnostic_pm_accepts_op_specific_passes() -> None:
    pm = OpPassManager("any")
    pm.add(TestFunctionPass())
    assert str(pm) == "any(test-function-pass)"


def test_dump_matches_mlir_layout() -> None:
    import io

    pm = PassManager()
    fpm = pm.nest("func.func")
    fpm.add(TestFunctionPass())
    fpm.add(TestFunctionPass())
    pm.add(TestModulePass())
    out = io.StringIO()
    pm.dump(out)
    assert out.getvalue() == (
        "Pass Manager with 2 passes:\n"
        "builtin.module(\n"
        "  func.func(\n"
        "    test-function-pass,\n"
        "    test-function-pass\n"
        "  ),\n"
        "  test-module-pass\n"
        ")\n"
    )
    empty = io.StringIO()
    PassManager().dump(empty)
    assert empty.getvalue() == "Pass Manager with 0 passes:\nbuiltin.module(\n\n)\n"


# --- running ----------------------------------------------------------------


def test_anchor_mismatch_is_reported_at_the_op(parse: Parse) -> None:
    module = parse(TWO_FUNCS)
    pm = PassManager("func.func")
    assert run_errors(pm, module) == [
        "input.mlir:0:0: error: can't run 'func.func' pass manager on 'builtin.module' op"
        "\ninput.mlir:0:0: note: to run it on the 'func.func' ops in 'builtin.module',"
        " write `builtin.module(func.func())`"
    ]


def test_nested_pipeline_runs_on_direct_children_only(parse: Parse) -> None:
    module = parse(
        TWO_FUNCS + "module @inner {\n  func.func @deep() {\n    func.return\n  }\n}\n"
    )
    pm = PassManager()
    pm.nest("func.func").add(Record())
    pm.run(module)
    assert [sym for _, _, sym in Record.log] == ["a", "b"]


def test_failing_child_does_not_stop_siblings_but_stops_parent(parse: Parse) -> None:
    module = parse(TWO_FUNCS + "func.func @c() {\n  func.return\n}\n")
    pm = PassManager()
    fpm = pm.nest("func.func")
    fpm.add(Record("first", fail_on="b"))
    fpm.add(Record("second"))
    pm.add(Record("module-level"))
    errors = run_errors(pm, module)
    assert errors == ["input.mlir:4:1: error: 'func.func' op first failed"]
    assert Record.log == [
        ("first", "func.func", "a"),
        ("second", "func.func", "a"),
        ("first", "func.func", "b"),
        ("first", "func.func", "c"),
        ("second", "func.func", "c"),
    ]


def test_every_failing_child_reports_in_program_order(parse: Parse) -> None:
    module = parse(TWO_FUNCS)
    pm = PassManager()
    pm.nest("func.func").add(Record("x", fail_on="a"))
    pm.nest("func.func").add(Record("y", fail_on="b"))
    # both adaptors merge, so both functions run and fail in order
    errors = run_errors(pm, module)
    assert errors == [
        "input.mlir:1:1: error: 'func.func' op x failed",
        "input.mlir:4:1: error: 'func.func' op y failed",
    ]


def test_adjacent_adaptors_merge_and_interleave_per_op(parse: Parse) -> None:
    module = parse(TWO_FUNCS)
    pm = PassManager()
    pm.nest("func.func").add(Record("A"))
    pm.nest("func.func").add(Record("B"))
    pm.run(module)
    assert [(label, sym) for label, _, sym in Record.log] == [
        ("A", "a"),
        ("B", "a"),
        ("A", "b"),
        ("B", "b"),
    ]
    assert str(pm) == "builtin.module(func.func(record,record))"


def test_merging_sorts_op_specific_pipelines_and_puts_any_last(ctx: ir.Context) -> None:
    from passflow.diagnostics import DiagnosticEngine
    from passflow.manager import OpToOpPassAdaptor
    from passflow.runner import RunState

    state = RunState(ctx, DiagnosticEngine(), None, True)

    def anchors(pm: OpPassManager) -> list[list[str]]:
        assert pm.finalize(state)
        return [
            [m.anchor for m in p.managers]
            for p in pm.passes
            if isinstance(p, OpToOpPassAdaptor)
        ]

    pm = OpPassManager("builtin.module")
    pm.nest("func.func").add(Record())
    pm.nest("foo.bar").add(Record())
    assert anchors(pm) == [["foo.bar", "func.func"]]

    pm = OpPassManager("builtin.module")
    pm.nest("func.func").add(Record())
    pm.nest_any().add(Record())
    assert anchors(pm) == [["func.func"], ["any"]]

    pm = OpPassManager("builtin.module")
    pm.nest_any().add(Record())
    pm.nest_any().add(Record())
    assert anchors(pm) == [["any"], ["any"]]

    # the any-pipeline cannot run on builtin.module (its pass is func-only): merged
    pm = OpPassManager("builtin.module")
    pm.nest_any().add(FuncRecord())
    pm.nest("builtin.module").add(Record())
    assert anchors(pm) == [["builtin.module", "any"]]

    # a pass in between blocks merging
    pm = OpPassManager("builtin.module")
    pm.nest("func.func").add(Record())
    pm.add(Record())
    pm.nest("func.func").add(Record())
    assert anchors(pm) == [["func.func"], ["func.func"]]


def test_the_runner_runs_an_adaptor_never_its_run_on_operation(parse: Parse) -> None:
    # MLIR's OpToOpPassAdaptor::runOnOperation() is unreachable: the runner
    # (passflow.runner.run_adaptor) runs an adaptor over its children itself.
    Record.log = []
    pm = PassManager()
    pm.nest("func.func").add(Record("nested"))
    [adaptor] = pm.passes
    assert isinstance(adaptor, OpToOpPassAdaptor)
    pm.run(parse(TWO_FUNCS))
    assert [sym for _, _, sym in Record.log] == ["a", "b"]
    with pytest.raises(PassflowError, match=r"runs through passflow\.runner"):
        adaptor.run_on_operation()


def test_any_pipeline_skips_ops_some_pass_cannot_run_on(parse: Parse) -> None:
    module = parse(TWO_FUNCS + "module @m {\n}\n" + '"test.foo"() : () -> ()\n')
    pm = PassManager()
    anypm = pm.nest_any()
    anypm.add(Record("generic"))
    pm.run(module)
    # generic pass: runs on isolated registered ops only (not the unregistered one)
    assert [(name, sym) for _, name, sym in Record.log] == [
        ("func.func", "a"),
        ("func.func", "b"),
        ("builtin.module", "m"),
    ]
    Record.log.clear()
    pm = PassManager()
    anypm = pm.nest_any()
    anypm.add(Record("generic"))
    anypm.add(FuncRecord("func-only"))
    pm.run(module)
    assert {name for _, name, _ in Record.log} == {"func.func"}


def test_unable_to_schedule_pass_on_op_specific_pipeline(parse: Parse) -> None:
    pm = PassManager()
    pm.add(TestInterfacePass())  # needs CallableOpInterface; modules lack it
    assert run_errors(pm, parse(TWO_FUNCS)) == [
        "<unknown>:0: error: unable to schedule pass 'TestInterfacePass' on a "
        "PassManager intended to run on 'builtin.module'!"
    ]


def test_schedule_checks_on_ops_matched_by_name(parse: Parse) -> None:
    module = parse('"test.foo"() : () -> ()\n')
    pm = PassManager()
    pm.nest("test.foo").add(Record())
    assert run_errors(pm, module) == [
        "input.mlir:1:1: error: 'test.foo' op trying to schedule a pass on an "
        "unregistered operation"
    ]
    module = parse("%c = arith.constant 1 : i32\n")
    pm = PassManager()
    pm.nest("arith.constant").add(Record())
    assert run_errors(pm, module) == [
        "input.mlir:1:6: error: 'arith.constant' op trying to schedule a pass on an "
        "operation not marked as 'IsolatedFromAbove'"
    ]
    assert Record.log == []


def test_op_agnostic_top_level_checks_the_root(parse: Parse) -> None:
    pm = PassManager("any")
    pm.add(Record("generic"))
    pm.add(FuncRecord("func-only"))
    assert run_errors(pm, parse(TWO_FUNCS)) == [
        "input.mlir:0:0: error: 'builtin.module' op trying to schedule pass "
        "'FuncRecord' on an unsupported operation"
    ]
    assert [label for label, _, _ in Record.log] == ["generic"]


class MakeInvalid(OperationPass):
    """Puts an `arith.constant` without a value at the top of the op's body."""

    argument = "make-invalid"
    preserve_all: bool = False

    def run_on_operation(self) -> None:
        block = self.get_operation().regions[0].blocks.first
        assert block is not None and block.first_op is not None
        block.insert_op_before(
            arith.ConstantOp.create(result_types=[builtin.i32]), block.first_op
        )
        if self.preserve_all:
            self.mark_all_analyses_preserved()


def test_verifier_runs_after_each_pass(parse: Parse) -> None:
    module = parse(TWO_FUNCS)
    pm = PassManager()
    pm.nest("func.func").add(MakeInvalid())
    pm.add(Record())
    errors = run_errors(pm, module)
    assert len(errors) == 2
    assert errors[0].startswith("<unknown>:0: error: 'arith.constant' op ")
    assert Record.log == []


def test_verifier_off_lets_invalid_ir_through(parse: Parse) -> None:
    module = parse(TWO_FUNCS)
    pm = PassManager()
    pm.enable_verifier(False)
    pm.nest("func.func").add(MakeInvalid())
    pm.run(module)
    assert ir.verify(module) is not None


def test_verifier_skipped_when_all_analyses_preserved(parse: Parse) -> None:
    module = parse(TWO_FUNCS)
    pm = PassManager()
    lying = MakeInvalid()
    lying.preserve_all = True
    pm.nest("func.func").add(lying)
    # the adaptor itself preserves nothing, but verifies its op non-recursively
    pm.run(module)
    assert ir.verify(module) is not None


def test_crash_is_reported_with_pass_and_op_and_siblings_continue(parse: Parse) -> None:
    class Boom(OperationPass):
        argument = "boom"
        op_name = "func.func"

        def run_on_operation(self) -> None:
            if ir.symbol_name(self.get_operation()) == "a":
                raise ValueError("kaboom")

    module = parse(TWO_FUNCS)
    pm = PassManager()
    fpm = pm.nest("func.func")
    fpm.add(Boom())
    fpm.add(Record())
    with pytest.raises(PassPipelineError) as info:
        pm.run(module)
    (diag,) = info.value.diagnostics
    assert str(diag).startswith(
        "input.mlir:1:1: error: pass 'Boom' crashed on 'func.func' op: ValueError: kaboom"
    )
    assert "Traceback" in diag.notes[0].message
    assert [sym for _, _, sym in Record.log] == ["b"]


def test_initialize_runs_once_per_initialization_and_can_fail(parse: Parse) -> None:
    # MLIR's rule: again only when the pipeline (or the dialects) changed.
    calls: list[str] = []

    class Init(OperationPass):
        argument = "init"
        ok = True

        def initialize(self, context: ir.Context) -> bool:
            calls.append("init")
            return self.ok

        def run_on_operation(self) -> None:
            calls.append("run")

    module = parse(TWO_FUNCS)
    pm = PassManager()
    pass_ = Init()
    pm.nest("func.func").add(pass_)
    pm.run(module)
    pm.run(module)
    assert calls == ["init", "run", "run", "run", "run"]

    calls.clear()
    pm.nest("func.func").add(Record())  # a new pipeline: initialized again
    pm.run(module)
    pm.run(module)
    assert calls == ["init", "run", "run", "run", "run"]

    calls.clear()
    failing = PassManager()
    bad = Init()
    bad.ok = False
    failing.nest("func.func").add(bad)
    for _ in range(2):  # a failed initialization is tried again
        with pytest.raises(PassPipelineError):
            failing.run(module)
    assert calls == ["init", "init"]


def test_dependent_dialects_are_loaded_before_the_run(
    parse: Parse, ctx: ir.Context
) -> None:
    seen: list[bool] = []

    class NeedsScf(OperationPass):
        argument = "needs-scf"
        dependent_dialects = ("scf",)

        def run_on_operation(self) -> None:
            seen.append("scf" in {d.name for d in self.get_context().loaded_dialects})

    module = parse(TWO_FUNCS)
    assert "scf" not in {d.name for d in ctx.loaded_dialects}
    pm = PassManager(context=ctx)
    pm.nest("func.func").add(NeedsScf())
    pm.run(module)
    assert seen == [True, True]


class Collecting(OperationPass):
    """A pass with a list option, a list of its own and a statistic."""

    argument = "collecting"
    op_name = "func.func"
    items = ListOption(int, help="numbers")
    runs = Statistic(description="functions seen")

    def __init__(self, **options: object) -> None:
        super().__init__(**options)
        self.seen: list[str] = []
        self.clone_during_run: Collecting | None = None

    def run_on_operation(self) -> None:
        self.runs += 1
        self.seen.append(ir.symbol_name(self.get_operation()) or "")
        if self.clone_during_run is None:
            self.clone_during_run = self.clone()


def test_clone_copies_options_state_but_not_run_state() -> None:
    original = Record("label", fail_on="x")
    copy = original.clone()
    assert copy is not original
    assert (copy.label, copy.fail_on) == ("label", "x")
    assert copy.execution_state is None


def test_clones_share_no_list_option_and_no_list_state() -> None:
    original = Collecting(items=[1, 2])
    original.seen.append("before")
    copy = original.clone()
    copy.items.append(3)
    copy.seen.append("copy")
    assert original.items == [1, 2]
    assert original.seen == ["before"]
    assert str(original) == "collecting{items={1,2}}"
    assert str(copy) == "collecting{items={1,2,3}}"


def test_clones_start_with_fresh_statistics_and_no_run_state(parse: Parse) -> None:
    pm = PassManager()
    collecting = Collecting()
    pm.nest("func.func").add(collecting)
    pm.run(parse(TWO_FUNCS))
    assert collecting.runs == 2
    assert collecting.execution_state is None  # reset after a real run
    with pytest.raises(PassflowError, match="is not running on an operation"):
        collecting.get_operation()
    during = collecting.clone_during_run
    assert during is not None and during.execution_state is None
    copy = collecting.clone()
    assert (copy.runs, collecting.runs) == (0, 2)


def test_get_operation_outside_a_run_is_an_error() -> None:
    from passflow import PassflowError

    with pytest.raises(PassflowError, match="is not running on an operation"):
        Record().get_operation()
    with pytest.raises(PassflowError, match="is not running on an operation"):
        Record().mark_all_analyses_preserved()


@dataclass
class Tally(OperationPass):
    """A dataclass pass: compared by value, so not hashable."""

    argument = "tally"
    op_name = "func.func"
    seen: list[str] = field(default_factory=lambda: list[str]())

    def run_on_operation(self) -> None:
        self.seen.append(ir.symbol_name(self.get_operation()) or "")


def test_a_dataclass_pass_runs_like_any_other(parse: Parse) -> None:
    pm = PassManager()
    tally = Tally()
    pm.nest("func.func").add(tally)
    pm.run(parse(TWO_FUNCS))
    pm.run(parse(TWO_FUNCS))
    assert tally.seen == ["a", "b", "a", "b"]
    assert tally.execution_state is None
