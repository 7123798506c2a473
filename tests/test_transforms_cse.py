"""`cse`: output and statistics against mlir-opt 22.1.8, and its use of dominance."""

from __future__ import annotations

from transforms_support import (
    Recorder,
    assert_same_ir,
    context,
    normalized,
    run_passes,
    run_pipeline,
)

from passflow import ir
from passflow.analyses.dominance import DominanceInfo
from passflow.registry import lookup_pass
from passflow.statistics import statistic_values
from passflow.transforms import CSE
from passflow.transforms._effects import Reuse, is_uniquable_constant, reuse_of

TWO_FUNCTIONS = """
func.func @a(%x: i32) -> i32 {
  %0 = arith.addi %x, %x : i32
  %1 = arith.addi %x, %x : i32
  %2 = arith.addi %x, %x : i32
  %d = arith.muli %x, %x : i32
  %3 = arith.addi %0, %1 : i32
  %4 = arith.addi %3, %2 : i32
  return %4 : i32
}
func.func @b(%x: i32) -> i32 {
  %0 = arith.addi %x, %x : i32
  %1 = arith.addi %x, %x : i32
  return %0 : i32
}
"""

MLIR_TWO_FUNCTIONS = """
module {
  func.func @a(%arg0: i32) -> i32 {
    %0 = arith.addi %arg0, %arg0 : i32
    %1 = arith.addi %0, %0 : i32
    %2 = arith.addi %1, %0 : i32
    return %2 : i32
  }
  func.func @b(%arg0: i32) -> i32 {
    %0 = arith.addi %arg0, %arg0 : i32
    return %0 : i32
  }
}
"""

# Dominance across blocks (%b is %a's, %e is not %d's), nested regions seeing
# the values of the blocks that dominate them, loads merged only while nothing
# writes in between.
BLOCKS = """
func.func @g(%c: i1, %x: i32, %m: memref<i32>) -> i32 {
  %a = arith.addi %x, %x : i32
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  %b = arith.addi %x, %x : i32
  cf.br ^bb3(%b : i32)
^bb2:
  %d = arith.muli %x, %x : i32
  cf.br ^bb3(%d : i32)
^bb3(%r: i32):
  %e = arith.muli %x, %x : i32
  %f = arith.addi %r, %e : i32
  %i = scf.if %c -> (i32) {
    %g = arith.addi %x, %x : i32
    %h = arith.muli %g, %e : i32
    scf.yield %h : i32
  } else {
    %l0 = memref.load %m[] : memref<i32>
    memref.store %x, %m[] : memref<i32>
    %l1 = memref.load %m[] : memref<i32>
    %l2 = memref.load %m[] : memref<i32>
    %s = arith.addi %l1, %l2 : i32
    %t = arith.addi %s, %l0 : i32
    scf.yield %t : i32
  }
  %j0 = arith.addi %f, %i : i32
  %j = arith.addi %j0, %a : i32
  return %j : i32
}
"""

MLIR_BLOCKS = """
module {
  func.func @g(%arg0: i1, %arg1: i32, %arg2: memref<i32>) -> i32 {
    %0 = arith.addi %arg1, %arg1 : i32
    cf.cond_br %arg0, ^bb1, ^bb2
  ^bb1:
    cf.br ^bb3(%0 : i32)
  ^bb2:
    %1 = arith.muli %arg1, %arg1 : i32
    cf.br ^bb3(%1 : i32)
  ^bb3(%2: i32):
    %3 = arith.muli %arg1, %arg1 : i32
    %4 = arith.addi %2, %3 : i32
    %5 = scf.if %arg0 -> (i32) {
      %8 = arith.muli %0, %3 : i32
      scf.yield %8 : i32
    } else {
      %8 = memref.load %arg2[] : memref<i32>
      memref.store %arg1, %arg2[] : memref<i32>
      %9 = memref.load %arg2[] : memref<i32>
      %10 = arith.addi %9, %9 : i32
      %11 = arith.addi %10, %8 : i32
      scf.yield %11 : i32
    }
    %6 = arith.addi %4, %5 : i32
    %7 = arith.addi %6, %0 : i32
    return %7 : i32
  }
}
"""

LOOP = """
func.func @loop(%lb: index, %ub: index, %x: i32) -> i32 {
  %a = arith.muli %x, %x : i32
  %r = scf.for %i = %lb to %ub step %lb iter_args(%acc = %a) -> (i32) {
    %b = arith.muli %x, %x : i32
    %n = arith.addi %acc, %b : i32
    scf.yield %n : i32
  }
  %c = arith.muli %x, %x : i32
  %s = arith.addi %r, %c : i32
  return %s : i32
}
"""

MLIR_LOOP = """
module {
  func.func @loop(%arg0: index, %arg1: index, %arg2: i32) -> i32 {
    %0 = arith.muli %arg2, %arg2 : i32
    %1 = scf.for %arg3 = %arg0 to %arg1 step %arg0 iter_args(%arg4 = %0) -> (i32) {
      %3 = arith.addi %arg4, %0 : i32
      scf.yield %3 : i32
    }
    %2 = arith.addi %1, %0 : i32
    return %2 : i32
  }
}
"""


