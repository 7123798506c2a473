"""xDSL's own passes, adapted: found by name, anchored, optioned and run."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriteWalker
from xdsl.transforms.dead_code_elimination import region_dce

from passflow import PassManager, PipelineParseError, ir, registry
from passflow.pipeline_text import parse_pass_pipeline
from passflow.xdsl_passes import (
    NESTED_OK,
    XDSLPass,
    adapter_for,
    has_body_region,
    walks_only_its_op,
    xdsl_pass_names,
)

Parse = Callable[[str], ir.ModuleOp]

DEAD = """\
func.func @f(%a: i32) -> i32 {
  %c = arith.constant 1 : i32
  %x = arith.addi %a, %c : i32
  func.return %a : i32
}
"""


def test_every_xdsl_pass_name_resolves_to_a_pass() -> None:
    names = xdsl_pass_names()
    assert "dce" in names and "convert-scf-to-cf" in names
    for name in ("dce", "convert-scf-to-cf", "lower-affine"):
        info = registry.lookup_pass(name)
        assert info is not None
        assert info.argument == name
        assert issubclass(info.pass_class, XDSLPass)


def test_nested_capable_passes_run_on_functions(parse: Parse) -> None:
    assert "dce" in NESTED_OK
    module = parse(DEAD)
    pm = PassManager()
    pm.assign(parse_pass_pipeline("builtin.module(func.func(dce))"))
    pm.run(module)
    assert "arith.addi" not in ir.print_op(module)


def test_module_passes_are_anchored_on_modules() -> None:
    # Creates memref.global ops at module level: never nestable.
    assert "convert-ml-program-to-memref" not in NESTED_OK
    info = registry.lookup_pass("convert-ml-program-to-memref")
    assert info is not None and info.pass_class.op_name == "builtin.module"
    with pytest.raises(PipelineParseError, match="did you intend to nest"):
        parse_pass_pipeline("builtin.module(func.func(convert-ml-program-to-memref))")


SCF = """\
func.func @f(%lb: index, %ub: index, %step: index, %c: i1, %x: i32) -> i32 {
  %r = scf.for %i = %lb to %ub step %step iter_args(%a = %x) -> (i32) {
    %y = scf.if %c -> (i32) {
      scf.yield %a : i32
    } else {
      %z = arith.addi %a, %a : i32
      scf.yield %z : i32
    }
    scf.yield %y : i32
  }
  func.return %r : i32
}
func.func @g() {
  func.return
}
"""


def test_nestable_xdsl_passes_run_on_each_function(parse: Parse) -> None:
    module = parse(SCF)
    pm = PassManager()
    pm.assign(parse_pass_pipeline("builtin.module(func.func(convert-scf-to-cf))"))
    pm.run(module)
    text = ir.print_op(module)
    assert "scf." not in text and "cf.cond_br" in text
    assert ir.verify(module) is None
    info = registry.lookup_pass("convert-scf-to-cf")
    assert info is not None and info.pass_class.op_name is None


def test_nestable_passes_need_a_body_region() -> None:
    info = registry.lookup_pass("convert-scf-to-cf")
    assert info is not None
    pass_ = info.create()
    ctx = ir.default_context()
    for name in ("builtin.module", "func.func", "gpu.module"):
        assert pass_.can_schedule_on(ir.lookup_operation_name(ctx, name)), name
    for name in ("arith.addi", "scf.if", "test.unknown"):
        assert not pass_.can_schedule_on(ir.lookup_operation_name(ctx, name)), name
    assert has_body_region(ir.lookup_operation_name(ctx, "scf.for"))


def test_every_nestable_pass_only_walks_its_op() -> None:
    for name in sorted(NESTED_OK):
        adapter = adapter_for(name)
        assert adapter is not None, name
        assert walks_only_its_op(adapter.xdsl_class), name


def test_the_walk_rule_rejects_other_uses_of_the_op() -> None:
    class Reads(ModulePass):
        name = "reads-its-op"

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            for nested in op.walk():
                nested.attributes.clear()

    class Walks(ModulePass):
        name = "walks-its-op"

        def apply(self, ctx: Context, op: ModuleOp) -> None:
            """Only rewrites what is nested."""
            walker = PatternRewriteWalker(GreedyRewritePatternApplier([]))
            walker.rewrite_module(op)
            region_dce(op.body)

    assert not walks_only_its_op(Reads)
    assert walks_only_its_op(Walks)


def test_options_use_xdsl_spec_syntax_and_print_back() -> None:
    pm = parse_pass_pipeline("builtin.module(approximate-math-with-bitcast{log=false})")
    assert str(pm) == "builtin.module(approximate-math-with-bitcast{log=false})"
    clone = pm.clone()
    assert str(clone) == str(pm)


def test_bad_options_are_reported_as_option_errors() -> None:
    with pytest.raises(PipelineParseError) as info:
        parse_pass_pipeline("builtin.module(approximate-math-with-bitcast{bogus=1})")
    assert str(info.value).startswith("<Pass-Options-Parser>: ")
    assert (
        "failed to add `approximate-math-with-bitcast` with options `bogus=1`"
        in str(info.value)
    )


def test_native_passes_shadow_xdsl_ones() -> None:
    info = registry.lookup_pass("canonicalize")
    assert info is not None
    assert not issubclass(info.pass_class, XDSLPass)


PDL_ON_TEST_OP = """\
"test.op"() {attr = 0} : () -> ()
"test.other"() {attr = 0} : () -> ()
pdl.pattern : benefit(1) {
  %zero = pdl.attribute = 0
  %root = pdl.operation "test.op" {"attr" = %zero}
  pdl.rewrite %root {
    %one = pdl.attribute = 1
    %new = pdl.operation "test.op" {"attr" = %one}
    pdl.replace %root with %new
  }
}
"""


@pytest.mark.parametrize("allow_unregistered", [False, True])
def test_apply_pdl_matches_unregistered_ops_by_their_own_name(
    allow_unregistered: bool,
) -> None:
    # `test.op` is unregistered (MLIR's test dialect allows unknown ops); xDSL's
    # PDL matcher compares `op.name`, which must be "test.op", not
    # "builtin.unregistered", or the pattern never matches (xdsl-opt rewrites it).
    ctx = ir.default_context(allow_unregistered=allow_unregistered)
    module = ir.parse_module(PDL_ON_TEST_OP, ctx)
    pm = PassManager(context=ctx)
    pm.assign(parse_pass_pipeline("builtin.module(apply-pdl)"))
    pm.run(module)
    first, second = list(module.ops)[:2]
    assert first.name == "test.op"
    assert ir.print_op(first) == '"test.op"() {attr = 1 : i64} : () -> ()'
    assert ir.print_op(second) == '"test.other"() {attr = 0 : i64} : () -> ()'
