"""Test passes with the names and behaviour of MLIR's `mlir/test/lib` ones.

They exist so that lit tests written for mlir-opt's pass manager read the same
here: each does one thing the pass manager must cope with (fail, crash, break
the IR, break the parent, run a dynamic pipeline, count ops, parse options, print
an analysis, rewrite test-dialect ops). Sources: `mlir/test/lib/Pass/
TestPassManager.cpp`, `TestDynamicPipeline.cpp`, `mlir/test/lib/Analysis/
TestLiveness.cpp` and `mlir/test/lib/Dialect/Test/TestPatterns.cpp`.
"""

from __future__ import annotations

import sys
from enum import Enum

from xdsl.dialects import arith, builtin
from xdsl.ir import Block
from xdsl.traits import CallableOpInterface, SymbolOpInterface

from passflow import ir
from passflow.analyses.liveness import Liveness
from passflow.diagnostics import PassflowError
from passflow.manager import Nesting, OpPassManager
from passflow.options import INT, ListOption, Option, PipelineOptions
from passflow.pass_base import InterfacePass, OperationPass
from passflow.pipeline_text import parse_pass_pipeline_into
from passflow.registry import register_pipeline
from passflow.statistics import Statistic
from passflow.testing.test_dialect import TestCallOp, generated_patterns
from passflow.transforms.greedy import (
    GreedyRewriteConfig,
    PatternSet,
    apply_patterns_greedily,
)

