"""`composite-fixed-point-pass`: rounds, convergence, failures (checked against
mlir-opt 22.1.8's behaviour on the lit test's input)."""

from __future__ import annotations

import pytest
from transforms_support import Recorder, context, run_pipeline

from passflow import ir
from passflow.diagnostics import OptionError, PassPipelineError
from passflow.pass_manager import PassManager
from passflow.registry import lookup_pass
from passflow.transforms import CompositeFixedPointPass

TEXT = """\
func.func @f(%a: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %0 = arith.addi %c1, %c2 : i32
  %1 = arith.addi %0, %a : i32
  %2 = arith.addi %0, %a : i32
  %3 = arith.muli %1, %2 : i32
  return %3 : i32
}
"""


def _rounds(pipeline: str) -> int:
    recorder = Recorder()
    run_pipeline(TEXT, pipeline, instrumentations=[recorder])
    return sum(1 for name, _, _ in recorder.passes if name == "Canonicalizer")


def test_registered_with_mlirs_options() -> None:
    info = lookup_pass("composite-fixed-point-pass")
    assert info is not None and info.pass_class is CompositeFixedPointPass
    assert str(info.create("pipeline=cse")) == (
        "composite-fixed-point-pass{max-iterations=10 name=CompositeFixedPointPass "
        "pipeline=cse}"
    )


def test_runs_until_a_round_changes_nothing() -> None:
    text = "builtin.module(composite-fixed-point-pass{pipeline=%s})"
    assert _rounds(text % "cse") == 0
    assert _rounds(text % "canonicalize") == 2  # constants folded; nothing
    assert _rounds(text % '"canonicalize,cse"') == 2


def test_stops_after_max_iterations_plus_one_runs() -> None:
    text = "builtin.module(composite-fixed-point-pass{%s})"
    assert _rounds(text % "pipeline=canonicalize max-iterations=1") == 2
    assert _rounds(text % "pipeline=canonicalize,cse max-iterations=1") == 2


def test_bad_inner_pipeline_fails_when_the_options_are_parsed() -> None:
    with pytest.raises(OptionError, match="Failed to parse composite pass pipeline"):
        CompositeFixedPointPass().initialize_options("pipeline=bogus")


def test_failure_of_the_inner_pipeline_fails_the_pass() -> None:
    with pytest.raises(PassPipelineError):
        run_pipeline(
            TEXT,
            "builtin.module(func.func(composite-fixed-point-pass{pipeline=symbol-dce}))",
        )


def test_built_in_python_and_cloned() -> None:
    pass_ = CompositeFixedPointPass(pipeline="canonicalize,cse", display="Mine")
    assert pass_.display_name == "Mine"
    copy = pass_.clone()
    assert copy.inner_pipeline() is not pass_.inner_pipeline()
    module = ir.parse_module(TEXT, context())
    pm = PassManager(context=context())
    pm.add(copy)
    pm.run(module)
    assert "arith.muli %1, %1" in ir.print_op(module)
