"""`print-op-stats`: the table and the JSON exactly as mlir-opt 22.1.8 prints them."""

from __future__ import annotations

from collections import Counter

import pytest
from transforms_support import Recorder, normalized, run_pipeline

from passflow.registry import lookup_pass
from passflow.transforms import PrintOpStats
from passflow.transforms.print_op_stats import format_op_stats

INPUT = """
func.func @f(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %x = arith.addi %a, %c0 : i32
  %y = arith.addi %x, %c1 : i32
  %z = arith.addi %x, %c1 : i32
  %w = arith.muli %y, %z : i32
  return %w : i32
}
func.func private @unused()
"""

MLIR_TABLE = """\
Operations encountered:
-----------------------
    arith.addi     , 3
    arith.constant , 2
    arith.muli     , 1
  builtin.module   , 1
     func.func     , 2
     func.return   , 1
"""

MLIR_JSON = """\
{
  "arith.addi" : 3,
  "arith.constant" : 2,
  "arith.muli" : 1,
  "builtin.module" : 1,
  "func.func" : 2,
  "func.return" : 1
}
"""

# On each function: the function itself is counted, not the module.
MLIR_PER_FUNCTION = """\
Operations encountered:
-----------------------
  arith.addi     , 3
  arith.constant , 2
  arith.muli     , 1
   func.func     , 1
   func.return   , 1
Operations encountered:
-----------------------
  func.func , 1
"""


def test_prints_the_table_like_mlir_opt(capsys: pytest.CaptureFixture[str]) -> None:
    result = run_pipeline(INPUT, "builtin.module(print-op-stats)")
    assert capsys.readouterr().err == MLIR_TABLE
    assert normalized(result) == normalized(INPUT)


def test_json_option(capsys: pytest.CaptureFixture[str]) -> None:
    run_pipeline(INPUT, "builtin.module(print-op-stats{json=true})")
    assert capsys.readouterr().err == MLIR_JSON


def test_runs_on_any_op(capsys: pytest.CaptureFixture[str]) -> None:
    run_pipeline(INPUT, "builtin.module(func.func(print-op-stats))")
    assert capsys.readouterr().err == MLIR_PER_FUNCTION


def test_names_without_a_dialect_are_aligned_after_the_dialect_column() -> None:
    table = format_op_stats(Counter({"nodialect": 2, "ab.c": 1}))
    assert table.splitlines()[2:] == ["  ab.c         , 1", "     nodialect , 2"]


def test_keeps_every_analysis(capsys: pytest.CaptureFixture[str]) -> None:
    recorder = Recorder()
    pipeline = "builtin.module(func.func(cse,print-op-stats,cse))"
    run_pipeline(normalized(run_pipeline(INPUT, pipeline)), pipeline, None, [recorder])
    assert [name for name, _, _ in recorder.analyses] == ["DominanceInfo"] * 2


def test_declaration_matches_mlir_opt() -> None:
    info = lookup_pass("print-op-stats")
    assert info is not None and info.pass_class is PrintOpStats
    assert PrintOpStats.name == "PrintOpStats"
    assert PrintOpStats.summary == "Print statistics of operations"
    assert str(PrintOpStats()) == "print-op-stats{json=false}"
