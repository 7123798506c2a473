"""Region simplification (MLIR's `simplifyRegions`): the function itself, its
change accounting, the branch-operand layer beneath it, and `canonicalize`'s use of
it against mlir-opt 22.1.8 on shapes from MLIR's canonicalize-dce.mlir and
canonicalize-block-merge.mlir."""

from __future__ import annotations

import pytest
from transforms_support import assert_same_ir, context, run_pipeline
from xdsl.dialects import cf
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.ir import Block, Operation, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    successor_def,
    traits_def,
    var_operand_def,
)
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.traits import IsTerminator

from passflow import ir
from passflow.transforms._branches import (
    branch_operands,
    forwarded_operands,
    register_branch_op,
    set_forwarded_operands,
    successor_argument,
)
from passflow.transforms.region_simplify import (
    erase_unreachable_blocks,
    simplify_regions,
)


def parse(text: str) -> ModuleOp:
    return ir.parse_module(text, context())


def only_function(module: ModuleOp) -> Operation:
    return next(iter(module.body.block.ops))


def canonicalize(text: str, options: str = "") -> ModuleOp:
    element = f"canonicalize{{{options}}}" if options else "canonicalize"
    return run_pipeline(text, f"builtin.module(func.func({element}))")


# --- dead code and dead block arguments (normal mode) ---------------------------

# canonicalize-dce.mlir's "recursively dead block arguments with pure ops in
# between": the loop-carried value, its argument and the op computing it go.
LOOP_CARRIED = """
func.func @f(%arg0: f32) {
  cf.br ^bb1(%arg0 : f32)
^bb1(%0: f32):
  %1 = arith.addf %0, %0 : f32
  cf.br ^bb1(%1 : f32)
}
"""

LOOP_CARRIED_SIMPLIFIED = """
func.func @f(%arg0: f32) {
  cf.br ^bb1
^bb1:
  cf.br ^bb1
}
"""


def test_dead_cycle_through_a_block_argument_is_erased() -> None:
    module = parse(LOOP_CARRIED)
    assert simplify_regions(only_function(module))
    assert_same_ir(module, LOOP_CARRIED_SIMPLIFIED)
    assert not simplify_regions(only_function(module))


# canonicalize-dce.mlir's "mechanics of deleting multiple block arguments", with
# a cf.cond_br (the test.br of MLIR's test dialect is not in mlir-opt's release).
MULTIPLE_ARGUMENTS = """
func.func @f(%c: i1, %a0: i8, %a1: i16, %a2: i32, %a3: i64, %a4: f32) {
  cf.cond_br %c, ^bb1(%a0, %a1, %a2, %a3, %a4 : i8, i16, i32, i64, f32), ^bb2
^bb1(%t0: i8, %t1: i16, %t2: i32, %t3: i64, %t4: f32):
  "foo.print"(%t1) : (i16) -> ()
  "foo.print"(%t3) : (i64) -> ()
  cf.br ^bb2
^bb2:
  return
}
"""

MULTIPLE_ARGUMENTS_MLIR = """
module {
  func.func @f(%arg0: i1, %arg1: i8, %arg2: i16, %arg3: i32, %arg4: i64, %arg5: f32) {
    cf.cond_br %arg0, ^bb1(%arg2, %arg4 : i16, i64), ^bb2
  ^bb1(%0: i16, %1: i64):  // pred: ^bb0
    "foo.print"(%0) : (i16) -> ()
    "foo.print"(%1) : (i64) -> ()
    cf.br ^bb2
  ^bb2:  // 2 preds: ^bb0, ^bb1
    return
  }
}
"""


def test_dead_arguments_and_their_operands_go_together() -> None:
    assert_same_ir(canonicalize(MULTIPLE_ARGUMENTS), MULTIPLE_ARGUMENTS_MLIR)


