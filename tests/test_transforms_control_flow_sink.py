"""`control-flow-sink`: output and statistic against mlir-opt 22.1.8."""

from __future__ import annotations

from transforms_support import assert_same_ir, run_passes, run_pipeline

from passflow import ir
from passflow.registry import lookup_pass
from passflow.statistics import statistic_values
from passflow.transforms import ControlFlowSink

# Sinking into scf.if (both regions, a constant condition, nested ifs, a chain of
# ops, a division that may trap but has no memory effect) and scf.index_switch;
# nothing goes into scf.execute_region or scf.for, whose regions MLIR 22 does not
# bound to one execution, nor an op whose result is also used outside.
CASES = """func.func @simple(%c: i1, %a: i32, %b: i32) -> (i32, i32) {
  %0 = arith.subi %a, %b : i32
  %1 = arith.subi %b, %a : i32
  %2 = arith.addi %a, %a : i32
  %r = scf.if %c -> (i32) {
    scf.yield %0 : i32
  } else {
    %5 = arith.addi %1, %2 : i32
    scf.yield %5 : i32
  }
  %r2 = scf.if %c -> (i32) {
    scf.yield %1 : i32
  } else {
    scf.yield %a : i32
  }
  return %r, %r2 : i32, i32
}
func.func @switch(%i: index, %a: i32) -> (i32) {
  %0 = arith.addi %a, %a : i32
  %r = scf.index_switch %i -> i32
  case 2 {
    scf.yield %0 : i32
  }
  default {
    scf.yield %a : i32
  }
  return %r : i32
}
func.func @exec(%a: i32) -> (i32) {
  %0 = arith.addi %a, %a : i32
  %r = scf.execute_region -> (i32) {
    scf.yield %0 : i32
  }
  return %r : i32
}
func.func @loop(%lb: index, %a: i32) -> (i32) {
  %0 = arith.addi %a, %a : i32
  %r = scf.for %i = %lb to %lb step %lb iter_args(%x = %a) -> (i32) {
    %y = arith.addi %x, %0 : i32
    scf.yield %y : i32
  }
  return %r : i32
}
func.func @nested(%c: i1, %a: i32) -> (i32) {
  %0 = arith.addi %a, %a : i32
  %r = scf.if %c -> (i32) {
    %r2 = scf.if %c -> (i32) {
      scf.yield %0 : i32
    } else {
      scf.yield %a : i32
    }
    scf.yield %r2 : i32
  } else {
    scf.yield %a : i32
  }
  return %r : i32
}
func.func @constcond(%a: i32) -> (i32) {
  %c = arith.constant true
  %0 = arith.addi %a, %a : i32
  %r = scf.if %c -> (i32) {
    scf.yield %0 : i32
  } else {
    scf.yield %a : i32
  }
  return %r : i32
}
func.func @load(%c: i1, %m: memref<i32>) -> (i32) {
  %0 = memref.load %m[] : memref<i32>
  %d = arith.divsi %0, %0 : i32
  %r = scf.if %c -> (i32) {
    scf.yield %d : i32
  } else {
    %z = arith.constant 0 : i32
    scf.yield %z : i32
  }
  return %r : i32
}
"""

# mlir-opt 22.1.8 -control-flow-sink on CASES.
EXPECTED = """module {
  func.func @simple(%arg0: i1, %arg1: i32, %arg2: i32) -> (i32, i32) {
    %0 = arith.subi %arg2, %arg1 : i32
    %1 = scf.if %arg0 -> (i32) {
      %3 = arith.subi %arg1, %arg2 : i32
      scf.yield %3 : i32
    } else {
      %3 = arith.addi %arg1, %arg1 : i32
      %4 = arith.addi %0, %3 : i32
      scf.yield %4 : i32
    }
    %2 = scf.if %arg0 -> (i32) {
      scf.yield %0 : i32
    } else {
      scf.yield %arg1 : i32
    }
    return %1, %2 : i32, i32
  }
  func.func @switch(%arg0: index, %arg1: i32) -> i32 {
    %0 = scf.index_switch %arg0 -> i32
    case 2 {
      %1 = arith.addi %arg1, %arg1 : i32
      scf.yield %1 : i32
    }
    default {
      scf.yield %arg1 : i32
    }
    return %0 : i32
  }
  func.func @exec(%arg0: i32) -> i32 {
    %0 = arith.addi %arg0, %arg0 : i32
    %1 = scf.execute_region -> i32 {
      scf.yield %0 : i32
    }
    return %1 : i32
  }
  func.func @loop(%arg0: index, %arg1: i32) -> i32 {
    %0 = arith.addi %arg1, %arg1 : i32
    %1 = scf.for %arg2 = %arg0 to %arg0 step %arg0 iter_args(%arg3 = %arg1) -> (i32) {
      %2 = arith.addi %arg3, %0 : i32
      scf.yield %2 : i32
    }
    return %1 : i32
  }
  func.func @nested(%arg0: i1, %arg1: i32) -> i32 {
    %0 = scf.if %arg0 -> (i32) {
      %1 = scf.if %arg0 -> (i32) {
        %2 = arith.addi %arg1, %arg1 : i32
        scf.yield %2 : i32
      } else {
        scf.yield %arg1 : i32
      }
      scf.yield %1 : i32
    } else {
      scf.yield %arg1 : i32
    }
    return %0 : i32
  }
  func.func @constcond(%arg0: i32) -> i32 {
    %true = arith.constant true
    %0 = scf.if %true -> (i32) {
      %1 = arith.addi %arg0, %arg0 : i32
      scf.yield %1 : i32
    } else {
      scf.yield %arg0 : i32
    }
    return %0 : i32
  }
  func.func @load(%arg0: i1, %arg1: memref<i32>) -> i32 {
    %0 = memref.load %arg1[] : memref<i32>
    %1 = scf.if %arg0 -> (i32) {
      %2 = arith.divsi %0, %0 : i32
      scf.yield %2 : i32
    } else {
      %c0_i32 = arith.constant 0 : i32
      scf.yield %c0_i32 : i32
    }
    return %1 : i32
  }
}

"""


def test_registered_under_mlirs_name() -> None:
    info = lookup_pass("control-flow-sink")
    assert info is not None and info.pass_class is ControlFlowSink
    assert ControlFlowSink.summary == "Sink operations into conditional blocks"


def test_sinks_as_mlir() -> None:
    assert_same_ir(run_pipeline(CASES, "builtin.module(control-flow-sink)"), EXPECTED)


def test_num_sunk_counts_the_last_region_op_as_mlir() -> None:
    # mlir-opt 22.1.8 reports 1: the ops sunk into the last scf.if (@load's).
    pass_ = ControlFlowSink()
    assert_same_ir(run_passes(CASES, pass_, nest=None), EXPECTED)
    assert [(s.name, v) for s, v in statistic_values(pass_)] == [("num-sunk", 1)]


def test_an_op_also_used_after_the_if_stays() -> None:
    text = """
    func.func @f(%c: i1, %a: i32) -> i32 {
      %0 = arith.addi %a, %a : i32
      %r = scf.if %c -> (i32) {
        scf.yield %0 : i32
      } else {
        scf.yield %a : i32
      }
      "t.use"(%0) : (i32) -> ()
      return %r : i32
    }
    """
    module = run_pipeline(text, "builtin.module(control-flow-sink)")
    f = next(iter(module.body.block.ops))
    assert ir.operation_name(next(iter(f.regions[0].block.ops))).name == "arith.addi"
