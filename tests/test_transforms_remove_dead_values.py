"""`remove-dead-values`: outputs against mlir-opt 22.1.8, and what passflow keeps."""

from __future__ import annotations

import pytest
from transforms_support import assert_same_ir, context, run_pipeline

from passflow import ir
from passflow.registry import lookup_pass
from passflow.transforms import RemoveDeadValues
from passflow.transforms.dead_values import DeadValues

CASES = """func.func private @f(%a: i32, %b: i32, %m: memref<i32>) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  memref.store %0, %m[] : memref<i32>
  %1 = arith.muli %b, %b : i32
  return %c0, %1 : i32, i32
}
func.func @main(%x: i32, %m: memref<i32>) -> i32 {
  %r:2 = call @f(%x, %x, %m) : (i32, i32, memref<i32>) -> (i32, i32)
  %d = arith.addi %x, %x : i32
  return %r#0 : i32
}
func.func private @unused(%a: i32) -> i32 {
  return %a : i32
}
func.func @br(%c: i1, %x: i32) -> i32 {
  %d = arith.addi %x, %x : i32
  cf.cond_br %c, ^bb1(%x, %d : i32, i32), ^bb2
^bb1(%p: i32, %q: i32):
  return %p : i32
^bb2:
  return %x : i32
}
func.func @sif(%c: i1, %x: i32) -> i32 {
  %r:2 = scf.if %c -> (i32, i32) {
    %d = arith.addi %x, %x : i32
    scf.yield %x, %d : i32, i32
  } else {
    scf.yield %x, %x : i32, i32
  }
  %u = scf.if %c -> (i32) {
    scf.yield %x : i32
  } else {
    scf.yield %x : i32
  }
  return %r#0 : i32
}
"""

# mlir-opt 22.1.8 -remove-dead-values on CASES, but for @sif: MLIR also drops
# the second result of the live scf.if (and, canonicalizing, the if itself);
# passflow keeps a live region branch op whole (docs/decisions.md).
EXPECTED = """module {
  func.func private @f(%arg0: i32, %arg1: memref<i32>) -> i32 {
    %c0_i32 = arith.constant 0 : i32
    %0 = arith.addi %arg0, %c0_i32 : i32
    memref.store %0, %arg1[] : memref<i32>
    return %c0_i32 : i32
  }
  func.func @main(%arg0: i32, %arg1: memref<i32>) -> i32 {
    %0 = call @f(%arg0, %arg1) : (i32, memref<i32>) -> i32
    return %0 : i32
  }
  func.func private @unused() {
    return
  }
  func.func @br(%arg0: i1, %arg1: i32) -> i32 {
    cf.cond_br %arg0, ^bb1(%arg1 : i32), ^bb2
  ^bb1(%0: i32):
    return %0 : i32
  ^bb2:
    return %arg1 : i32
  }
  func.func @sif(%arg0: i1, %arg1: i32) -> i32 {
    %0:2 = scf.if %arg0 -> (i32, i32) {
      %1 = arith.addi %arg1, %arg1 : i32
      scf.yield %arg1, %1 : i32, i32
    } else {
      scf.yield %arg1, %arg1 : i32, i32
    }
    return %0#0 : i32
  }
}
"""


def test_registered_under_mlirs_name() -> None:
    info = lookup_pass("remove-dead-values")
    assert info is not None and info.pass_class is RemoveDeadValues
    assert RemoveDeadValues.summary == "Remove dead values"


def test_functions_branches_and_simple_ops_as_mlir() -> None:
    assert_same_ir(run_pipeline(CASES, "builtin.module(remove-dead-values)"), EXPECTED)


@pytest.mark.parametrize("option", ["", "{canonicalize=false}"])
def test_canonicalize_option_is_accepted(option: str) -> None:
    pipeline = f"builtin.module(remove-dead-values{option})"
    assert_same_ir(run_pipeline(CASES, pipeline), EXPECTED)


