"""MLIR's test dialect and the test passes mlir-opt's `mlir/test/Pass` suite uses:
test-print-liveness, test-patterns, test-options(-super)-pass(-pipeline), the
`counter` of test-function-pass, test-pass-invalid-parent and the dynamic
pipeline's failure on its parent."""

from __future__ import annotations

import io

import pytest
from xdsl.dialects import test as xdsl_test
from xdsl.dialects.builtin import StringAttr
from xdsl.traits import SymbolOpInterface

from passflow import Nesting, PassManager, PassPipelineError, ir
from passflow.diagnostics import Diagnostic, IRParseError, PipelineParseError
from passflow.pipeline_text import parse_pass_pipeline
from passflow.statistics_report import statistics_report
from passflow.testing import passes as tp
from passflow.testing import test_dialect


def _run(pipeline: str, text: str, *, name: str = "input.mlir") -> ir.ModuleOp:
    module = ir.parse_module(text, ir.default_context(), name)
    pm = PassManager()
    pm.assign(parse_pass_pipeline(pipeline))
    pm.run(module)
    return module


# --- the test dialect -------------------------------------------------------


def test_unknown_test_ops_parse_as_unregistered_ops() -> None:
    # MLIR's test dialect allows unknown operations: no --allow-unregistered-dialect.
    module = ir.parse_module('"test.op"() : () -> ()\n"test.op"() : () -> ()\n')
    ops = list(module.body.block.ops)
    assert [ir.operation_name(op).name for op in ops] == ["test.op", "test.op"]
    assert not any(ir.operation_name(op).is_registered for op in ops)
    assert ir.print_op(module) == (
        'builtin.module {\n  "test.op"() : () -> ()\n  "test.op"() : () -> ()\n}'
    )
    # Other dialects still refuse unknown ops.
    with pytest.raises(IRParseError, match="does not allow unknown operations"):
        ir.parse_module('"arith.nonsense"() : () -> ()')


def test_a_cloned_context_keeps_allowing_unknown_test_ops() -> None:
    ctx = ir.default_context().clone()
    module = ir.parse_module('"test.anything"() : () -> ()', ctx)
    (op,) = module.body.block.ops
    assert not ir.operation_name(op).is_registered


def test_test_symbol_is_a_registered_symbol_with_properties() -> None:
    module = ir.parse_module('"test.symbol"() {sym_name = "foo"} : () -> ()')
    (op,) = module.body.block.ops
    assert isinstance(op, test_dialect.SymbolOp)
    assert ir.operation_name(op).has_trait(SymbolOpInterface)
    assert ir.symbol_name(op) == "foo"
    assert op.properties["sym_name"] == StringAttr("foo")
    assert ir.print_op(op) == '"test.symbol"() <{sym_name = "foo"}> : () -> ()'
    assert ir.verify(module) is None
    assert "test.symbol" in {o.name for o in test_dialect.DIALECT.operations}


def test_xdsls_test_ops_keep_their_traits() -> None:
    # xDSL's own tests use these ops; passes must see their traits, so an unused
    # pure op or memory read is erased (as in MLIR) while the memory write and the
    # trait-less test.op stay.
    text = (
        '%a = "test.pureop"() : () -> i32\n'
        '%b = "test.op_with_memread"() : () -> i32\n'
        '%w = "test.op_with_memwrite"() : () -> i32\n'
        '%c = "test.op"() : () -> !test.reg<x0>\n'
    )
    module = _run("builtin.module(canonicalize)", text)
    names = [ir.operation_name(op).name for op in module.body.block.ops]
    assert names == ["test.op_with_memwrite", "test.op"]
    writes, unknown = module.body.block.ops
    assert isinstance(writes, xdsl_test.TestWriteOp)
    assert not ir.operation_name(unknown).is_registered
    assert isinstance(unknown.results[0].type, xdsl_test.TestRegisterType)


def test_test_call_must_name_a_function() -> None:
    text = "test.call @f() : () -> ()\nfunc.func @f() {\n  func.return\n}\n"
    module = ir.parse_module(text)
    call = next(iter(module.body.block.ops))
    assert isinstance(call, test_dialect.TestCallOp)
    assert ir.verify(module) is None
    assert ir.print_op(call) == "test.call @f() : () -> ()"
    bad = ir.parse_module(
        '"test.symbol"() {sym_name = "s"} : () -> ()\ntest.call @s() : () -> ()\n'
    )
    problem = ir.verify(bad)
    assert problem is not None
    assert problem.message == ("'test.call' op 's' does not reference a valid function")


