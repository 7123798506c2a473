"""`canonicalize`: output against mlir-opt 22.1.8, and every option honoured."""

from __future__ import annotations

import pytest
from transforms_support import (
    Recorder,
    assert_same_ir,
    normalized,
    run_passes,
    run_pipeline,
)
from xdsl.dialects.riscv import riscv_code
from xdsl.ir import SSAValue

from passflow import ir
from passflow.diagnostics import PassPipelineError
from passflow.instrumentation import PassInstrumentation
from passflow.pass_base import Pass
from passflow.print_options import PrintOptions
from passflow.registry import lookup_pass
from passflow.transforms import Canonicalizer
from passflow.transforms.canonicalize import RegionSimplify

# Folding (2+3, x+0), constant uniquing and hoisting, dead code, a trivial
# branch and an unreachable block.
INPUT = """
func.func @f(%x: i32) -> i32 {
  %a = arith.addi %x, %x : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %s = arith.addi %c2, %c3 : i32
  %t = arith.muli %a, %s : i32
  %c0 = arith.constant 0 : i32
  %u = arith.addi %t, %c0 : i32
  %c2b = arith.constant 2 : i32
  %dead = arith.muli %x, %c2b : i32
  %v = arith.xori %u, %c2b : i32
  return %v : i32
}
func.func @g(%c: i1, %x: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  cf.br ^bb1
^bb1:
  %y = arith.addi %x, %c1 : i32
  return %y : i32
^bb2:
  %z = arith.muli %x, %c1 : i32
  return %z : i32
}
"""

MLIR_DEFAULT = """
module {
  func.func @f(%arg0: i32) -> i32 {
    %c5_i32 = arith.constant 5 : i32
    %c2_i32 = arith.constant 2 : i32
    %0 = arith.addi %arg0, %arg0 : i32
    %1 = arith.muli %0, %c5_i32 : i32
    %2 = arith.xori %1, %c2_i32 : i32
    return %2 : i32
  }
  func.func @g(%arg0: i1, %arg1: i32) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg1, %c1_i32 : i32
    return %0 : i32
  }
}
"""

# One iteration: the constant folded from 2+3 is not hoisted yet.
MLIR_ONE_ITERATION = """
module {
  func.func @f(%arg0: i32) -> i32 {
    %c2_i32 = arith.constant 2 : i32
    %0 = arith.addi %arg0, %arg0 : i32
    %c5_i32 = arith.constant 5 : i32
    %1 = arith.muli %0, %c5_i32 : i32
    %2 = arith.xori %1, %c2_i32 : i32
    return %2 : i32
  }
  func.func @g(%arg0: i1, %arg1: i32) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg1, %c1_i32 : i32
    return %0 : i32
  }
}
"""

# No rewrite budget: only constant uniquing, unreachable-block erasure and
# region simplification (which erases %dead) happen.
MLIR_NO_REWRITES = """
module {
  func.func @f(%arg0: i32) -> i32 {
    %c0_i32 = arith.constant 0 : i32
    %c3_i32 = arith.constant 3 : i32
    %c2_i32 = arith.constant 2 : i32
    %0 = arith.addi %arg0, %arg0 : i32
    %1 = arith.addi %c2_i32, %c3_i32 : i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %2, %c0_i32 : i32
    %4 = arith.xori %3, %c2_i32 : i32
    return %4 : i32
  }
  func.func @g(%arg0: i1, %arg1: i32) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    cf.br ^bb1
  ^bb1:
    %0 = arith.addi %arg1, %c1_i32 : i32
    return %0 : i32
  }
}
"""

# As above without region simplification: %dead survives.
MLIR_NO_REWRITES_NO_SIMPLIFY = """
module {
  func.func @f(%arg0: i32) -> i32 {
    %c0_i32 = arith.constant 0 : i32
    %c3_i32 = arith.constant 3 : i32
    %c2_i32 = arith.constant 2 : i32
    %0 = arith.addi %arg0, %arg0 : i32
    %1 = arith.addi %c2_i32, %c3_i32 : i32
    %2 = arith.muli %0, %1 : i32
    %3 = arith.addi %2, %c0_i32 : i32
    %4 = arith.muli %arg0, %c2_i32 : i32
    %5 = arith.xori %3, %c2_i32 : i32
    return %5 : i32
  }
  func.func @g(%arg0: i1, %arg1: i32) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    cf.br ^bb1
  ^bb1:
    %0 = arith.addi %arg1, %c1_i32 : i32
    return %0 : i32
  }
}
"""


