"""`mem2reg`: output and statistics against mlir-opt 22.1.8, and the memory slot
tables it reads."""

from __future__ import annotations

from transforms_support import assert_same_ir, context, run_passes
from xdsl.dialects.builtin import UnregisteredOp

from passflow import ir
from passflow.registry import lookup_pass
from passflow.statistics import statistic_values
from passflow.transforms import Mem2Reg
from passflow.transforms.memory_slots import (
    promotable_allocation,
    promotable_mem_op,
)

SLOTS = """
func.func @cycle(%arg0: i64, %arg1: i1, %arg2: i64) {
  %alloca = memref.alloca() : memref<i64>
  memref.store %arg2, %alloca[] : memref<i64>
  cf.cond_br %arg1, ^bb1, ^bb2
^bb1:
  %use = memref.load %alloca[] : memref<i64>
  "t.use"(%use) : (i64) -> ()
  memref.store %arg0, %alloca[] : memref<i64>
  cf.br ^bb2
^bb2:
  cf.br ^bb1
}
func.func @g(%c: i1, %v: i32) -> i32 {
  %a = memref.alloca() : memref<i32>
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  memref.store %v, %a[] : memref<i32>
  cf.br ^bb2
^bb2:
  %r = memref.load %a[] : memref<i32>
  return %r : i32
}
func.func @escapes(%v: i32) -> i32 {
  %a = memref.alloca() : memref<i32>
  memref.store %v, %a[] : memref<i32>
  "t.use"(%a) : (memref<i32>) -> ()
  %r = memref.load %a[] : memref<i32>
  return %r : i32
}
llvm.func @llvm_slot(%arg0: i1, %arg1: i32) -> i32 {
  %0 = llvm.mlir.constant(1 : i32) : i32
  %1 = llvm.alloca %0 x i32 : (i32) -> !llvm.ptr
  llvm.cond_br %arg0, ^bb1, ^bb2
^bb1:
  llvm.store %arg1, %1 : i32, !llvm.ptr
  llvm.br ^bb2
^bb2:
  %2 = llvm.load %1 : !llvm.ptr -> i32
  llvm.return %2 : i32
}
"""

MLIR_SLOTS = """
func.func @cycle(%arg0: i64, %arg1: i1, %arg2: i64) {
  cf.cond_br %arg1, ^bb1(%arg2 : i64), ^bb2(%arg2 : i64)
^bb1(%0: i64):
  "t.use"(%0) : (i64) -> ()
  cf.br ^bb2(%arg0 : i64)
^bb2(%1: i64):
  cf.br ^bb1(%1 : i64)
}
func.func @g(%arg0: i1, %arg1: i32) -> i32 {
  %0 = ub.poison : i32
  cf.cond_br %arg0, ^bb1, ^bb2(%0 : i32)
^bb1:
  cf.br ^bb2(%arg1 : i32)
^bb2(%1: i32):
  return %1 : i32
}
func.func @escapes(%arg0: i32) -> i32 {
  %alloca = memref.alloca() : memref<i32>
  memref.store %arg0, %alloca[] : memref<i32>
  "t.use"(%alloca) : (memref<i32>) -> ()
  %0 = memref.load %alloca[] : memref<i32>
  return %0 : i32
}
llvm.func @llvm_slot(%arg0: i1, %arg1: i32) -> i32 {
  %0 = llvm.mlir.undef : i32
  %1 = llvm.mlir.constant(1 : i32) : i32
  llvm.cond_br %arg0, ^bb1, ^bb2(%0 : i32)
^bb1:
  llvm.br ^bb2(%arg1 : i32)
^bb2(%2: i32):
  llvm.return %2 : i32
}
"""


def stats(pass_: Mem2Reg) -> dict[str, int]:
    return {stat.name: value for stat, value in statistic_values(pass_)}


def test_declaration_matches_mlir_opt() -> None:
    info = lookup_pass("mem2reg")
    assert info is not None and info.pass_class is Mem2Reg
    assert Mem2Reg.summary == "Promotes memory slots into values."
    assert str(Mem2Reg()) == "mem2reg{region-simplify=true}"


def test_promotes_like_mlir_opt_with_its_statistics() -> None:
    pass_ = Mem2Reg()
    assert_same_ir(run_passes(SLOTS, pass_, nest=None), MLIR_SLOTS)
    assert stats(pass_) == {"new block args": 4, "promoted slots": 3}


def test_single_block_forwarding_and_default_value() -> None:
    module = run_passes(
        """
func.func @f(%v: i32) -> (i32, i32) {
  %a = memref.alloca() : memref<1x1xi32>
  %c0 = arith.constant 0 : index
  %first = memref.load %a[%c0, %c0] : memref<1x1xi32>
  memref.store %v, %a[%c0, %c0] : memref<1x1xi32>
  %second = memref.load %a[%c0, %c0] : memref<1x1xi32>
  return %first, %second : i32, i32
}
""",
        Mem2Reg(),
    )
    assert_same_ir(
        module,
        """
func.func @f(%arg0: i32) -> (i32, i32) {
  %0 = ub.poison : i32
  %c0 = arith.constant 0 : index
  return %0, %arg0 : i32, i32
}
""",
    )


def test_slots_freed_by_another_promotion_are_promoted_in_a_later_round() -> None:
    module = run_passes(
        """
func.func @f(%v: i64) -> i64 {
  %outer = memref.alloca() : memref<memref<i64>>
  %inner = memref.alloca() : memref<i64>
  memref.store %v, %inner[] : memref<i64>
  memref.store %inner, %outer[] : memref<memref<i64>>
  %p = memref.load %outer[] : memref<memref<i64>>
  %r = memref.load %p[] : memref<i64>
  return %r : i64
}
""",
        Mem2Reg(),
    )
    assert_same_ir(module, "func.func @f(%arg0: i64) -> i64 {\n  return %arg0 : i64\n}")


def test_uses_in_nested_regions_or_of_other_types_block_promotion() -> None:
    text = """
func.func @f(%c: i1, %v: i32) -> i32 {
  %a = memref.alloca() : memref<i32>
  memref.store %v, %a[] : memref<i32>
  scf.if %c {
    memref.store %v, %a[] : memref<i32>
  }
  %r = memref.load %a[] : memref<i32>
  return %r : i32
}
func.func @g(%v: i64) -> i32 {
  %one = llvm.mlir.constant(1 : i32) : i32
  %a = llvm.alloca %one x i64 : (i32) -> !llvm.ptr
  llvm.store %v, %a : i64, !llvm.ptr
  %r = llvm.load %a : !llvm.ptr -> i32
  return %r : i32
}
"""
    pass_ = Mem2Reg()
    module = run_passes(text, pass_, nest=None)
    assert_same_ir(module, text)
    assert stats(pass_) == {"new block args": 0, "promoted slots": 0}


def test_an_unregistered_op_spelt_like_a_known_one_has_no_model() -> None:
    unknown = UnregisteredOp.with_name("memref.load").create()
    assert promotable_mem_op(unknown) is None
    module = ir.parse_module("%0 = memref.alloca() : memref<i32>", context())
    assert promotable_allocation(next(iter(module.body.block.ops))) is not None