# --- test-print-liveness ----------------------------------------------------


def test_liveness_runs_on_named_symbols_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _run("builtin.module(test-print-liveness)", "module @named {\n}\n")
    assert capsys.readouterr().err.startswith("Testing : named\n// ---- Liveness")
    # An unnamed module is of a symbol kind but is not a symbol (MLIR's isa<>).
    with pytest.raises(PassPipelineError) as info:
        _run("builtin.module(test-print-liveness)", "module {\n}\n")
    (diagnostic,) = info.value.diagnostics
    assert diagnostic.message == (
        "'builtin.module' op trying to schedule pass 'TestLivenessPass' on an "
        "unsupported operation"
    )
    assert capsys.readouterr().err == ""


def test_liveness_after_nested_scf_to_cf(capsys: pytest.CaptureFixture[str]) -> None:
    text = """
    func.func @f(%lb: index, %ub: index, %x: i32) -> i32 {
      %r = scf.for %i = %lb to %ub step %lb iter_args(%a = %x) -> (i32) {
        %y = arith.addi %a, %a : i32
        scf.yield %y : i32
      }
      func.return %r : i32
    }
    """
    _run(
        "builtin.module(func.func(convert-scf-to-cf),func.func(test-print-liveness))",
        text,
    )
    err = capsys.readouterr().err
    assert err.startswith("Testing : f\n// ---- Liveness -----\n")
    assert err.count("// - Block: ") == 4  # entry, header, body, exit
    assert err.endswith("// -------------------\n")


# --- test-patterns ----------------------------------------------------------

PATTERNS = """
func.func @f(%a: i32) -> (i32, i32, i32, i32, i32) {
  %0 = "test.op_a"(%a) <{attr = 5 : i32}> : (i32) -> i32
  %1 = "test.op_d"(%a) : (i32) -> i32
  %2 = "test.op_g"(%a) : (i32) -> i32
  %3 = "test.op_g"(%2) : (i32) -> i32
  %4 = "test.op_n"(%a, %a) : (i32, i32) -> i32
  %5 = "test.op_c"(%a) : (i32) -> i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %s = arith.addi %c1, %c2 : i32
  "test.op_h"(%s) : (i32) -> ()
  func.return %0, %1, %3, %4, %5 : i32, i32, i32, i32, i32
}
"""


def test_test_patterns_apply_the_generated_patterns_greedily() -> None:
    module = _run("builtin.module(func.func(test-patterns))", PATTERNS)
    text = ir.print_op(module, generic=True)
    # op_a -> op_b keeps the attribute; op_d picks op_f (benefit 11 over 1);
    # bottom-up, the outer op_g is seen first and op_g(op_g) -> op_b 34 wins over
    # op_g -> op_b 20, which then rewrites the inner one (test ops have unknown
    # effects, so it is not dead); op_n(a, a) -> op_o; op_c -> op_b 17;
    # op_h -> op_i.
    for gone in ("test.op_a", "test.op_d", "test.op_g", "test.op_n", "test.op_c"):
        assert gone not in text, gone
    assert '%0 = "test.op_b"(%a) <{attr = 5 : i32}>' in text
    assert '"test.op_f"' in text and '"test.op_e"' not in text
    assert '%3 = "test.op_b"(%a) <{attr = 34 : i32}>' in text
    assert '%2 = "test.op_b"(%a) <{attr = 20 : i32}>' in text
    assert "attr = 17 : i32" in text
    assert '"test.op_o"(%a)' in text
    assert '"test.op_i"' in text and '"test.op_h"' not in text
    # Folding runs too: 1 + 2 is the constant 3.
    assert "arith.addi" not in text and "value = 3 : i32" in text
    assert ir.verify(module) is None


def test_test_patterns_is_a_function_pass() -> None:
    with pytest.raises(PipelineParseError, match="did you intend to nest"):
        parse_pass_pipeline("builtin.module(test-patterns)")
    pm = PassManager(nesting=Nesting.IMPLICIT)
    pm.add(tp.TestPatternDriver())
    assert str(pm) == "builtin.module(func.func(test-patterns))"


# --- test-dynamic-pipeline --------------------------------------------------

