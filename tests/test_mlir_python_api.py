"""MLIR's Python pass-manager tests, ported to passflow.

Each `test_*` below ports one test function of upstream MLIR's
`mlir/test/python/pass_manager.py` or `mlir/test/python/python_pass.py` (its
name is in the docstring), rewritten for passflow's classes: what a user of
MLIR's bindings writes should work here too. Where passflow differs on purpose
the test pins passflow's behaviour and docs/decisions.md says why.

The rest of the file tests what the port added beyond upstream's checks:
errors for wrong arguments, the keywords' interplay, `PassDisplayMode`.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest
from xdsl.dialects import arith
from xdsl.rewriter import Rewriter

from passflow import (
    IRPrinterConfig,
    OpPassManager,
    Pass,
    PassDisplayMode,
    PassflowError,
    PassManager,
    PassPipelineError,
    PipelineParseError,
    ir,
)
from passflow.testing import TestModulePass

CONSTANT_FUNC = """module {
  func.func @main() {
    %0 = arith.constant 10 : i64
    return
  }
}"""

ADD_FUNC = """module {
  func.func @add(%a: i64, %b: i64) -> i64 {
    %sum = arith.addi %a, %b : i64
    return %sum : i64
  }
}"""


def module_of(text: str) -> ir.ModuleOp:
    return ir.parse_module(text, ir.default_context(), "in.mlir")


# --- pass_manager.py ------------------------------------------------------------


def test_capsule_round_trip() -> None:
    """testCapsule: MLIR hands a pass manager to C through a capsule and back.

    passflow has no C API: a pass manager's portable form is its text, and a
    pass manager parsed from it is the same pipeline.
    """
    pm = PassManager.parse("builtin.module(func.func(cse),canonicalize)")
    again = PassManager.parse(str(pm))
    assert str(again) == str(pm)
    assert again is not pm


def test_construct() -> None:
    """testConstruct: an empty pass manager prints its anchor and no passes."""
    assert str(PassManager("any")) == "any()"
    assert str(PassManager("builtin.module")) == "builtin.module()"
    # MLIR's PassManager() is op-agnostic; passflow's stays module-anchored
    # (docs/decisions.md).
    assert str(PassManager()) == "builtin.module()"
    assert str(PassManager("any", ir.default_context())) == "any()"


def test_parse_success() -> None:
    """testParseSuccess: an unknown pass is a ValueError; a known one round-trips."""
    with pytest.raises(
        ValueError, match="'not-existing-pass' does not refer to a registered pass"
    ):
        PassManager.parse("builtin.module(func.func(not-existing-pass{json=false}))")
    pm = PassManager.parse("builtin.module(func.func(print-op-stats{json=false}))")
    assert str(pm) == "builtin.module(func.func(print-op-stats{json=false}))"
    assert pm.anchor == "builtin.module"


def test_parse_spaced_pipeline() -> None:
    """testParseSpacedPipeline: spaces and newlines for readability are allowed."""
    pm = PassManager.parse(
        """builtin.module(
        func.func( print-op-stats{ json=false } )
    )"""
    )
    assert str(pm) == "builtin.module(func.func(print-op-stats{json=false}))"


def test_parse_fail() -> None:
    """testParseFail: MLIR's located message, source line and caret."""
    with pytest.raises(ValueError) as caught:
        PassManager.parse("any(unknown-pass)")
    assert str(caught.value) == (
        "MLIR Textual PassPipeline Parser:1:1: error: 'unknown-pass' does not "
        "refer to a registered pass or pass pipeline\nunknown-pass\n^\n"
    )
    assert isinstance(caught.value, PassflowError)
    assert isinstance(caught.value, PipelineParseError)


def test_add() -> None:
    """testAdd: `pm.add("cse")` appends passes parsed from text."""
    pm = PassManager("any", ir.default_context())
    assert str(pm) == "any()"
    pm.add("cse")
    assert str(pm) == "any(cse)"
    pm.add("cse")
    assert str(pm) == "any(cse,cse)"