def test_dropping_dead_arguments_alone_is_not_a_change() -> None:
    """MLIR's runRegionDCE reports erased ops only; a driver iterating on the
    answer (and test-convergence) must see the same."""
    module = parse(MULTIPLE_ARGUMENTS)
    function = only_function(module)
    assert not simplify_regions(function)
    block = function.regions[0].blocks[1]
    assert [arg.type for arg in block.args] == [
        arg.type for arg in function.regions[0].blocks[0].args[2:5:2]
    ]


def test_entry_arguments_are_never_dropped() -> None:
    module = parse("""
    func.func @f(%unused: i32) {
      "foo.region"() ({
      ^bb0(%also_unused: i64):
        "foo.yield"() : () -> ()
      }) : () -> ()
      return
    }
    """)
    function = only_function(module)
    simplify_regions(function, "aggressive")
    nested = next(iter(function.regions[0].block.ops))
    assert len(function.regions[0].block.args) == 1
    assert len(nested.regions[0].block.args) == 1


def test_opaque_predecessor_does_not_keep_an_unused_argument() -> None:
    """MLIR marks the successor arguments of a registered terminator that is not
    a branch live, but "foo.br" is unregistered, so nothing does."""
    module = parse("""
    func.func @f(%a: i32) -> i32 {
      "foo.br"(%a) [^bb1, ^bb2] : (i32) -> ()
    ^bb1(%unused: i32):
      return %a : i32
    ^bb2(%used: i32):
      return %used : i32
    }
    """)
    simplify_regions(only_function(module))
    _, first, second = only_function(module).regions[0].blocks
    assert (len(first.args), len(second.args)) == (0, 1)


def test_unreachable_blocks_go_first() -> None:
    module = parse("""
    func.func @f(%a: i32) -> i32 {
      return %a : i32
    ^bb1(%x: i32):
      %y = arith.addi %x, %x : i32
      cf.br ^bb1(%y : i32)
    }
    """)
    assert erase_unreachable_blocks(module)
    assert len(only_function(module).regions[0].blocks) == 1
    assert not erase_unreachable_blocks(module)


@pytest.mark.parametrize("form", ["op", "region", "regions"])
def test_accepts_an_op_a_region_or_regions(form: str) -> None:
    module = parse(LOOP_CARRIED)
    function = only_function(module)
    target: Operation | Region | list[Region] = {
        "op": function,
        "region": function.regions[0],
        "regions": list(function.regions),
    }[form]
    assert simplify_regions(target)
    assert_same_ir(module, LOOP_CARRIED_SIMPLIFIED)


def test_listener_hears_every_erased_op() -> None:
    module = parse(LOOP_CARRIED)
    erased: list[str] = []
    listener = PatternRewriterListener()
    listener.operation_removal_handler.append(lambda op: erased.append(op.name))
    simplify_regions(only_function(module), "normal", listener)
    assert erased == ["arith.addf"]


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown region simplification mode"):
        simplify_regions(Region(), "everything")  # type: ignore[arg-type]


# --- identical blocks and redundant arguments (aggressive mode) -----------------

# canonicalize-block-merge.mlir's mismatch_operands_matching_arguments.
MERGE = """
func.func @f(%cond: i1, %a: i32, %b: i32) -> (i32, i32) {
  cf.cond_br %cond, ^bb1(%b : i32), ^bb2(%a : i32)
^bb1(%x: i32):
  return %a, %x : i32, i32
^bb2(%y: i32):
  return %b, %y : i32, i32
}
"""

MERGE_MLIR = """
module {
  func.func @f(%arg0: i1, %arg1: i32, %arg2: i32) -> (i32, i32) {
    %0 = arith.select %arg0, %arg2, %arg1 : i32
    %1 = arith.select %arg0, %arg1, %arg2 : i32
    return %1, %0 : i32, i32
  }
}
"""

MERGED_BY_SIMPLIFY_ALONE = """
func.func @f(%cond: i1, %a: i32, %b: i32) -> (i32, i32) {
  cf.cond_br %cond, ^bb1(%b, %a : i32, i32), ^bb1(%a, %b : i32, i32)
^bb1(%x: i32, %z: i32):
  return %z, %x : i32, i32
}
"""