def stats(pass_: CSE) -> dict[str, int]:
    return {stat.name: value for stat, value in statistic_values(pass_)}


def test_matches_mlir_opt_and_its_statistics_for_the_last_function() -> None:
    pass_ = CSE()
    assert_same_ir(run_passes(TWO_FUNCTIONS, pass_), MLIR_TWO_FUNCTIONS)
    # mlir-opt: the values of @b, the last function this instance processed.
    assert stats(pass_) == {"num-cse'd": 0, "num-dce'd": 1}


def test_statistics_on_the_module_count_every_function() -> None:
    pass_ = CSE()
    assert_same_ir(run_passes(TWO_FUNCTIONS, pass_, nest=None), MLIR_TWO_FUNCTIONS)
    # mlir-opt counts a side-effect-free CSE twice: 2 merges in @a show as 4.
    assert stats(pass_) == {"num-cse'd": 4, "num-dce'd": 2}


def test_statistics_are_assigned_per_run_not_accumulated() -> None:
    pass_ = CSE()
    run_passes(TWO_FUNCTIONS, pass_, nest=None)
    run_passes("func.func @f(%x: i32) -> i32 {\n  return %x : i32\n}", pass_, nest=None)
    assert stats(pass_) == {"num-cse'd": 0, "num-dce'd": 0}


def test_dominance_decides_across_blocks_and_regions() -> None:
    pass_ = CSE()
    assert_same_ir(run_passes(BLOCKS, pass_), MLIR_BLOCKS)
    # Two pure merges (counted twice each) and one merged load (counted once).
    assert stats(pass_) == {"num-cse'd": 5, "num-dce'd": 0}


def test_loop_bodies_reuse_values_from_outside() -> None:
    assert_same_ir(run_passes(LOOP, CSE()), MLIR_LOOP)


def test_ops_of_isolated_regions_never_merge_with_outside_ones() -> None:
    text = """
    %c = arith.constant 1 : i32
    "test.use"(%c) : (i32) -> ()
    func.func @a() -> i32 {
      %d = arith.constant 1 : i32
      return %d : i32
    }
    func.func @b() -> i32 {
      %e = arith.constant 1 : i32
      return %e : i32
    }
    """
    assert normalized(run_passes(text, CSE(), nest=None)) == normalized(text)


def test_requests_dominance_through_the_analysis_manager() -> None:
    recorder = Recorder()
    run_pipeline(TWO_FUNCTIONS, "builtin.module(func.func(cse))", None, [recorder])
    # Computed by the analysis manager, once per function, and it is passflow's
    # DominanceInfo itself, not merely an analysis bearing its name.
    assert recorder.analysis_classes == [
        (DominanceInfo, "func.func", "a"),
        (DominanceInfo, "func.func", "b"),
    ]
    assert recorder.analyses == [
        ("DominanceInfo", "func.func", "a"),
        ("DominanceInfo", "func.func", "b"),
    ]


def test_keeps_dominance_even_after_erasing_ops() -> None:
    recorder = Recorder()
    run_pipeline(TWO_FUNCTIONS, "builtin.module(func.func(cse,cse))", None, [recorder])
    # The second run reuses the first run's DominanceInfo in both functions.
    assert len(recorder.analyses) == 2


def test_declaration_matches_mlir_opt() -> None:
    info = lookup_pass("cse")
    assert info is not None and info.pass_class is CSE
    assert (CSE.name, CSE.summary, CSE.kinds) == (
        "CSE",
        "Eliminate common sub-expressions",
        ("Cleanup",),
    )
    assert str(CSE()) == "cse"
    assert [(s.name, s.description) for s, _ in statistic_values(CSE())] == [
        ("num-cse'd", "Number of operations CSE'd"),
        ("num-dce'd", "Number of operations DCE'd"),
    ]


# --- values in allocated registers (issue 14) --------------------------------------

# `x86.get_register` is `Pure`, but its value is what rax holds where it is: `%d`
# reads rax after the add overwrote it. Merged into `%a` (as xdsl-opt's cse does),
# `%a` is read after its in/out use, and xDSL's own liveness check rejects the IR.
RAX_AFTER_ADD = """
x86_func.func @f() {
  %a = x86.get_register : !x86.reg64<rax>
  %b = x86.get_register : !x86.reg64<rdx>
  %c = x86.rs.add %a, %b : (!x86.reg64<rax>, !x86.reg64<rdx>) -> !x86.reg64<rax>
  %d = x86.get_register : !x86.reg64<rax>
  x86.ms.mov [%b + 8], %d : (!x86.reg64<rdx>, !x86.reg64<rax>) -> ()
  x86_func.ret
}
"""


