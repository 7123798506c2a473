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


# Ops with regions move as a whole when nothing in them has an effect or may
# trap and all they use is defined outside: an inner `scf.for` with a unit step
# (a step of 2 may not terminate), an `scf.if` without a store. Divisions move
# only with a constant divisor that cannot trap (xDSL marks `ceildivsi` pure,
# MLIR does not), `tensor.dim` with a constant index below the rank.
REGIONS = """
func.func @regions(%lb: index, %ub: index, %s: index, %a: i32, %b: i32, %c: i1,
                   %m: memref<4xi32>, %t: tensor<?x4xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : i32
  %cm1 = arith.constant -1 : i32
  scf.for %i = %lb to %ub step %s {
    scf.for %j = %lb to %ub step %c1 {
      %x = arith.addi %a, %b : i32
    }
    scf.for %k = %lb to %ub step %c2 {
      %y = arith.addi %a, %b : i32
    }
    %r = scf.if %c -> (i32) {
      %p = arith.muli %a, %b : i32
      scf.yield %p : i32
    } else {
      scf.yield %a : i32
    }
    scf.if %c {
      memref.store %a, %m[%c1] : memref<4xi32>
    }
    %d0 = arith.ceildivsi %a, %b : i32
    %d1 = arith.ceildivsi %a, %c5 : i32
    %d2 = arith.ceildivsi %a, %cm1 : i32
    %d3 = arith.divui %a, %c5 : i32
    %d4 = arith.ceildivui %a, %c5 : i32
    %n0 = tensor.dim %t, %c1 : tensor<?x4xf32>
    %n1 = tensor.dim %t, %c2 : tensor<?x4xf32>
    %n2 = memref.dim %m, %c1 : memref<4xi32>
    %e = tensor.empty(%n0) : tensor<?xf32>
    "test.use"(%r, %d0, %d1, %d2, %d3, %d4, %n0, %n1, %n2, %e)
        : (i32, i32, i32, i32, i32, i32, index, index, index, tensor<?xf32>) -> ()
  }
  return
}
"""

MLIR_REGIONS = """
module {
  func.func @regions(%arg0: index, %arg1: index, %arg2: index, %arg3: i32, %arg4: i32, %arg5: i1, %arg6: memref<4xi32>, %arg7: tensor<?x4xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c5_i32 = arith.constant 5 : i32
    %c-1_i32 = arith.constant -1 : i32
    %0 = arith.addi %arg3, %arg4 : i32
    scf.for %arg8 = %arg0 to %arg1 step %c1 {
    }
    %1 = arith.addi %arg3, %arg4 : i32
    %2 = scf.if %arg5 -> (i32) {
      %7 = arith.muli %arg3, %arg4 : i32
      scf.yield %7 : i32
    } else {
      scf.yield %arg3 : i32
    }
    %3 = arith.ceildivsi %arg3, %c5_i32 : i32
    %4 = arith.divui %arg3, %c5_i32 : i32
    %5 = arith.ceildivui %arg3, %c5_i32 : i32
    %dim = tensor.dim %arg7, %c1 : tensor<?x4xf32>
    %6 = tensor.empty(%dim) : tensor<?xf32>
    scf.for %arg8 = %arg0 to %arg1 step %arg2 {
      scf.for %arg9 = %arg0 to %arg1 step %c2 {
      }
      scf.if %arg5 {
        memref.store %arg3, %arg6[%c1] : memref<4xi32>
      }
      %7 = arith.ceildivsi %arg3, %arg4 : i32
      %8 = arith.ceildivsi %arg3, %c-1_i32 : i32
      %dim_0 = tensor.dim %arg7, %c2 : tensor<?x4xf32>
      %dim_1 = memref.dim %arg6, %c1 : memref<4xi32>
      "test.use"(%2, %7, %3, %8, %4, %5, %dim, %dim_0, %dim_1, %6) : (i32, i32, i32, i32, i32, i32, index, index, index, tensor<?xf32>) -> ()
    }
    return
  }
}
"""

# An empty unit-step `affine.for` leaves two loops; the one with step 2 keeps
# its parent in place. A `linalg.generic` on tensors moves with its body; on
# buffers it writes memory and stays.
AFFINE_AND_LINALG = """
#map = affine_map<(d0) -> (d0)>
func.func @more(%lb: index, %ub: index, %s: index, %a: tensor<8xf32>,
                %b: tensor<8xf32>, %m: memref<8xf32>) -> tensor<8xf32> {
  %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %b) -> (tensor<8xf32>) {
    affine.for %j = 0 to 10 {
      affine.for %k = %lb to %ub {
      }
      affine.for %k = %lb to %ub step 2 {
      }
    }
    %g = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%a : tensor<8xf32>) outs(%b : tensor<8xf32>) {
    ^bb0(%x: f32, %y: f32):
      %z = arith.addf %x, %y : f32
      linalg.yield %z : f32
    } -> tensor<8xf32>
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%m : memref<8xf32>) outs(%m : memref<8xf32>) {
    ^bb0(%x: f32, %y: f32):
      linalg.yield %x : f32
    }
    %n = arith.addf %g, %acc : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
"""

MLIR_AFFINE_AND_LINALG = """
#map = affine_map<(d0) -> (d0)>
module {
  func.func @more(%arg0: index, %arg1: index, %arg2: index, %arg3: tensor<8xf32>, %arg4: tensor<8xf32>, %arg5: memref<8xf32>) -> tensor<8xf32> {
    affine.for %arg6 = %arg0 to %arg1 {
    }
    %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%arg3 : tensor<8xf32>) outs(%arg4 : tensor<8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %2 = arith.addf %in, %out : f32
      linalg.yield %2 : f32
    } -> tensor<8xf32>
    %1 = scf.for %arg6 = %arg0 to %arg1 step %arg2 iter_args(%arg7 = %arg4) -> (tensor<8xf32>) {
      affine.for %arg8 = 0 to 10 {
        affine.for %arg9 = %arg0 to %arg1 step 2 {
        }
      }
      linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%arg5 : memref<8xf32>) outs(%arg5 : memref<8xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
      }
      %2 = arith.addf %0, %arg7 : tensor<8xf32>
      scf.yield %2 : tensor<8xf32>
    }
    return %1 : tensor<8xf32>
  }
}
"""


def test_hoists_invariant_loops_and_regions_like_mlir_opt() -> None:
    assert_same_ir(run_pipeline(REGIONS, PIPELINE), MLIR_REGIONS)


def test_hoists_affine_loops_and_tensor_linalg_ops_like_mlir_opt() -> None:
    result = run_pipeline(AFFINE_AND_LINALG, PIPELINE)
    assert_same_ir(result, MLIR_AFFINE_AND_LINALG)


REGISTER_READ = """
func.func @f(%lb: index, %ub: index, %st: index) {
  scf.for %i = %lb to %ub step %st {
    %a = rv32.li 7 : !riscv.reg<a0>
    %r = rv32.get_register : !riscv.reg<a0>
    %s = riscv.mv %r : (!riscv.reg<a0>) -> !riscv.reg
  }
  func.return
}
"""


def test_a_read_of_an_allocated_register_stays_in_the_loop() -> None:
    # xDSL declares rv32.get_register Pure, but <a0> is written inside the loop:
    # hoisting the read would read a0 before the loop's write.
    result = normalized(run_pipeline(REGISTER_READ, PIPELINE))
    loop_body = result.split("scf.for", 1)[1]
    assert "rv32.get_register" in loop_body
    assert result.index("rv32.li 7") < result.index("rv32.get_register")