def test_aggressive_merges_blocks_passing_differing_values_as_arguments() -> None:
    module = parse(MERGE)
    assert not simplify_regions(only_function(module), "normal")
    assert simplify_regions(only_function(module), "aggressive")
    assert_same_ir(module, MERGED_BY_SIMPLIFY_ALONE)
    module.verify()


def test_canonicalize_aggressive_matches_mlir_opt() -> None:
    assert_same_ir(canonicalize(MERGE, "region-simplify=aggressive"), MERGE_MLIR)


def test_normal_never_merges() -> None:
    assert_same_ir(canonicalize(MERGE), MERGE)


# canonicalize-block-merge.mlir's mismatch_loop: merging a block into one that
# branches to itself makes the back edge pass a value.
BACK_EDGE = """
func.func @f(%c: i1, %d: i1) {
  %e = "foo.op"() : () -> i1
  cf.cond_br %c, ^bb2, ^bb3
^bb1:
  cf.cond_br %e, ^bb1, ^bb3
^bb2:
  cf.cond_br %d, ^bb1, ^bb3
^bb3:
  return
}
"""

BACK_EDGE_MLIR = """
module {
  func.func @f(%arg0: i1, %arg1: i1) {
    %0 = "foo.op"() : () -> i1
    cf.cond_br %arg0, ^bb1(%arg1 : i1), ^bb2
  ^bb1(%1: i1):  // 2 preds: ^bb0, ^bb1
    cf.cond_br %1, ^bb1(%0 : i1), ^bb2
  ^bb2:  // 2 preds: ^bb0, ^bb1
    return
  }
}
"""


def test_back_edges_are_merged_as_mlir_does() -> None:
    result = canonicalize(BACK_EDGE, "region-simplify=aggressive")
    assert_same_ir(result, BACK_EDGE_MLIR)


# canonicalize-block-merge.mlir's mismatch_unknown_terminator and nomerge.
NOT_MERGED = """
func.func private @print(i32, i32)
func.func @opaque(%a: i32, %b: i32) -> i32 {
  "foo.cond_br"() [^bb1, ^bb2] : () -> ()
^bb1:
  return %a : i32
^bb2:
  return %b : i32
}
func.func @used_outside(%n: i32, %i: i32) {
  %one = arith.constant 1 : i32
  %lt = arith.cmpi slt, %i, %n : i32
  cf.cond_br %lt, ^bb1, ^bb4
^bb1:
  %i1 = arith.addi %i, %one : i32
  cf.br ^bb3(%i1 : i32)
^bb2:
  %j1 = arith.addi %j, %one : i32
  cf.br ^bb3(%j1 : i32)
^bb3(%j: i32):
  %more = arith.cmpi slt, %j, %n : i32
  func.call @print(%j, %i1) : (i32, i32) -> ()
  cf.cond_br %more, ^bb2, ^bb4
^bb4:
  return
}
"""


def test_blocks_that_cannot_be_merged_stay() -> None:
    assert_same_ir(canonicalize(NOT_MERGED, "region-simplify=aggressive"), NOT_MERGED)


def test_redundant_argument_is_replaced_by_the_common_value() -> None:
    module = parse("""
    func.func @f(%a: i32, %b: i32) -> i32 {
      "foo.pred"() [^bb1, ^bb2] : () -> ()
    ^bb1:
      cf.br ^bb3(%a, %b : i32, i32)
    ^bb2:
      cf.br ^bb3(%a, %a : i32, i32)
    ^bb3(%u: i32, %v: i32):
      %s = arith.addi %u, %v : i32
      return %s : i32
    }
    """)
    assert simplify_regions(only_function(module), "aggressive")
    assert_same_ir(
        module,
        """
        func.func @f(%a: i32, %b: i32) -> i32 {
          "foo.pred"() [^bb1, ^bb2] : () -> ()
        ^bb1:
          cf.br ^bb3(%b : i32)
        ^bb2:
          cf.br ^bb3(%a : i32)
        ^bb3(%v: i32):
          %s = arith.addi %a, %v : i32
          return %s : i32
        }
        """,
    )