def canonicalize(
    text: str, options: str = "", anchor: str = "func.func"
) -> ir.ModuleOp:
    element = f"canonicalize{{{options}}}" if options else "canonicalize"
    if anchor == "builtin.module":
        return run_pipeline(text, f"builtin.module({element})")
    return run_pipeline(text, f"builtin.module({anchor}({element}))")


def test_matches_mlir_opt() -> None:
    assert_same_ir(canonicalize(INPUT), MLIR_DEFAULT)


def test_runs_on_the_op_it_is_given_whatever_it_is() -> None:
    on_module = canonicalize(INPUT, anchor="builtin.module")
    assert normalized(on_module) == normalized(canonicalize(INPUT))


def test_max_iterations_bounds_the_iterations() -> None:
    assert_same_ir(canonicalize(INPUT, "max-iterations=1"), MLIR_ONE_ITERATION)


def test_test_convergence_fails_when_iterations_run_out() -> None:
    with pytest.raises(PassPipelineError):
        canonicalize(INPUT, "max-iterations=1 test-convergence=true")
    # Two iterations suffice: one to rewrite, one to see nothing changes.
    converged = canonicalize(INPUT, "max-iterations=2 test-convergence=true")
    assert normalized(converged) == normalized(MLIR_DEFAULT)


class Outcomes(PassInstrumentation):
    """Records, for each Canonicalizer run, whether it succeeded and on which op."""

    def __init__(self) -> None:
        self.outcomes: list[tuple[str, str | None]] = []

    def run_after_pass(self, pass_: Pass, op: ir.Operation) -> None:
        if isinstance(pass_, Canonicalizer):
            self.outcomes.append(("succeeded", ir.symbol_name(op)))

    def run_after_pass_failed(self, pass_: Pass, op: ir.Operation) -> None:
        if isinstance(pass_, Canonicalizer):
            self.outcomes.append(("failed", ir.symbol_name(op)))


def test_without_test_convergence_running_out_is_not_a_failure() -> None:
    pipeline = "builtin.module(func.func(canonicalize{{max-iterations=1{}}}))"
    # Neither function converges in one iteration: with test-convergence, both
    # runs fail...
    failing = Outcomes()
    with pytest.raises(PassPipelineError):
        run_pipeline(INPUT, pipeline.format(" test-convergence=true"), None, [failing])
    assert failing.outcomes == [("failed", "f"), ("failed", "g")]
    # ...without it, both succeed, with the IR of their one iteration.
    passing = Outcomes()
    result = run_pipeline(INPUT, pipeline.format(""), None, [passing])
    assert passing.outcomes == [("succeeded", "f"), ("succeeded", "g")]
    assert_same_ir(result, MLIR_ONE_ITERATION)


def test_max_num_rewrites_zero_applies_nothing() -> None:
    assert_same_ir(canonicalize(INPUT, "max-num-rewrites=0"), MLIR_NO_REWRITES)


def test_region_simplify_disabled_keeps_dead_ops_the_worklist_never_saw() -> None:
    result = canonicalize(INPUT, "max-num-rewrites=0 region-simplify=disabled")
    assert_same_ir(result, MLIR_NO_REWRITES_NO_SIMPLIFY)


def test_unreachable_blocks_go_even_without_region_simplification() -> None:
    text = """
    func.func @g(%x: i32) -> i32 {
      return %x : i32
    ^bb2:
      %c = arith.constant 7 : i32
      %z = arith.muli %x, %c : i32
      return %z : i32
    }
    """
    expected = "func.func @g(%arg0: i32) -> i32 {\n  return %arg0 : i32\n}"
    result = canonicalize(text, "max-num-rewrites=0 region-simplify=disabled")
    assert_same_ir(result, expected)
    # Erasing them is a change: one iteration does not converge.
    with pytest.raises(PassPipelineError):
        canonicalize(text, "max-iterations=1 test-convergence=true")


