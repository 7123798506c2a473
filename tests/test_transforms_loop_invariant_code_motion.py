"""`loop-invariant-code-motion`: output against mlir-opt 22.1.8."""

from __future__ import annotations

from transforms_support import Recorder, assert_same_ir, normalized, run_pipeline

from passflow.registry import lookup_pass
from passflow.transforms import LoopInvariantCodeMotion

PIPELINE = "builtin.module(func.func(loop-invariant-code-motion))"

# Nested loops: what leaves the inner loop may leave the outer one too; a
# division may trap (not speculatable) and a store has effects: both stay.
NESTED = """
func.func @f(%lb: index, %ub: index, %s: index, %a: i32, %m: memref<10xi32>) {
  %c7 = arith.constant 7 : i32
  scf.for %i = %lb to %ub step %s {
    %x = arith.addi %a, %c7 : i32
    %y = arith.muli %x, %x : i32
    %d = arith.divsi %a, %x : i32
    scf.for %j = %lb to %ub step %s {
      %z = arith.addi %y, %a : i32
      %w = arith.index_cast %i : index to i32
      %v = arith.addi %w, %z : i32
      memref.store %v, %m[%j] : memref<10xi32>
    }
    %q = arith.addi %y, %d : i32
    memref.store %q, %m[%i] : memref<10xi32>
  }
  return
}
"""

MLIR_NESTED = """
module {
  func.func @f(%arg0: index, %arg1: index, %arg2: index, %arg3: i32, %arg4: memref<10xi32>) {
    %c7_i32 = arith.constant 7 : i32
    %0 = arith.addi %arg3, %c7_i32 : i32
    %1 = arith.muli %0, %0 : i32
    %2 = arith.addi %1, %arg3 : i32
    scf.for %arg5 = %arg0 to %arg1 step %arg2 {
      %3 = arith.divsi %arg3, %0 : i32
      %4 = arith.index_cast %arg5 : index to i32
      %5 = arith.addi %4, %2 : i32
      scf.for %arg6 = %arg0 to %arg1 step %arg2 {
        memref.store %5, %arg4[%arg6] : memref<10xi32>
      }
      %6 = arith.addi %1, %3 : i32
      memref.store %6, %arg4[%arg5] : memref<10xi32>
    }
    return
  }
}
"""

# Both regions of scf.while are loop regions; a load reads memory: it stays.
WHILE = """
func.func @w(%a: i32, %b: i32, %m: memref<i32>) -> i32 {
  %r = scf.while (%arg = %a) : (i32) -> i32 {
    %x = arith.muli %a, %b : i32
    %cond = arith.cmpi slt, %arg, %x : i32
    scf.condition(%cond) %arg : i32
  } do {
  ^bb0(%arg2: i32):
    %y = arith.addi %a, %b : i32
    %l = memref.load %m[] : memref<i32>
    %z = arith.addi %arg2, %y : i32
    %q = arith.addi %z, %l : i32
    scf.yield %q : i32
  }
  return %r : i32
}
"""

MLIR_WHILE = """
module {
  func.func @w(%arg0: i32, %arg1: i32, %arg2: memref<i32>) -> i32 {
    %0 = arith.muli %arg0, %arg1 : i32
    %1 = arith.addi %arg0, %arg1 : i32
    %2 = scf.while (%arg3 = %arg0) : (i32) -> i32 {
      %3 = arith.cmpi slt, %arg3, %0 : i32
      scf.condition(%3) %arg3 : i32
    } do {
    ^bb0(%arg3: i32):
      %3 = memref.load %arg2[] : memref<i32>
      %4 = arith.addi %arg3, %1 : i32
      %5 = arith.addi %4, %3 : i32
      scf.yield %5 : i32
    }
    return %2 : i32
  }
}
"""


def test_hoists_out_of_nested_loops_like_mlir_opt() -> None:
    assert_same_ir(run_pipeline(NESTED, PIPELINE), MLIR_NESTED)


def test_hoists_out_of_both_regions_of_a_while_loop() -> None:
    assert_same_ir(run_pipeline(WHILE, PIPELINE), MLIR_WHILE)


def test_nothing_to_hoist_keeps_the_ir_and_the_analyses() -> None:
    hoisted = normalized(run_pipeline(NESTED, PIPELINE))
    recorder = Recorder()
    pipeline = "builtin.module(func.func(cse,loop-invariant-code-motion,cse))"
    result = run_pipeline(hoisted, pipeline, None, [recorder])
    assert normalized(result) == hoisted
    assert [name for name, _, _ in recorder.analyses] == ["DominanceInfo"]


def test_declaration_matches_mlir_opt() -> None:
    info = lookup_pass("loop-invariant-code-motion")
    assert info is not None and info.pass_class is LoopInvariantCodeMotion
    assert LoopInvariantCodeMotion.name == "LoopInvariantCodeMotion"
    assert LoopInvariantCodeMotion.summary == (
        "Hoist loop invariant instructions outside of the loop"
    )
    assert str(LoopInvariantCodeMotion()) == "loop-invariant-code-motion"