def test_a_callee_outside_a_function_root_keeps_its_signature() -> None:
    # mlir-opt 22.1.8 drops %unused here and leaves the caller's call invalid.
    text = """
    func.func private @callee(%arg: i32, %unused: i32) -> i32 {
      %sum = arith.addi %arg, %arg : i32
      return %sum : i32
    }
    func.func @caller(%x: i32) -> i32 {
      %r = call @callee(%x, %x) : (i32, i32) -> i32
      return %r : i32
    }
    """
    module = run_pipeline(text, "builtin.module(func.func(remove-dead-values))")
    assert_same_ir(module, text)


def test_an_unregistered_region_op_keeps_every_signature() -> None:
    # mlir-opt 22.1.8 asserts on this input.
    text = """
    func.func private @callee(%used: i32, %dead: i32) -> i32 {
      return %used : i32
    }
    func.func @caller(%x: i32) -> i32 {
      %r = func.call @callee(%x, %x) : (i32, i32) -> i32
      "dummy.op"() ({
      }) : () -> ()
      return %r : i32
    }
    """
    module = run_pipeline(text, "builtin.module(remove-dead-values)")
    assert_same_ir(module, text)


def test_what_an_effect_reads_is_live() -> None:
    text = """
    func.func @f(%m: memref<i32>, %x: i32) {
      %a = arith.addi %x, %x : i32
      %b = arith.muli %x, %x : i32
      memref.store %a, %m[] : memref<i32>
      return
    }
    """
    module = ir.parse_module(text, context())
    analysis = DeadValues(module)
    ops = {ir.operation_name(op).name: op for op in module.walk()}
    assert analysis.is_live(ops["arith.addi"].results[0])
    assert not analysis.is_live(ops["arith.muli"].results[0])


def test_a_symbol_named_other_than_by_a_call_keeps_its_signature() -> None:
    text = """
    func.func private @f(%a: i32) -> i32 {
      %c = arith.constant 0 : i32
      return %c : i32
    }
    func.func @g(%x: i32) {
      %r = func.call @f(%x) : (i32) -> i32
      "t.user"() {uses = [@f]} : () -> ()
      return
    }
    """
    module = run_pipeline(text, "builtin.module(remove-dead-values)")
    assert_same_ir(module, text)


def test_what_other_functions_return_is_live() -> None:
    # An llvm.func is not a func.func: its signature stays, its returns are needs.
    text = """
    llvm.func @f(%a: i64) -> i64 {
      %b = llvm.add %a, %a : i64
      llvm.return %b : i64
    }
    """
    module = run_pipeline(text, "builtin.module(remove-dead-values)")
    assert_same_ir(module, text)


def test_blocks_an_unknown_terminator_reaches_keep_their_arguments() -> None:
    text = """
    func.func @f(%x: i32) -> i32 {
      "t.br"(%x) [^bb1] : (i32) -> ()
    ^bb1(%y: i32):
      %z = arith.addi %y, %y : i32
      cf.br ^bb2(%z : i32)
    ^bb2(%w: i32):
      return %x : i32
    }
    """
    expected = """
    func.func @f(%x: i32) -> i32 {
      "t.br"(%x) [^bb1] : (i32) -> ()
    ^bb1(%y: i32):
      cf.br ^bb2
    ^bb2:
      return %x : i32
    }
    """
    module = run_pipeline(text, "builtin.module(remove-dead-values)")
    assert_same_ir(module, expected)


def test_what_a_reduction_returns_is_live() -> None:
    text = """
    func.func @f(%lb: index, %ub: index, %s: index) -> f32 {
      %init = arith.constant 0.0 : f32
      %r = "scf.parallel"(%lb, %ub, %s, %init) <{operandSegmentSizes = array<i32: 1, 1, 1, 1>}> ({
      ^bb0(%i: index):
        %one = arith.constant 1.0 : f32
        scf.reduce(%one : f32) {
        ^bb1(%a: f32, %b: f32):
          %sum = arith.addf %a, %b : f32
          scf.reduce.return %sum : f32
        }
      }) : (index, index, index, f32) -> f32
      return %r : f32
    }
    """
    module = run_pipeline(text, "builtin.module(remove-dead-values)")
    assert_same_ir(module, text)
