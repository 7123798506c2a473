"""`sccp`: outputs against mlir-opt 22.1.8 on the same input."""

from __future__ import annotations

from transforms_support import assert_same_ir, context, run_pipeline

from passflow import ir
from passflow.registry import lookup_pass
from passflow.transforms import SCCP
from passflow.transforms.constant_propagation import (
    OVERDEFINED,
    ConstantPropagation,
    ConstantValue,
)

CASES = """
func.func @branch(%arg0: i32) -> i32 {
  %cond = arith.constant true
  %one = arith.constant 1 : i32
  cf.cond_br %cond, ^bb1, ^bb2(%arg0 : i32)
^bb1:
  cf.br ^bb2(%one : i32)
^bb2(%x: i32):
  return %x : i32
}
func.func @loop(%lb: index, %ub: index, %step: index) -> i32 {
  %zero = arith.constant 0 : i32
  %r = scf.for %i = %lb to %ub step %step iter_args(%s = %zero) -> (i32) {
    %n = arith.addi %s, %s : i32
    scf.yield %n : i32
  }
  return %r : i32
}
func.func @compare(%c: i1) -> i32 {
  %one = arith.constant 1 : i32
  %twenty = arith.constant 20 : i32
  %lt = arith.cmpi ult, %one, %twenty : i32
  %r = scf.if %lt -> (i32) {
    scf.yield %one : i32
  } else {
    scf.yield %twenty : i32
  }
  return %r : i32
}
func.func private @callee(%a: i32) -> i32 {
  return %a : i32
}
func.func @caller() -> i32 {
  %one = arith.constant 1 : i32
  %r = call @callee(%one) : (i32) -> i32
  return %r : i32
}
func.func private @unreferenced() -> i32 {
  %true = arith.constant true
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = arith.select %true, %c0, %c1 : i32
  return %r : i32
}
"""

# mlir-opt 22.1.8 -sccp on CASES.
EXPECTED = """
module {
  func.func @branch(%arg0: i32) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %true = arith.constant true
    cf.cond_br %true, ^bb1, ^bb2(%arg0 : i32)
  ^bb1:
    cf.br ^bb2(%c1_i32 : i32)
  ^bb2(%0: i32):
    return %c1_i32 : i32
  }
  func.func @loop(%arg0: index, %arg1: index, %arg2: index) -> i32 {
    %c0_i32 = arith.constant 0 : i32
    return %c0_i32 : i32
  }
  func.func @compare(%arg0: i1) -> i32 {
    %true = arith.constant true
    %c20_i32 = arith.constant 20 : i32
    %c1_i32 = arith.constant 1 : i32
    return %c1_i32 : i32
  }
  func.func private @callee(%arg0: i32) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    return %c1_i32 : i32
  }
  func.func @caller() -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %0 = call @callee(%c1_i32) : (i32) -> i32
    return %c1_i32 : i32
  }
  func.func private @unreferenced() -> i32 {
    %true = arith.constant true
    %c0_i32 = arith.constant 0 : i32
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.select %true, %c0_i32, %c1_i32 : i32
    return %0 : i32
  }
}
"""


def test_registered_under_mlirs_name() -> None:
    info = lookup_pass("sccp")
    assert info is not None and info.pass_class is SCCP
    assert SCCP.summary == "Sparse Conditional Constant Propagation"


def test_branches_loops_compares_and_calls_as_mlir() -> None:
    assert_same_ir(run_pipeline(CASES, "builtin.module(sccp)"), EXPECTED)


def test_per_function_run_does_not_look_into_callees() -> None:
    # On func.func, @callee is outside the analysed op: its result is unknown.
    module = run_pipeline(CASES, "builtin.module(func.func(sccp))")
    caller = next(op for op in module.walk() if ir.symbol_name(op) == "caller")
    assert _returned_by(caller) == "func.call"


def test_public_function_arguments_stay_unknown() -> None:
    text = """
    func.func @public(%a: i32) -> i32 {
      return %a : i32
    }
    func.func @user() -> i32 {
      %one = arith.constant 1 : i32
      %r = call @public(%one) : (i32) -> i32
      return %r : i32
    }
    """
    module = ir.parse_module(text, context())
    analysis = ConstantPropagation(module, context())
    public = next(op for op in module.walk() if ir.symbol_name(op) == "public")
    assert analysis.lattice(public.regions[0].block.args[0]) is OVERDEFINED


