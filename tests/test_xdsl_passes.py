"""xDSL's own passes, adapted: found by name, anchored, optioned and run."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from passflow import PassManager, PipelineParseError, ir, registry
from passflow.pipeline_text import parse_pass_pipeline
from passflow.xdsl_passes import NESTED_OK, XDSLPass, xdsl_pass_names

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
    info = registry.lookup_pass("convert-scf-to-cf")
    assert info is not None and info.pass_class.op_name == "builtin.module"
    with pytest.raises(PipelineParseError, match="did you intend to nest"):
        parse_pass_pipeline("builtin.module(func.func(convert-scf-to-cf))")


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