SWAPS = """
func.func @f(%x: i32, %y: i32) -> (i32, i32) {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %a = arith.addi %c1, %x : i32
  %b = arith.muli %c2, %y : i32
  return %a, %b : i32, i32
}
"""


def _swapped(module: ir.ModuleOp) -> list[str]:
    """The binary ops whose constant operand a pattern moved to the right."""
    return [
        op.name
        for op in module.walk()
        if op.name in ("arith.addi", "arith.muli") and _is_constant(op.operands[1])
    ]


def _is_constant(value: SSAValue) -> bool:
    owner = value.owner
    return isinstance(owner, ir.Operation) and owner.name == "arith.constant"


def test_top_down_decides_which_op_is_rewritten_first() -> None:
    budget = "max-num-rewrites=1 max-iterations=1"
    assert _swapped(canonicalize(SWAPS, budget)) == ["arith.addi"]
    assert _swapped(canonicalize(SWAPS, f"{budget} top-down=false")) == ["arith.muli"]
    assert _swapped(canonicalize(SWAPS)) == ["arith.addi", "arith.muli"]


FLOATS = """
func.func @f() -> f32 {
  %a = arith.constant 1.5 : f32
  %b = arith.constant 2.0 : f32
  %s = arith.addf %a, %b : f32
  return %s : f32
}
"""

MLIR_FLOATS = """
func.func @f() -> f32 {
  %cst = arith.constant 3.500000e+00 : f32
  return %cst : f32
}
"""


def test_patterns_fold_float_constants_like_mlir() -> None:
    assert_same_ir(canonicalize(FLOATS), MLIR_FLOATS)


def test_disable_patterns_removes_the_pattern() -> None:
    result = canonicalize(FLOATS, "disable-patterns=FoldConstConstOp")
    assert normalized(result) == normalized(FLOATS)


def test_enable_patterns_keeps_only_the_named_patterns() -> None:
    others = canonicalize(FLOATS, "enable-patterns=FoldConstsByReassociation")
    assert normalized(others) == normalized(FLOATS)
    named = canonicalize(FLOATS, "enable-patterns=FoldConstConstOp,Other")
    assert_same_ir(named, MLIR_FLOATS)


def test_folding_is_not_a_pattern_and_cannot_be_disabled() -> None:
    text = """
    func.func @f(%x: i32) -> i32 {
      %c0 = arith.constant 0 : i32
      %y = arith.addi %x, %c0 : i32
      return %y : i32
    }
    """
    result = canonicalize(text, "enable-patterns=Nothing")
    assert_same_ir(result, "func.func @f(%arg0: i32) -> i32 {\n  return %arg0 : i32\n}")


def test_options_set_in_python_are_honoured_and_can_change_between_runs() -> None:
    pass_ = Canonicalizer(disable_patterns=["FoldConstConstOp"])
    assert normalized(run_passes(FLOATS, pass_)) == normalized(FLOATS)
    pass_.disable_patterns = []
    assert_same_ir(run_passes(FLOATS, pass_), MLIR_FLOATS)


def test_no_analysis_survives_canonicalize_even_unchanged() -> None:
    # As MLIR's Canonicalizer: the second cse recomputes dominance, which is what
    # mlir-opt's timing report shows as a second `(A) DominanceInfo`.
    canonical = normalized(canonicalize(INPUT))
    recorder = Recorder()
    run_pipeline(
        canonical, "builtin.module(func.func(cse,canonicalize,cse))", None, [recorder]
    )
    changed = Recorder()
    run_pipeline(
        INPUT, "builtin.module(func.func(cse,canonicalize,cse))", None, [changed]
    )
    assert [a for a, _, _ in recorder.analyses] == ["DominanceInfo"] * 4
    assert [a for a, _, _ in changed.analyses] == ["DominanceInfo"] * 4


