"""Test passes with the names and behaviour of MLIR's `mlir/test/lib/Pass` ones.

They exist so that lit tests written for mlir-opt's pass manager read the same
here: each does one thing the pass manager must cope with (fail, crash, break
the IR, break the parent, run a dynamic pipeline, count ops).
"""

from __future__ import annotations

import sys

from xdsl.dialects import arith, builtin
from xdsl.dialects.func import CallOp
from xdsl.ir import Block
from xdsl.traits import CallableOpInterface, SymbolOpInterface

from passflow import ir
from passflow.manager import OpPassManager
from passflow.options import ListOption, Option, PipelineOptions
from passflow.pass_base import InterfacePass, OperationPass
from passflow.registry import register_pass, register_pipeline
from passflow.statistics import Statistic

__all__ = [
    "TestDynamicPipelinePass",
    "TestFailurePass",
    "TestFunctionPass",
    "TestInterfacePass",
    "TestInvalidIRPass",
    "TestInvalidParentPass",
    "TestModulePass",
    "TestOptionsPass",
    "TestPassCrash",
    "TestStatisticPass",
]


def _function_body(op: ir.Operation) -> ir.Region:
    return op.regions[0]


def _prepend(block: Block, op: ir.Operation) -> None:
    if block.first_op is not None:
        block.insert_op_before(op, block.first_op)
    else:
        block.add_op(op)


class _TestPass(OperationPass):
    """Base of the test passes; keeps pytest from collecting them as tests."""

    __test__ = False


@register_pass
class TestModulePass(_TestPass):
    argument = "test-module-pass"
    summary = "Test a module pass in the pass manager"
    op_name = "builtin.module"

    def run_on_operation(self) -> None:
        pass


@register_pass
class TestFunctionPass(_TestPass):
    argument = "test-function-pass"
    summary = "Test a function pass in the pass manager"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        pass


@register_pass
class TestInterfacePass(InterfacePass, _TestPass):
    argument = "test-interface-pass"
    summary = (
        "Test an interface pass (running on FunctionOpInterface) in the pass manager"
    )
    interface = CallableOpInterface

    def run_on_operation(self) -> None:
        op = self.get_operation()
        self.emit_remark(op, "Executing interface pass on operation")


@register_pass
class TestPassCrash(_TestPass):
    argument = "test-pass-crash"
    summary = "Test a pass in the pass manager that always crashes"

    def run_on_operation(self) -> None:
        raise RuntimeError("test-pass-crash: deliberate crash")


@register_pass
class TestFailurePass(_TestPass):
    argument = "test-pass-failure"
    summary = "Test a pass in the pass manager that always fails"

    gen_diagnostics = Option(False, help="Generate a diagnostic message")

    def run_on_operation(self) -> None:
        if self.gen_diagnostics:
            self.emit_error(self.get_operation(), "illegal operation")
        self.signal_pass_failure()


@register_pass
class TestInvalidIRPass(InterfacePass, _TestPass):
    argument = "test-pass-create-invalid-ir"
    summary = "Test pass that adds an invalid operation in a function body"
    interface = CallableOpInterface

    signal_pass_failure_ = Option(
        False, argument="signal-pass-failure", help="Trigger a pass failure"
    )
    emit_invalid_ir = Option(True, help="Emit invalid IR")

    def run_on_operation(self) -> None:
        if self.signal_pass_failure_:
            self.signal_pass_failure()
        if not self.emit_invalid_ir:
            return
        block = _function_body(self.get_operation()).blocks.first
        if block is None:
            return
        # An `arith.constant` without its `value` property fails verification.
        _prepend(block, arith.ConstantOp.create(result_types=[builtin.i32]))


@register_pass
class TestInvalidParentPass(InterfacePass, _TestPass):
    argument = "test-pass-invalid-parent"
    summary = "Test a pass in the pass manager that makes the parent operation invalid"
    interface = CallableOpInterface

    def run_on_operation(self) -> None:
        block = _function_body(self.get_operation()).blocks.first
        if block is None:
            return
        _prepend(block, CallOp("some_unknown_func", [], []))


@register_pass
class TestStatisticPass(_TestPass):
    argument = "test-stats-pass"
    summary = "Test pass statistics"

    # Declared out of order on purpose: reports must sort them by name.
    num_ops2 = Statistic("num-ops2", "Number of operations counted one more time")
    num_ops = Statistic("num-ops", "Number of operations counted")

    def run_on_operation(self) -> None:
        count = sum(1 for _ in self.get_operation().walk())
        self.num_ops += count
        self.num_ops2 += count