# --- branch operands -----------------------------------------------------------

SWITCH = """
func.func @f(%flag: i32, %a: i32, %b: i32, %c: i64) {
  cf.switch %flag : i32, [
    default: ^bb1(%a : i32),
    1: ^bb2(%b, %c : i32, i64),
    2: ^bb1(%b : i32)
  ]
^bb1(%x: i32):
  return
^bb2(%y: i32, %z: i64):
  "foo.use"(%z) : (i64) -> ()
  return
}
"""


def test_switch_operands_are_cut_by_case() -> None:
    module = parse(SWITCH)
    switch = only_function(module).regions[0].blocks[0].last_op
    assert isinstance(switch, cf.SwitchOp)
    assert branch_operands(switch) is not None
    names = [[v.name_hint for v in forwarded_operands(switch, i)] for i in range(3)]
    assert names == [["a"], ["b", "c"], ["b"]]
    assert successor_argument(switch, 0) is None  # the flag
    assert successor_argument(switch, 3) is switch.successors[1].args[1]
    set_forwarded_operands(switch, 1, [forwarded_operands(switch, 1)[1]])
    set_forwarded_operands(switch, 2, [])
    assert [len(forwarded_operands(switch, i)) for i in range(3)] == [1, 1, 0]
    assert switch.case_operand_segments.get_values() == (1, 0)


def test_dead_switch_arguments_keep_the_ir_valid() -> None:
    module = parse(SWITCH)
    simplify_regions(only_function(module))
    module.verify()
    _, first, second = only_function(module).regions[0].blocks
    assert (len(first.args), len(second.args)) == (0, 1)


def test_cond_br_segment_sizes_follow_the_edit() -> None:
    module = parse(MULTIPLE_ARGUMENTS)
    simplify_regions(only_function(module))
    branch = only_function(module).regions[0].blocks[0].last_op
    assert isinstance(branch, cf.ConditionalBranchOp)
    assert len(branch.then_arguments) == 2
    assert len(branch.else_arguments) == 0
    module.verify()


def test_riscv_branch_arguments_are_dropped_too() -> None:
    module = parse("""
    riscv_func.func @f(%a : !riscv.reg<a0>, %b : !riscv.reg<a1>) {
      riscv_cf.beq %a : !riscv.reg<a0>, %b : !riscv.reg<a1>, ^bb2(%a : !riscv.reg<a0>), ^bb1(%b : !riscv.reg<a1>)
    ^bb1(%x : !riscv.reg<a1>):
      riscv.label "else"
      riscv_func.return
    ^bb2(%y : !riscv.reg<a0>):
      riscv.label "then"
      riscv_func.return
    }
    """)
    simplify_regions(only_function(module))
    module.verify()
    _, first, second = only_function(module).regions[0].blocks
    assert (len(first.args), len(second.args)) == (0, 0)


@irdl_op_definition
class JumpOp(IRDLOperation):
    """A branch of another dialect, made known with `register_branch_op`."""

    name = "test_region_simplify.jump"
    values = var_operand_def()
    dest = successor_def()
    traits = traits_def(IsTerminator())


def test_a_registered_branch_op_has_its_arguments_dropped() -> None:
    source, dest = Block(arg_types=[i32]), Block(arg_types=[i32])
    jump = JumpOp.create(operands=[source.args[0]], successors=[dest])
    source.add_op(jump)
    dest.add_op(cf.BranchOp(dest, dest.args[0]))
    region = Region([source, dest])
    assert branch_operands(jump) is None
    simplify_regions(region)
    assert len(dest.args) == 1  # unknown branch: its successor's argument is live
    register_branch_op(JumpOp.name, "values")
    simplify_regions(region)
    assert len(dest.args) == 0
    assert not jump.operands