def test_declaration_matches_mlir_opt() -> None:
    info = lookup_pass("canonicalize")
    assert info is not None and info.pass_class is Canonicalizer
    assert Canonicalizer.name == "Canonicalizer"
    assert Canonicalizer.summary == "Canonicalize operations"
    assert Canonicalizer.op_name is None
    assert Canonicalizer.kinds == ("Cleanup",)
    assert str(Canonicalizer()) == (
        "canonicalize{  max-iterations=10 max-num-rewrites=-1 "
        "region-simplify=normal test-convergence=false top-down=true}"
    )
    configured = info.create(
        "region-simplify=aggressive top-down=false max-iterations=3"
    )
    assert isinstance(configured, Canonicalizer)
    assert configured.region_simplify is RegionSimplify.AGGRESSIVE
    assert (configured.top_down, configured.max_iterations) == (False, 3)


# --- constants that must stay where they are (issue 14) -------------------------

# Built from xDSL's backend/riscv/canonicalize.mlir: each op folds to an `rv32.li`
# writing a0 where the op was. Merging the second 5 with the first and hoisting
# them to the entry stored 5, 5, 5; xdsl-opt's output, kept here, stores 5, 7, 5.
STORES_5_7_5 = """
riscv_func.func @store_5_7_5(%p : !riscv.reg<a1>) {
  %c2 = rv32.li 2 : !riscv.reg
  %c3 = rv32.li 3 : !riscv.reg
  %five = riscv.add %c2, %c3 : (!riscv.reg, !riscv.reg) -> !riscv.reg<a0>
  riscv.sw %p, %five, 0 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  %seven = riscv.addi %c3, 4 : (!riscv.reg) -> !riscv.reg<a0>
  riscv.sw %p, %seven, 4 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  %five_again = riscv.add %c3, %c2 : (!riscv.reg, !riscv.reg) -> !riscv.reg<a0>
  riscv.sw %p, %five_again, 8 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  riscv_func.return
}
"""

XDSL_STORES_5_7_5 = """
riscv_func.func @store_5_7_5(%p : !riscv.reg<a1>) {
  %five = rv32.li 5 : !riscv.reg<a0>
  riscv.sw %p, %five, 0 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  %seven = rv32.li 7 : !riscv.reg<a0>
  riscv.sw %p, %seven, 4 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  %five_again = rv32.li 5 : !riscv.reg<a0>
  riscv.sw %p, %five_again, 8 : (!riscv.reg<a1>, !riscv.reg<a0>) -> ()
  riscv_func.return
}
"""


def _assembly(module: ir.ModuleOp) -> list[str]:
    return [line.strip() for line in riscv_code(module).splitlines()[2:]]


def test_constants_in_allocated_registers_are_neither_merged_nor_hoisted() -> None:
    result = canonicalize(STORES_5_7_5, anchor="builtin.module")
    assert_same_ir(result, XDSL_STORES_5_7_5)
    assert _assembly(result) == [
        "li a0, 5",
        "sw a0, 0(a1)",
        "li a0, 7",
        "sw a0, 4(a1)",
        "li a0, 5",
        "sw a0, 8(a1)",
        "ret",
    ]


def test_a_written_constant_stays_even_at_the_front_of_the_entry_block() -> None:
    # Already at the front: uniquing the second `li 5` into it would still make
    # the last store read the 7.
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
    result = canonicalize(text, anchor="builtin.module")
    assert normalized(result) == normalized(text)


def test_constants_in_unallocated_registers_are_still_uniqued_and_hoisted() -> None:
    # `!riscv.reg` is a plain SSA value until register allocation: MLIR's rule.
    text = """
    riscv_func.func @f(%p : !riscv.reg<a1>) {
      riscv.sw %p, %p, 0 : (!riscv.reg<a1>, !riscv.reg<a1>) -> ()
      %a = rv32.li 5 : !riscv.reg
      riscv.sw %p, %a, 4 : (!riscv.reg<a1>, !riscv.reg) -> ()
      %b = rv32.li 5 : !riscv.reg
      riscv.sw %p, %b, 8 : (!riscv.reg<a1>, !riscv.reg) -> ()
      riscv_func.return
    }
    """
    expected = """
    riscv_func.func @f(%p : !riscv.reg<a1>) {
      %a = rv32.li 5 : !riscv.reg
      riscv.sw %p, %p, 0 : (!riscv.reg<a1>, !riscv.reg<a1>) -> ()
      riscv.sw %p, %a, 4 : (!riscv.reg<a1>, !riscv.reg) -> ()
      riscv.sw %p, %a, 8 : (!riscv.reg<a1>, !riscv.reg) -> ()
      riscv_func.return
    }
    """
    assert_same_ir(canonicalize(text, anchor="builtin.module"), expected)