@register_pass
class TestDynamicPipelinePass(_TestPass):
    argument = "test-dynamic-pipeline"
    summary = (
        "Tests the dynamic pipeline feature by applying a pipeline on a selected "
        "set of functions"
    )

    run_on_nested_operations = Option(
        False,
        help="This will apply the pipeline on nested operations under the visited "
        "operation.",
    )
    run_on_parent = Option(
        False,
        help="This will apply the pipeline on the parent operation if it exist, "
        "this is expected to fail.",
    )
    dynamic_pipeline = Option(
        "", help="The pipeline description that will run on the filtered function."
    )
    op_name_ = ListOption(
        str, argument="op-name", help="List of function name to apply the pipeline to"
    )

    def get_dependent_dialects(self) -> list[str]:
        from passflow.manager import Nesting, OpPassManager
        from passflow.pipeline_text import parse_pass_pipeline_into

        pm = OpPassManager("builtin.module", Nesting.IMPLICIT)
        try:
            parse_pass_pipeline_into(self.dynamic_pipeline, pm)
        except Exception:
            return []
        return pm.dependent_dialects()

    def run_on_operation(self) -> None:
        from passflow.manager import Nesting, OpPassManager
        from passflow.pipeline_text import parse_pass_pipeline_into

        current = self.get_operation()
        name = ir.operation_name(current).name
        print(f"Dynamic execute '{self.dynamic_pipeline}' on {name}", file=sys.stderr)
        if not self.dynamic_pipeline:
            print("Empty pipeline", file=sys.stderr)
            return
        if current.get_trait(SymbolOpInterface) is None:
            self.emit_warning(
                current, "Ignoring because not implementing SymbolOpInterface\n"
            )
            return
        symbol = ir.symbol_name(current) or ""
        if self.op_name_ and symbol not in self.op_name_:
            print(f"dynamic-pipeline skip op name: {symbol}", file=sys.stderr)
            return
        pm = OpPassManager(name, Nesting.IMPLICIT)
        parse_pass_pipeline_into(self.dynamic_pipeline, pm)
        if self.run_on_parent:
            parent = current.parent_op()
            if parent is not None and self.run_pipeline(pm, parent):
                self.signal_pass_failure()
            return
        if not self.run_on_nested_operations:
            if not self.run_pipeline(pm, current):
                self.signal_pass_failure()
            return
        print("Run on nested op", file=sys.stderr)
        targets = [
            op
            for op in current.walk()
            if op is not current
            and ir.is_isolated_from_above(op)
            and ir.operation_name(op).name == name
        ]
        for op in targets:
            print(f"Run on {ir.print_op(op)}", file=sys.stderr)
            if not self.run_pipeline(pm, op):
                self.signal_pass_failure()


@register_pass
class TestOptionsPass(_TestPass):
    argument = "test-options-pass"
    summary = "Test options parsing capabilities"
    op_name = "func.func"

    list = ListOption(int, help="Example list option")
    string_list = ListOption(str, help="Example string list option")
    string = Option("", help="Example string option")

    def run_on_operation(self) -> None:
        pass


class TestOptionsPipelineOptions(PipelineOptions):
    """The options of `test-options-pass-pipeline` (MLIR's TestOptionsPass::Options)."""

    list = ListOption(int, help="Example list option")
    string_list = ListOption(str, help="Example string list option")
    string = Option("", help="Example string option")


def _options_pipeline(pm: OpPassManager, options: TestOptionsPipelineOptions) -> None:
    pm.add(
        TestOptionsPass(
            list=options.list, string_list=options.string_list, string=options.string
        )
    )


def _nested_pipeline(pm: OpPassManager) -> None:
    module_pm = pm.nest("builtin.module")
    module_pm.add(TestModulePass())
    module_pm.nest("func.func").add(TestFunctionPass())
    pm.nest("func.func").add(TestFunctionPass())


def _textual_nested_pipeline(pm: OpPassManager) -> None:
    from passflow.pipeline_text import parse_pass_pipeline_into

    parse_pass_pipeline_into("test-pm-nested-pipeline", pm)


def _dump_pipeline(pm: OpPassManager) -> None:
    print(str(pm), file=sys.stderr)


register_pipeline(
    "test-options-pass-pipeline",
    "Parses options using pass pipeline registration",
    _options_pipeline,
    options=TestOptionsPipelineOptions,
)
register_pipeline(
    "test-pm-nested-pipeline",
    "Test a nested pipeline in the pass manager",
    _nested_pipeline,
)
register_pipeline(
    "test-textual-pm-nested-pipeline",
    "Test a nested pipeline in the pass manager",
    _textual_nested_pipeline,
)
register_pipeline(
    "test-dump-pipeline",
    "Dumps the pipeline build so far for debugging purposes",
    _dump_pipeline,
)