def test_invalid_nesting() -> None:
    """testInvalidNesting: an op-restricted pass under another anchor.

    Upstream uses normalize-memrefs; passflow's test-module-pass is restricted
    to builtin.module in the same way.
    """
    with pytest.raises(ValueError) as caught:
        PassManager.parse("func.func(test-module-pass)")
    assert TestModulePass.op_name == "builtin.module"
    assert str(caught.value).splitlines() == [
        "Can't add pass 'TestModulePass' restricted to 'builtin.module' on a "
        "PassManager intended to run on 'func.func', did you intend to nest?",
        "failed to add `test-module-pass` with options ``",
    ]


def test_run_pipeline(capsys: pytest.CaptureFixture[str]) -> None:
    """testRunPipeline: an `any` pipeline runs on a func.func op itself."""
    module = module_of("func.func @successfulParse() { return }")
    func = next(iter(module.body.block.ops))
    PassManager.parse("any(print-op-stats{json=false})").run(func)
    err = capsys.readouterr().err
    assert "Operations encountered:" in err
    assert "func.func" in err
    assert "func.return" in err
    assert "builtin.module" not in err


def test_run_pipeline_error() -> None:
    """testRunPipelineError: a run that fails raises with every diagnostic.

    MLIR raises `MLIRError`; passflow's `PassPipelineError` has the same
    first line and holds the diagnostics (`.diagnostics`, `.errors`). MLIR adds
    a `see current operation` note, which passflow does not print.
    """
    ctx = ir.default_context(allow_unregistered=True)
    module = ir.parse_module('"test.op"() : () -> ()', ctx, "-")
    op = next(iter(module.body.block.ops))
    op.detach()
    pm = PassManager.parse("any(cse)", ctx)
    with pytest.raises(PassPipelineError) as caught:
        pm.run(op)
    assert str(caught.value).splitlines()[:2] == [
        "Failure while executing pass pipeline:",
        "-:1:1: error: 'test.op' op trying to schedule a pass on an unregistered "
        "operation",
    ]
    assert len(caught.value.errors) == 1


def test_post_pass_op_invalidation() -> None:
    """testPostPassOpInvalidation: op handles after a pass rewrote the module.

    MLIR's Python op objects are invalidated by a run; passflow's are the xDSL
    ops themselves, which stay usable: the function shows the rewritten body
    and the erased constants are detached.
    """
    module = module_of(
        """module {
  arith.constant 10 : i64
  func.func @foo() {
    arith.constant 10 : i64
    return
  }
}"""
    )
    outer_const, func_op = list(module.body.block.ops)
    inner_const = list(func_op.walk())[1]
    assert isinstance(inner_const, arith.ConstantOp)
    PassManager.parse("builtin.module(canonicalize)").run(module)
    assert "arith.constant" not in ir.print_op(func_op)
    assert "func.return" in ir.print_op(func_op)
    assert outer_const.parent is None
    assert inner_const.parent is None
    assert "arith.constant" not in ir.print_op(module)


def test_print_ir_after_all(capsys: pytest.CaptureFixture[str]) -> None:
    """testPrintIrAfterAll: no argument prints after every pass only."""
    pm = PassManager.parse("builtin.module(canonicalize)")
    pm.enable_ir_printing()
    pm.run(module_of(CONSTANT_FUNC))
    err = capsys.readouterr().err
    assert err.startswith(
        "// -----// IR Dump After Canonicalizer (canonicalize) //----- //\n"
    )
    assert "IR Dump Before" not in err
    assert "arith.constant" not in err


def test_print_ir_before_and_after_all(capsys: pytest.CaptureFixture[str]) -> None:
    """testPrintIrBeforeAndAfterAll."""
    pm = PassManager.parse("builtin.module(canonicalize)")
    pm.enable_ir_printing(print_before_all=True, print_after_all=True)
    pm.run(module_of(CONSTANT_FUNC))
    err = capsys.readouterr().err
    before = "// -----// IR Dump Before Canonicalizer (canonicalize) //----- //\n"
    after = "// -----// IR Dump After Canonicalizer (canonicalize) //----- //\n"
    assert err.startswith(before)
    before_dump, after_dump = err[len(before) :].split(after)
    assert "%0 = arith.constant 10 : i64" in before_dump
    assert "arith.constant" not in after_dump