def test_constants_with_operands_are_neither_hoisted_nor_merged_by_value() -> None:
    # `equivalence.const_class` is `ConstantLike` but takes its e-class members as
    # operands: hoisted, it came before `%a`, which it uses; merged by value, the
    # second class lost its members. The `arith.constant`s are still uniqued.
    text = """
    func.func @f() -> (i32, i32) {
      %a = "test.op"() : () -> i32
      %c = arith.constant 3 : i32
      %k = equivalence.const_class %c, %a (constant = 3 : i32) : i32
      %c2 = arith.constant 3 : i32
      %k2 = equivalence.const_class %c2 (constant = 3 : i32) : i32
      func.return %k, %k2 : i32, i32
    }
    """
    expected = """
    func.func @f() -> (i32, i32) {
      %c = arith.constant 3 : i32
      %a = "test.op"() : () -> i32
      %k = equivalence.const_class %c, %a (constant = 3 : i32) : i32
      %k2 = equivalence.const_class %c (constant = 3 : i32) : i32
      func.return %k, %k2 : i32, i32
    }
    """
    assert_same_ir(canonicalize(text), expected)


def test_a_declared_folder_that_does_not_fold_is_no_folder() -> None:
    # xDSL's `bigint.constant` has the bare `HasFolder()` trait, whose `fold`
    # raises NotImplementedError; canonicalize crashed on xDSL's dialects/bigint.
    text = """
    %a = bigint.constant 3
    %b = bigint.constant 3
    "test.op"(%a, %b) : (!bigint.bigint, !bigint.bigint) -> ()
    """
    assert normalized(canonicalize(text, anchor="builtin.module")) == normalized(text)


# A cycle of blocks that only branch on: collapsing one branch re-enables the
# next, forever, without MLIR's cycle check (xdsl-opt never returns on this).
PASS_THROUGH_CYCLE = """
func.func @f(%c: i1) {
  cf.cond_br %c, ^bb1, ^bb3
^bb1:
  cf.br ^bb2
^bb2:
  cf.br ^bb1
^bb3:
  cf.br ^bb4
^bb4:
  func.return
}
"""


def test_branches_into_a_pass_through_cycle_are_not_collapsed() -> None:
    # With a rewrite budget, a looping canonicalizer runs out of iterations and
    # test-convergence fails; MLIR's check lets it converge.
    result = canonicalize(
        PASS_THROUGH_CYCLE, "max-num-rewrites=100 test-convergence=true"
    )
    text = ir.print_op(result)
    assert "cf.cond_br %c, ^bb1, ^bb2" in text
    assert "^bb1:\n    cf.br ^bb1" in text
    assert "^bb2:\n    func.return" in text


MERGED_CONSTANTS = """\
func.func @f(%c: i1, %x: i32) -> (i32, i32) {
  %a = arith.constant 1 : i32 loc("a")
  cf.cond_br %c, ^b1, ^b2
^b1:
  %b = arith.constant 1 : i32 loc("b")
  %h = arith.constant 5 : i32 loc("h")
  %s = arith.addi %x, %h : i32
  return %a, %s : i32, i32
^b2:
  return %a, %b : i32, i32
}
"""


def test_a_merged_constant_is_located_unknown_and_a_hoisted_one_keeps_its_loc() -> None:
    # mlir-opt 22.1.8 --canonicalize --mlir-print-debuginfo on the same input:
    # the constant 1 that `b` merged into prints loc(unknown); 5, only hoisted,
    # keeps loc("h").
    module = run_pipeline(MERGED_CONSTANTS, "builtin.module(canonicalize)")
    printed = ir.print_op(module, options=PrintOptions(debug_info=True))
    lines = printed.splitlines()
    aliases = dict(line.split(" = ", 1) for line in lines if line.startswith("#loc"))

    def location(value: int) -> str:
        line = next(line for line in lines if f"arith.constant {value} " in line)
        return aliases[line.rsplit("loc(", 1)[1].rstrip(")")]

    assert location(1) == "loc(unknown)"
    assert location(5) == 'loc("h")'
