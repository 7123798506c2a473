"""`sroa`: output and statistics against mlir-opt 22.1.8."""

from __future__ import annotations

from transforms_support import assert_same_ir, run_passes

from passflow.registry import lookup_pass
from passflow.statistics import (
    apply_statistic_effects,
    arm_statistics,
    statistic_values,
    take_statistic_effects,
)
from passflow.transforms import SROA, Mem2Reg

AGGREGATES = """
func.func @high_dimensions(%arg0: i32, %arg1: i32, %arg2: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %alloca = memref.alloca() : memref<2x2xi32>
  memref.store %arg0, %alloca[%c0, %c0] : memref<2x2xi32>
  memref.store %arg1, %alloca[%c0, %c1] : memref<2x2xi32>
  memref.store %arg2, %alloca[%c1, %c0] : memref<2x2xi32>
  %res = memref.load %alloca[%c0, %c1] : memref<2x2xi32>
  return %res : i32
}
func.func @all_used(%arg0: i32, %arg1: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %alloca = memref.alloca() : memref<2xi32>
  memref.store %arg0, %alloca[%c0] : memref<2xi32>
  memref.store %arg1, %alloca[%c1] : memref<2xi32>
  %res = memref.load %alloca[%c0] : memref<2xi32>
  return %res : i32
}
func.func @refused(%arg0: i32, %i: index) -> i32 {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %dynamic = memref.alloca() : memref<2xi32>
  memref.store %arg0, %dynamic[%i] : memref<2xi32>
  %out_of_bounds = memref.alloca() : memref<2xi32>
  %r = memref.load %out_of_bounds[%c5] : memref<2xi32>
  %escapes = memref.alloca() : memref<2xi32>
  "t.use"(%escapes) : (memref<2xi32>) -> ()
  %too_large = memref.alloca() : memref<17xi32>
  memref.store %arg0, %too_large[%c0] : memref<17xi32>
  return %r : i32
}
"""

MLIR_AGGREGATES = """
func.func @high_dimensions(%arg0: i32, %arg1: i32, %arg2: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %alloca = memref.alloca() : memref<i32>
  %alloca_0 = memref.alloca() : memref<i32>
  %alloca_1 = memref.alloca() : memref<i32>
  memref.store %arg0, %alloca_1[] : memref<i32>
  memref.store %arg1, %alloca[] : memref<i32>
  memref.store %arg2, %alloca_0[] : memref<i32>
  %0 = memref.load %alloca[] : memref<i32>
  return %0 : i32
}
func.func @all_used(%arg0: i32, %arg1: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %alloca = memref.alloca() : memref<i32>
  %alloca_0 = memref.alloca() : memref<i32>
  memref.store %arg0, %alloca[] : memref<i32>
  memref.store %arg1, %alloca_0[] : memref<i32>
  %0 = memref.load %alloca[] : memref<i32>
  return %0 : i32
}
"""


def stats(pass_: SROA) -> dict[str, int]:
    return {stat.name: value for stat, value in statistic_values(pass_)}


def test_declaration_matches_mlir_opt() -> None:
    info = lookup_pass("sroa")
    assert info is not None and info.pass_class is SROA
    assert (SROA.name, SROA.summary) == ("SROA", "Scalar Replacement of Aggregates")
    assert str(SROA()) == "sroa"


def test_destructures_like_mlir_opt_in_its_order_with_its_statistics() -> None:
    pass_ = SROA()
    expected_refused = AGGREGATES[AGGREGATES.index("func.func @refused") :]
    assert_same_ir(
        run_passes(AGGREGATES, pass_, nest=None), MLIR_AGGREGATES + expected_refused
    )
    assert stats(pass_) == {
        "destructured slots": 2,
        "slots with memory benefit": 1,
        "max subelement number": 4,
    }


def test_mem2reg_then_promotes_the_new_slots() -> None:
    module = run_passes(AGGREGATES, SROA(), Mem2Reg(), nest=None)
    high, all_used = list(module.body.block.ops)[:2]
    for function in (high, all_used):
        assert not [op for op in function.walk() if op.name.startswith("memref.")]