DENSE_FUNC = """module {
  func.func @main() -> tensor<3xi64> {
    %0 = arith.constant dense<[1, 2, 3]> : tensor<3xi64>
    return %0 : tensor<3xi64>
  }
}"""

RESOURCE_FUNC = """module {
  func.func @main() -> tensor<3xi64> {
    %0 = arith.constant dense_resource<blob1> : tensor<3xi64>
    return %0 : tensor<3xi64>
  }
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x010000000000000002000000000000000300000000000000"
    }
  }
#-}"""


def test_print_ir_large_limit_elements(capsys: pytest.CaptureFixture[str]) -> None:
    """testPrintIrLargeLimitElements: elements past the limit are elided."""
    pm = PassManager.parse("builtin.module(canonicalize)")
    pm.enable_ir_printing(large_elements_limit=2)
    pm.run(module_of(DENSE_FUNC))
    err = capsys.readouterr().err
    assert "arith.constant dense_resource<__elided__> : tensor<3xi64>" in err
    assert "dense<[1, 2, 3]>" not in err
    pm = PassManager.parse("builtin.module(canonicalize)")
    pm.enable_ir_printing(large_elements_limit=3)
    pm.run(module_of(DENSE_FUNC))
    assert "dense<[1, 2, 3]>" in capsys.readouterr().err


