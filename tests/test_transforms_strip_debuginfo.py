"""`strip-debuginfo`: every location (written or parse position) becomes unknown."""

from __future__ import annotations

from transforms_support import context, run_pipeline
from xdsl.dialects.builtin import UnknownLoc

from passflow import ir
from passflow.diagnostics import UNKNOWN_LOCATION
from passflow.registry import lookup_pass
from passflow.transforms import StripDebugInfo
from passflow.transforms.strip_debuginfo import strip_debuginfo

TEXT = """\
func.func @f(%a: i32 loc("arg.c":1:1)) -> i32 {
  %0 = arith.addi %a, %a : i32 loc("x.c":3:4)
  cf.br ^bb1(%0 : i32)
^bb1(%b: i32):
  return %b : i32
}
"""


def test_registered_under_mlirs_name() -> None:
    info = lookup_pass("strip-debuginfo")
    assert info is not None and info.pass_class is StripDebugInfo
    assert StripDebugInfo.summary == "Strip debug info from all operations"


def test_every_op_and_block_argument_loses_its_location() -> None:
    module = ir.parse_module(TEXT, context(), name="in.mlir")
    ops = list(module.walk())
    assert {ir.location(op).file for op in ops} >= {"in.mlir", "x.c"}
    strip_debuginfo(module)
    assert all(ir.location(op) == UNKNOWN_LOCATION for op in ops)
    args = [arg for op in ops for r in op.regions for b in r.blocks for arg in b.args]
    assert len(args) == 2
    assert all(isinstance(arg.location, UnknownLoc) for arg in args)


def test_only_the_op_it_runs_on_is_stripped() -> None:
    module = run_pipeline(TEXT, "builtin.module(func.func(strip-debuginfo))")
    assert ir.location(module) != UNKNOWN_LOCATION
    assert all(ir.location(op) == UNKNOWN_LOCATION for op in module.body.walk())