def test_max_subelement_number_is_a_maximum_whatever_the_child_order() -> None:
    # Two children run on clones (as a parallel executor does): the 8-element
    # slot first, then the 2-element one; the report keeps 8, as a serial run.
    original = SROA()
    for elements in (8, 2):
        clone = SROA()
        arm_statistics(clone)
        text = AGGREGATE_OF.format(n=elements)
        run_passes(text, clone)
        apply_statistic_effects(original, take_statistic_effects(clone))
    assert stats(original)["max subelement number"] == 8
    assert stats(original)["destructured slots"] == 2


AGGREGATE_OF = """
func.func @f() {{
  %c0 = arith.constant 0 : index
  %x = memref.alloca() : memref<{n}xi32>
  %v = memref.load %x[%c0] : memref<{n}xi32>
  return
}}
"""


LLVM_AGGREGATES = """
llvm.func @gep_fields(%v: i32) -> i32 {
  %0 = llvm.mlir.constant(1 : i32) : i32
  %1 = llvm.alloca %0 x !llvm.struct<(i32, f64, i32)> {alignment = 8 : i64} : (i32) -> !llvm.ptr
  llvm.store %v, %1 : i32, !llvm.ptr
  %2 = llvm.getelementptr %1[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i32, f64, i32)>
  llvm.store %v, %2 : i32, !llvm.ptr
  %3 = llvm.load %2 : !llvm.ptr -> i32
  llvm.return %3 : i32
}
llvm.func @array(%v: i32) -> i32 {
  %0 = llvm.mlir.constant(1 : i32) : i32
  %1 = llvm.alloca %0 x !llvm.array<4 x i32> : (i32) -> !llvm.ptr
  %2 = llvm.getelementptr %1[0, 3] : (!llvm.ptr) -> !llvm.ptr, !llvm.array<4 x i32>
  llvm.store %v, %2 : i32, !llvm.ptr
  %3 = llvm.load %2 : !llvm.ptr -> i32
  llvm.return %3 : i32
}
"""

MLIR_LLVM_AGGREGATES = """
llvm.func @gep_fields(%arg0: i32) -> i32 {
  %0 = llvm.mlir.constant(1 : i32) : i32
  %1 = llvm.alloca %0 x i32 : (i32) -> !llvm.ptr
  %2 = llvm.alloca %0 x i32 : (i32) -> !llvm.ptr
  llvm.store %arg0, %2 : i32, !llvm.ptr
  llvm.store %arg0, %1 : i32, !llvm.ptr
  %3 = llvm.load %1 : !llvm.ptr -> i32
  llvm.return %3 : i32
}
llvm.func @array(%arg0: i32) -> i32 {
  %0 = llvm.mlir.constant(1 : i32) : i32
  %1 = llvm.alloca %0 x i32 : (i32) -> !llvm.ptr
  llvm.store %arg0, %1 : i32, !llvm.ptr
  %2 = llvm.load %1 : !llvm.ptr -> i32
  llvm.return %2 : i32
}
"""


def test_llvm_structs_and_arrays_like_mlir_opt() -> None:
    pass_ = SROA()
    assert_same_ir(run_passes(LLVM_AGGREGATES, pass_, nest=None), MLIR_LLVM_AGGREGATES)
    assert stats(pass_) == {
        "destructured slots": 2,
        "slots with memory benefit": 2,
        "max subelement number": 4,
    }


def test_llvm_accesses_of_another_type_keep_the_aggregate() -> None:
    # mlir-opt also splits these, comparing sizes by data layout; passflow only
    # rewires accesses of the field's own type.
    text = """
llvm.func @f(%v: f32) -> i32 {
  %0 = llvm.mlir.constant(1 : i32) : i32
  %1 = llvm.alloca %0 x !llvm.struct<(i32, i32)> : (i32) -> !llvm.ptr
  llvm.store %v, %1 : f32, !llvm.ptr
  %2 = llvm.getelementptr %1[0, 1] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i32, i32)>
  %3 = llvm.load %2 : !llvm.ptr -> i32
  llvm.return %3 : i32
}
"""
    assert_same_ir(run_passes(text, SROA(), nest=None), text)