def test_reads_of_an_allocated_register_are_never_merged() -> None:
    pipeline = "builtin.module(cse,x86-regalloc-verify-liveness)"
    result = run_pipeline(RAX_AFTER_ADD, pipeline)
    assert normalized(result) == normalized(RAX_AFTER_ADD)


def test_writes_of_an_allocated_register_are_never_merged() -> None:
    # The 5, 7, 5 stores of xDSL's backend/riscv/canonicalize.mlir, folded.
    text = """
    riscv_func.func @f(%p : !riscv.reg<a1>) {
      %a = rv32.li 5 : !riscv.reg<a0>
      riscv.sw %p, %a, 0 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
      %b = rv32.li 7 : !riscv.reg<a0>
      riscv.sw %p, %b, 4 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
      %c = rv32.li 5 : !riscv.reg<a0>
      riscv.sw %p, %c, 8 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
      riscv_func.return
    }
    """
    assert normalized(run_passes(text, CSE(), nest=None)) == normalized(text)


def test_unallocated_registers_are_plain_values() -> None:
    # Pure when no register is set; a read of a0 merges until a0 is written.
    text = """
    riscv_func.func @f(%p : !riscv.reg<a1>, %x : !riscv.reg<a0>) {
      %r = rv32.get_register : !riscv.reg
      %s = rv32.get_register : !riscv.reg
      %m = riscv.mv %x : (!riscv.reg<a0>) -> !riscv.reg
      %n = riscv.mv %x : (!riscv.reg<a0>) -> !riscv.reg
      riscv.sw %p, %r, 0 : (!riscv.reg<a1>, !riscv.reg) -> ()
      riscv.sw %p, %s, 4 : (!riscv.reg<a1>, !riscv.reg) -> ()
      riscv.sw %p, %m, 8 : (!riscv.reg<a1>, !riscv.reg) -> ()
      riscv.sw %p, %n, 12 : (!riscv.reg<a1>, !riscv.reg) -> ()
      %w = rv32.li 7 : !riscv.reg<a0>
      %o = riscv.mv %x : (!riscv.reg<a0>) -> !riscv.reg
      riscv.sw %p, %o, 16 : (!riscv.reg<a1>, !riscv.reg) -> ()
      riscv.sw %p, %w, 20 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
      riscv_func.return
    }
    """
    expected = """
    riscv_func.func @f(%p : !riscv.reg<a1>, %x : !riscv.reg<a0>) {
      %r = rv32.get_register : !riscv.reg
      %m = riscv.mv %x : (!riscv.reg<a0>) -> !riscv.reg
      riscv.sw %p, %r, 0 : (!riscv.reg<a1>, !riscv.reg) -> ()
      riscv.sw %p, %r, 4 : (!riscv.reg<a1>, !riscv.reg) -> ()
      riscv.sw %p, %m, 8 : (!riscv.reg<a1>, !riscv.reg) -> ()
      riscv.sw %p, %m, 12 : (!riscv.reg<a1>, !riscv.reg) -> ()
      %w = rv32.li 7 : !riscv.reg<a0>
      %o = riscv.mv %x : (!riscv.reg<a0>) -> !riscv.reg
      riscv.sw %p, %o, 16 : (!riscv.reg<a1>, !riscv.reg) -> ()
      riscv.sw %p, %w, 20 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
      riscv_func.return
    }
    """
    assert_same_ir(run_passes(text, CSE(), nest=None), expected)


def _first(text: str, name: str) -> ir.Operation:
    module = ir.parse_module(text, context())
    return next(op for op in module.walk() if op.name == name)


def test_one_rule_decides_for_cse_and_constant_uniquing() -> None:
    text = """
    %m = "test.op"() : () -> memref<4xi32>
    %i = arith.constant 0 : index
    %v = memref.load %m[%i] : memref<4xi32>
    %a = rv32.li 5 : !riscv.reg<a0>
    %u = rv32.li 5 : !riscv.reg
    %r = rv32.get_register : !riscv.reg<a0>
    %g = wasmssa.global_get @g : i32
    %e = equivalence.const_class %v (constant = 0 : i32) : i32
    """
    expected = {
        "arith.constant": (Reuse.ANYWHERE, True),
        "memref.load": (Reuse.SAME_BLOCK, False),
        "rv32.li": (Reuse.NEVER, False),  # the first one, writing a0
        "rv32.get_register": (Reuse.NEVER, False),
        "wasmssa.global_get": (Reuse.NEVER, False),  # ConstantLike, effects unknown
        "equivalence.const_class": (Reuse.ANYWHERE, False),  # has operands
    }
    for name, (reuse, uniquable) in expected.items():
        op = _first(text, name)
        assert (reuse_of(op), is_uniquable_constant(op)) == (reuse, uniquable), name
    unallocated = _first(text.replace("%a = rv32.li 5 : !riscv.reg<a0>", ""), "rv32.li")
    assert (reuse_of(unallocated), is_uniquable_constant(unallocated)) == (
        Reuse.ANYWHERE,
        True,
    )