@pytest.mark.parametrize(
    "limit",
    [
        "resource",  # testPrintIrLargeResourceLimit
        "elements",  # testPrintIrLargeResourceLimitVsElementsLimit
    ],
)
def test_print_ir_large_resource_limit(
    limit: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dump names the resource and never prints its blob."""
    pm = PassManager.parse("builtin.module(canonicalize)")
    if limit == "resource":
        pm.enable_ir_printing(large_resource_limit=4)
    else:
        pm.enable_ir_printing(large_elements_limit=1)
    pm.run(module_of(RESOURCE_FUNC))
    err = capsys.readouterr().err
    # xDSL renames a resource it has seen before in the process (blob1_0).
    assert "arith.constant dense_resource<blob1" in err
    assert '"0x01' not in err


def test_print_ir_debug_info_and_generic_form(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """enable_debug_info and print_generic_op_form, as MLIR's bindings take them."""
    pm = PassManager.parse("builtin.module(canonicalize)")
    pm.enable_ir_printing(enable_debug_info=True, print_generic_op_form=True)
    pm.run(module_of(CONSTANT_FUNC))
    err = capsys.readouterr().err
    assert '"func.func"()' in err
    assert "loc(" in err


def test_print_ir_tree(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """testPrintIrTree: a second printer writes MLIR's file tree, the first
    still prints to stderr."""
    module = module_of(CONSTANT_FUNC)
    pm = PassManager.parse("builtin.module(canonicalize)")
    pm.enable_ir_printing()
    pm.run(module)
    pm.enable_ir_printing(tree_printing_dir_path=str(tmp_path))
    pm.run(module)
    tree = sorted(
        os.path.relpath(os.path.join(root, name), tmp_path)
        for root, _, files in os.walk(tmp_path)
        for name in files
    )
    assert tree == [
        os.path.join("builtin_module_no-symbol-name", "0_canonicalize.mlir")
    ]
    assert capsys.readouterr().err.count("IR Dump After Canonicalizer") == 2


def test_str_shows_the_merged_pipeline_after_a_run() -> None:
    """MLIR's `__str__` prints the pipeline as it runs: adjacent nested
    pipelines on the same op are merged when the run starts."""
    pm = PassManager()
    pm.add("func.func(cse),func.func(topological-sort)")
    assert str(pm) == "builtin.module(func.func(cse),func.func(topological-sort))"
    pm.run(module_of(ADD_FUNC))
    assert str(pm) == "builtin.module(func.func(cse,topological-sort))"


def test_an_any_pass_manager_runs_on_whatever_it_is_given() -> None:
    """`PassManager("any")`: op-agnostic, so it takes an op-restricted pass
    without nesting and refuses it only on an op it cannot run on."""
    pm = PassManager("any")
    pm.add("test-module-pass")
    pm.run(module_of(ADD_FUNC))
    func = next(iter(module_of(ADD_FUNC).body.block.ops))
    func.detach()
    with pytest.raises(PassPipelineError, match="on an unsupported operation"):
        pm.run(func)


# --- python_pass.py -------------------------------------------------------------


class AddiToMuli:
    """Upstream's CustomPass2 applies a PDL pattern (addi to muli); this is the
    same rewrite as a callable object."""

    def __call__(self, op: ir.Operation, pass_: Pass) -> None:
        for add in [o for o in op.walk() if isinstance(o, arith.AddiOp)]:
            Rewriter.replace_op(add, arith.MuliOp(add.lhs, add.rhs))


def test_custom_pass(capsys: pytest.CaptureFixture[str]) -> None:
    """testCustomPass: a function and a callable object run as passes, named,
    printed, beside a pass given as text."""
    module = module_of(ADD_FUNC)

    def custom_pass_1(op: ir.Operation, pass_: Pass) -> None:
        print("hello from pass 1!!!", file=sys.stderr)

    pm = PassManager("any")
    pm.enable_ir_printing()
    pm.add(custom_pass_1)
    pm.add(AddiToMuli(), "CustomPass2")
    pm.add("cse")  # upstream: convert-arith-to-llvm, which passflow lacks
    pm.run(module)
    err = capsys.readouterr().err
    hello = err.index("hello from pass 1!!!")
    first = err.index("// -----// IR Dump After custom_pass_1 () //----- //")
    second = err.index("// -----// IR Dump After CustomPass2 () //----- //")
    third = err.index("// -----// IR Dump After CSE (cse) //----- //")
    assert hello < first < second < third
    assert "arith.addi" in err[first:second]
    assert "arith.muli" in err[second:third]
    assert str(pm) == "any(unknown<custom_pass_1>,unknown<CustomPass2>,cse)"


def test_custom_pass_that_fails(capsys: pytest.CaptureFixture[str]) -> None:
    """testCustomPass, its second half: `pass_.signal_pass_failure()` fails the
    run; outside a run it is an error."""
    calls: list[str] = []

    def custom_pass_that_fails(op: ir.Operation, pass_: Pass) -> None:
        calls.append("hello from pass that fails")
        pass_.signal_pass_failure()

    pm = PassManager("any")
    pm.add(custom_pass_that_fails, "CustomPassThatFails")
    with pytest.raises(
        PassPipelineError, match=r"^Failure while executing pass pipeline"
    ):
        pm.run(module_of(ADD_FUNC))
    assert calls == ["hello from pass that fails"]
    with pytest.raises(PassflowError, match="is not running on an operation"):
        pm.passes[0].signal_pass_failure()


def test_custom_pass_description_and_op_name() -> None:
    """`argument`, `description` and `op_name` of a Python-defined pass: it
    prints as its argument, and runs only on ops of its op_name."""
    seen: list[str] = []

    def record(op: ir.Operation, pass_: Pass) -> None:
        seen.append(ir.operation_name(op).name)

    pm = PassManager("builtin.module")
    fpm = pm.nest("func.func")
    fpm.add(record, argument="record-ops", description="records", op_name="func.func")
    added = fpm.passes[0]
    assert (added.name, added.argument, added.description, added.op_name) == (
        "record",
        "record-ops",
        "records",
        "func.func",
    )
    assert str(pm) == "builtin.module(func.func(record-ops))"
    pm.run(module_of(ADD_FUNC))
    assert seen == ["func.func"]
    with pytest.raises(PassflowError, match="did you intend to nest"):
        PassManager("builtin.module").add(record, op_name="func.func")


def test_each_callable_is_its_own_pass_class() -> None:
    """As MLIR gives each Python pass its own TypeID, so that reports keep two
    callables apart."""
    pm = PassManager("any")
    pm.add(lambda op, pass_: None, "a")
    pm.add(lambda op, pass_: None, "a")
    first, second = pm.passes
    assert type(first) is not type(second)
    assert first.clone().name == "a"


def test_callable_object_without_name_is_named_by_its_class() -> None:
    pm = PassManager("any")
    pm.add(AddiToMuli())
    assert pm.passes[0].name == "AddiToMuli"


# --- beyond upstream: wrong arguments -------------------------------------------


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (3, r"takes a Pass, pipeline text or a callable run\(op, pass_\), not int"),
        (Pass, r"the pass class Pass, not a pass: add an instance, Pass\(\)"),
        (PassManager, "not the class PassManager"),
        (ir.print_op, r"cannot be called as run\(op, pass_\)"),
    ],
)
def test_add_refuses_what_is_not_a_pass(given: object, message: str) -> None:
    pm = PassManager("any")
    with pytest.raises(TypeError, match=message):
        pm.add(given)  # type: ignore[arg-type]
    assert len(pm) == 0