FAIL_ON_PARENT = """
module {
  module @inner_mod1 {
    "test.symbol"() {sym_name = "foo"} : () -> ()
    func.func private @bar()
  }
}
"""


def test_a_dynamic_pipeline_on_the_parent_fails(
    capsys: pytest.CaptureFixture[str],
) -> None:
    pipeline = (
        "builtin.module(builtin.module(test-dynamic-pipeline{op-name=inner_mod1 "
        "run-on-parent=1 dynamic-pipeline=test-patterns}))"
    )
    # The dynamic pipeline fails, as expected: the pass itself succeeds.
    module = ir.parse_module(FAIL_ON_PARENT, ir.default_context(), "in.mlir")
    pm = PassManager()
    pm.assign(parse_pass_pipeline(pipeline))
    diagnostics: list[Diagnostic] = []
    pm.add_diagnostic_handler(diagnostics.append)
    pm.run(module)
    assert [str(d) for d in diagnostics] == [
        "in.mlir:2:1: error: 'builtin.module' op Trying to schedule a dynamic "
        "pipeline on an operation that isn't nested under the current operation "
        "the pass is processing"
    ]
    assert "Dynamic execute 'test-patterns' on builtin.module" in (
        capsys.readouterr().err
    )


def test_an_unparsable_dynamic_pipeline_is_reported_and_skipped(
    capsys: pytest.CaptureFixture[str],
) -> None:
    _run(
        "builtin.module(builtin.module(test-dynamic-pipeline{"
        "dynamic-pipeline=no-such-pass}))",
        "module {\n  module @m {\n  }\n}\n",
    )
    err = capsys.readouterr().err
    assert "'no-such-pass' does not refer to a registered pass or pass pipeline" in err


# --- options ----------------------------------------------------------------


def test_test_options_pass_has_mlirs_options() -> None:
    pm = parse_pass_pipeline(
        "builtin.module(func.func(test-options-pass{enum=two list=1,2 string=x}))"
    )
    assert str(pm) == (
        "builtin.module(func.func(test-options-pass{enum=two list={1,2} string=x }))"
    )
    default = tp.TestOptionsPass()
    assert default.enum is tp.TestEnum.ZERO
    assert str(default) == "test-options-pass{enum=zero  string= }"


def test_test_options_super_pass_and_its_pipeline() -> None:
    text = (
        "builtin.module(func.func(test-options-super-pass{list={{enum=one list={2} "
        "string=bar },{enum=two}}}))"
    )
    expected = (
        "builtin.module(func.func(test-options-super-pass{list={{enum=one list={2} "
        "string=bar },{enum=two  string= }}}))"
    )
    assert str(parse_pass_pipeline(text)) == expected
    via_pipeline = parse_pass_pipeline(
        "builtin.module(func.func(test-options-super-pass-pipeline{"
        "super-list={{enum=one list=2 string=bar},{enum=two}}}))"
    )
    assert str(via_pipeline) == expected
    first = tp.TestOptionsSuperPass(
        list=[
            tp.TestOptionsPipelineOptions(enum=tp.TestEnum.ONE, list=[2], string="bar")
        ]
    )
    clone = first.clone()
    assert str(clone) == str(first)


# --- statistics -------------------------------------------------------------


def test_test_function_pass_counts_its_invocations() -> None:
    text = "func.func @a() {\n  func.return\n}\nfunc.func @b() {\n  func.return\n}\n"
    module = ir.parse_module(text)
    pm = PassManager()
    function_pass = tp.TestFunctionPass()
    pm.nest("func.func").add(function_pass)
    stream = io.StringIO()
    pm.enable_statistics("list", stream)
    pm.run(module)
    assert "(S) 2 counter - Number of invocations" in stream.getvalue()
    assert "counter - Number of invocations" in statistics_report(pm, "list")


# --- test-pass-invalid-parent ------------------------------------------------


def test_invalid_parent_is_reported_at_the_function() -> None:
    with pytest.raises(PassPipelineError) as info:
        _run(
            "builtin.module(func.func(test-pass-invalid-parent))",
            "func.func @f() {\n  func.return\n}\n",
            name="p.mlir",
        )
    (diagnostic,) = info.value.diagnostics
    assert str(diagnostic) == (
        "p.mlir:1:1: error: 'test.call' op 'some_unknown_func' does not reference "
        "a valid function"
    )