def test_a_symbol_used_other_than_by_a_call_keeps_unknown_arguments() -> None:
    text = """
    func.func private @f(%a: i32) -> i32 {
      return %a : i32
    }
    func.func @user() -> i32 {
      %one = arith.constant 1 : i32
      %r = call @f(%one) : (i32) -> i32
      return %r : i32
    }
    "live.user"() {uses = [@f]} : () -> ()
    """
    module = ir.parse_module(text, context())
    analysis = ConstantPropagation(module, context())
    f = next(op for op in module.walk() if ir.symbol_name(op) == "f")
    assert analysis.lattice(f.regions[0].block.args[0]) is OVERDEFINED


def test_an_unknown_terminator_makes_call_results_unknown() -> None:
    text = """
    func.func private @f(%a: i32) -> i32 {
      "unknown.return"(%a) : (i32) -> ()
    }
    func.func @user() -> i32 {
      %one = arith.constant 1 : i32
      %r = call @f(%one) : (i32) -> i32
      return %r : i32
    }
    """
    module = run_pipeline(text, "builtin.module(sccp)")
    user = next(op for op in module.walk() if ir.symbol_name(op) == "user")
    assert _returned_by(user) == "func.call"


def test_unknown_branch_makes_successor_arguments_unknown() -> None:
    text = """
    func.func @f() -> i32 {
      %one = arith.constant 1 : i32
      "foo.cond_br"() [^bb1, ^bb2] : () -> ()
    ^bb1:
      cf.br ^bb2(%one : i32)
    ^bb2(%x: i32):
      return %x : i32
    }
    """
    module = ir.parse_module(text, context())
    analysis = ConstantPropagation(module, context())
    blocks = list(next(iter(module.body.block.ops)).regions[0].blocks)
    assert analysis.lattice(blocks[2].args[0]) is OVERDEFINED
    assert blocks[1] in analysis.live_blocks


def test_conflicting_constants_are_overdefined_and_equal_ones_constant() -> None:
    text = """
    func.func @f(%c: i1) -> (i32, i32) {
      %one = arith.constant 1 : i32
      %two = arith.constant 2 : i32
      %a = scf.if %c -> (i32) {
        scf.yield %one : i32
      } else {
        scf.yield %two : i32
      }
      %b = scf.if %c -> (i32) {
        scf.yield %one : i32
      } else {
        scf.yield %one : i32
      }
      return %a, %b : i32, i32
    }
    """
    module = ir.parse_module(text, context())
    analysis = ConstantPropagation(module, context())
    ifs = [op for op in module.walk() if op.name == "scf.if"]
    assert analysis.lattice(ifs[0].results[0]) is OVERDEFINED
    constant = analysis.lattice(ifs[1].results[0])
    assert isinstance(constant, ConstantValue) and constant.dialect == "arith"


def test_ops_with_unknown_regions_give_unknown_results() -> None:
    text = """
    func.func @f() -> i32 {
      %r = "t.region"() ({
      ^bb0(%x: i32):
        %one = arith.constant 1 : i32
        "t.yield"(%one) : (i32) -> ()
      }) : () -> i32
      return %r : i32
    }
    """
    module = run_pipeline(text, "builtin.module(sccp)")
    f = next(op for op in module.walk() if ir.symbol_name(op) == "f")
    assert _returned_by(f) == "t.region"


def _returned_by(function: ir.Operation) -> str | None:
    """The name of the op defining the first value `function` returns."""
    ret = function.regions[0].blocks.last
    last = None if ret is None else ret.last_op
    owner = None if last is None else last.operands[0].owner
    return ir.operation_name(owner).name if isinstance(owner, ir.Operation) else None


def test_cmpi_compares_signed_and_unsigned_as_mlir() -> None:
    text = """
    func.func @f() -> (i1, i1, i1, i1) {
      %m1 = arith.constant -1 : i8
      %one = arith.constant 1 : i8
      %a = arith.cmpi ult, %m1, %one : i8
      %b = arith.cmpi slt, %m1, %one : i8
      %c = arith.cmpi uge, %m1, %one : i8
      %d = arith.cmpi eq, %m1, %m1 : i8
      return %a, %b, %c, %d : i1, i1, i1, i1
    }
    """
    expected = """
    module {
      func.func @f() -> (i1, i1, i1, i1) {
        %true = arith.constant true
        %false = arith.constant false
        %c1_i8 = arith.constant 1 : i8
        %c-1_i8 = arith.constant -1 : i8
        return %false, %true, %true, %true : i1, i1, i1, i1
      }
    }
    """
    assert_same_ir(run_pipeline(text, "builtin.module(sccp)"), expected)