def test_text_on_a_nested_manager_says_where_text_goes() -> None:
    """Text is parsed by the top-level PassManager, as in MLIR; a nested
    OpPassManager says what to call instead of failing on an attribute."""
    nested = PassManager().nest("func.func")
    assert isinstance(nested, OpPassManager)
    with pytest.raises(TypeError, match="parse_pass_pipeline_into"):
        nested.add("cse")  # type: ignore[arg-type]


def test_a_description_for_something_else_is_refused() -> None:
    pm = PassManager("any")
    with pytest.raises(TypeError, match="not pipeline text"):
        pm.add("cse", name="x")
    with pytest.raises(TypeError, match="not the pass 'CSE'"):
        pm.add(PassManager.parse("any(cse)").passes[0], argument="x")


def test_bad_text_adds_nothing() -> None:
    pm = PassManager("any")
    pm.add("cse")
    with pytest.raises(PipelineParseError) as caught:
        pm.add("cse,nope")
    assert isinstance(caught.value, ValueError)
    assert str(pm) == "any(cse)"


def test_printing_keywords_or_a_config() -> None:
    pm = PassManager()
    with pytest.raises(TypeError, match="by keyword"):
        pm.enable_ir_printing(True)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not both"):
        pm.enable_ir_printing(IRPrinterConfig(after_all=True), print_before_all=True)
    assert not pm.instrumentor


@pytest.mark.parametrize(("after_all", "dumps"), [(True, 1), (False, 0)])
def test_print_after_failure_prints_only_failures(
    after_all: bool, dumps: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """MLIR: after a pass only when it fails, and only with print_after_all."""

    def fails(op: ir.Operation, pass_: Pass) -> None:
        pass_.signal_pass_failure()

    pm = PassManager("any")
    pm.add("cse")
    pm.add(fails)
    pm.enable_ir_printing(print_after_failure=True, print_after_all=after_all)
    with pytest.raises(PassPipelineError):
        pm.run(module_of(ADD_FUNC))
    err = capsys.readouterr().err
    assert err.count("IR Dump After") == dumps
    assert err.count("IR Dump After fails Failed () //") == dumps


def test_print_after_change_and_module_scope(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pm = PassManager.parse("builtin.module(func.func(canonicalize,cse))")
    pm.enable_ir_printing(print_after_change=True, print_module_scope=True)
    pm.run(module_of(CONSTANT_FUNC))
    err = capsys.readouterr().err
    assert err.count("IR Dump After") == 1
    assert (
        "// -----// IR Dump After Canonicalizer (canonicalize) ('func.func' "
        "operation: @main) //----- //\nbuiltin.module {"
    ) in err


def test_module_scope_needs_threading_off() -> None:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        pm = PassManager(executor=pool)
        with pytest.raises(PassflowError, match="without disabling multi-threading"):
            pm.enable_ir_printing(print_module_scope=True)


def test_statistics_display_mode() -> None:
    pm = PassManager.parse("builtin.module(func.func(test-function-pass))")
    stream = io.StringIO()
    pm.enable_statistics(PassDisplayMode.LIST, stream)
    pm.run(module_of(ADD_FUNC))
    assert "(S) 1 counter" in stream.getvalue()
    assert "'func.func' Pipeline" not in stream.getvalue()


def test_verifier_and_timing_as_in_mlir() -> None:
    pm = PassManager.parse("builtin.module(cse)")
    pm.enable_verifier(enable=False)
    assert not pm.verify_each
    pm.enable_timing(stream=io.StringIO())
    pm.run(module_of(ADD_FUNC))