__all__ = [
    "TestBusyWorkPass",
    "TestDynamicPipelinePass",
    "TestEnum",
    "TestFailurePass",
    "TestFunctionPass",
    "TestInterfacePass",
    "TestInvalidIRPass",
    "TestInvalidParentPass",
    "TestLivenessPass",
    "TestModulePass",
    "TestOptionsPass",
    "TestOptionsPipelineOptions",
    "TestOptionsSuperPass",
    "TestOptionsSuperPipelineOptions",
    "TestPassCrash",
    "TestPassCrashOnOp",
    "TestPatternDriver",
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


class TestModulePass(_TestPass):
    argument = "test-module-pass"
    summary = "Test a module pass in the pass manager"
    op_name = "builtin.module"

    def run_on_operation(self) -> None:
        pass


class TestFunctionPass(_TestPass):
    argument = "test-function-pass"
    summary = "Test a function pass in the pass manager"
    op_name = "func.func"

    counter = Statistic("counter", "Number of invocations")

    def run_on_operation(self) -> None:
        self.counter += 1


class TestInterfacePass(InterfacePass, _TestPass):
    argument = "test-interface-pass"
    summary = (
        "Test an interface pass (running on FunctionOpInterface) in the pass manager"
    )
    interface = CallableOpInterface

    def run_on_operation(self) -> None:
        op = self.get_operation()
        self.emit_remark(op, "Executing interface pass on operation")


class TestPassCrash(_TestPass):
    argument = "test-pass-crash"
    summary = "Test a pass in the pass manager that always crashes"

    def run_on_operation(self) -> None:
        raise RuntimeError("test-pass-crash: deliberate crash")


class TestPassCrashOnOp(_TestPass):
    argument = "test-pass-crash-on-op"
    summary = (
        "Test a pass that crashes only on IR holding an op of a given name "
        "(a seeded bug for passflow-reduce)"
    )

    op = Option("test.crash", help="The name of the op the pass crashes on")

    def run_on_operation(self) -> None:
        for op in self.get_operation().walk():
            if ir.operation_name(op).name == self.op:
                raise RuntimeError(f"test-pass-crash-on-op: found '{self.op}'")


class TestBusyWorkPass(_TestPass):
    argument = "test-busy-work"
    summary = (
        "Test pass that does a fixed amount of pure-Python work per op and "
        "changes nothing (a stand-in for an expensive analysis, for benchmarks)"
    )

    rounds = Option(1500, help="Iterations of the busy loop per op")

    def run_on_operation(self) -> None:
        total = 0
        for op in self.get_operation().walk():
            seed = len(op.name)
            for i in range(self.rounds):
                total = (total * 31 + seed + i) % 1_000_003
        self.mark_all_analyses_preserved()
        if total < 0:  # never: keeps the loop from looking dead
            self.signal_pass_failure()


class TestFailurePass(_TestPass):
    argument = "test-pass-failure"
    summary = "Test a pass in the pass manager that always fails"

    gen_diagnostics = Option(False, help="Generate a diagnostic message")

    def run_on_operation(self) -> None:
        if self.gen_diagnostics:
            self.emit_error(self.get_operation(), "illegal operation")
        self.signal_pass_failure()


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


class TestInvalidParentPass(InterfacePass, _TestPass):
    argument = "test-pass-invalid-parent"
    summary = "Test a pass in the pass manager that makes the parent operation invalid"
    interface = CallableOpInterface

    def run_on_operation(self) -> None:
        op = self.get_operation()
        block = _function_body(op).blocks.first
        if block is None:
            return
        call = TestCallOp("some_unknown_func")
        ir.set_location(call, ir.location(op))
        _prepend(block, call)


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
        pm = OpPassManager("builtin.module", Nesting.IMPLICIT)
        try:
            parse_pass_pipeline_into(self.dynamic_pipeline, pm)
        except PassflowError:
            return []
        return pm.dependent_dialects()

    def run_on_operation(self) -> None:
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
        try:
            parse_pass_pipeline_into(self.dynamic_pipeline, pm)
        except PassflowError as err:
            # MLIR prints the parser's error and goes on with the (empty) pipeline.
            sys.stderr.write(str(err).rstrip("\n") + "\n")
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


class TestEnum(Enum):
    """The values of `test-options-pass`'s `enum` option: MLIR's
    `cl::values(clEnumValN(0, "zero", ...), ...)`, spelled by name."""

    ZERO = "zero"
    """Example zero value"""
    ONE = "one"
    """Example one value"""
    TWO = "two"
    """Example two value"""


class TestOptionsPass(_TestPass):
    argument = "test-options-pass"
    summary = "Test options parsing capabilities"
    op_name = "func.func"

    # `ListOption<int>`: C `int` elements, hence "integer argument" in errors.
    list = ListOption(INT, help="Example list option")
    string_list = ListOption(str, help="Example string list option")
    string = Option("", help="Example string option")
    enum = Option(TestEnum.ZERO, help="Example enum option")

    def run_on_operation(self) -> None:
        pass


class TestOptionsPipelineOptions(PipelineOptions):
    """The options of `test-options-pass-pipeline` (MLIR's TestOptionsPass::Options),
    and the element type of `test-options-super-pass`'s list."""

    list = ListOption(INT, help="Example list option")
    string_list = ListOption(str, help="Example string list option")
    string = Option("", help="Example string option")
    enum = Option(TestEnum.ZERO, help="Example enum option")


def _options_pipeline(pm: OpPassManager, options: TestOptionsPipelineOptions) -> None:
    pm.add(
        TestOptionsPass(
            list=options.list,
            string_list=options.string_list,
            string=options.string,
            enum=options.enum,
        )
    )


class TestOptionsSuperPass(_TestPass):
    """A list option whose elements are option structs: `list={{enum=one list={2}},
    {enum=two}}`, each element parsed and printed as `test-options-pass`'s options."""

    argument = "test-options-super-pass"
    summary = "Test options of options parsing capabilities"
    op_name = "func.func"

    list = ListOption(
        TestOptionsPipelineOptions,
        help="Example list of PassPipelineOptions option",
    )

    def run_on_operation(self) -> None:
        pass


class TestOptionsSuperPipelineOptions(PipelineOptions):
    """The options of `test-options-super-pass-pipeline` (MLIR's
    TestOptionsSuperPass::Options)."""

    super_list = ListOption(
        TestOptionsPipelineOptions,
        argument="super-list",
        help="Example list of PassPipelineOptions option",
    )


def _options_super_pipeline(
    pm: OpPassManager, options: TestOptionsSuperPipelineOptions
) -> None:
    pm.add(TestOptionsSuperPass(list=options.super_list))


class TestLivenessPass(InterfacePass, _TestPass):
    """Print the `Liveness` of each symbol op, as MLIR's `test-print-liveness`:
    `Testing : <symbol>` and the analysis's report, on stderr."""

    argument = "test-print-liveness"
    summary = "Print the contents of a constructed liveness information."
    interface = SymbolOpInterface

    def run_on_operation(self) -> None:
        op = self.get_operation()
        sys.stderr.write(f"Testing : {ir.symbol_name(op) or ''}\n")
        self.get_analysis(Liveness).print(sys.stderr)


class TestPatternDriver(_TestPass):
    """Apply the test dialect's declarative patterns greedily, with folding and
    dead-code removal (MLIR's `applyPatternsGreedily` with its default config).

    `test-patterns` is the name mlir-opt's lit tests use (MLIR later renamed the
    pass `test-greedy-patterns` and gave it options); it runs on functions.
    """

    argument = "test-patterns"
    summary = "Run test dialect patterns"
    op_name = "func.func"

    _patterns: PatternSet | None = None

    def run_on_operation(self) -> None:
        patterns = self._patterns
        if patterns is None:
            patterns = self._patterns = PatternSet(generated_patterns)
        # MLIR's default GreedyRewriteConfig: bottom-up (canonicalize's top-down
        # is its own option's default).
        result = apply_patterns_greedily(
            self.get_operation(),
            patterns,
            GreedyRewriteConfig(top_down=False),
            self.get_context(),
        )
        if not result.modified:
            self.mark_all_analyses_preserved()


def _nested_pipeline(pm: OpPassManager) -> None:
    module_pm = pm.nest("builtin.module")
    module_pm.add(TestModulePass())
    module_pm.nest("func.func").add(TestFunctionPass())
    pm.nest("func.func").add(TestFunctionPass())


def _textual_nested_pipeline(pm: OpPassManager) -> None:
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
    "test-options-super-pass-pipeline",
    "Parses options of PassPipelineOptions using pass pipeline registration",
    _options_super_pipeline,
    options=TestOptionsSuperPipelineOptions,
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
