// control-flow-sink moves effect-free ops used only inside one region of an
// scf.if or scf.index_switch to the front of that region's entry block, a
// whole chain at a time, and not into scf.execute_region or loops (MLIR 22
// bounds neither to one run); -mlir-pass-statistics shows num-sunk as MLIR
// counts it: the ops sunk into the last region op visited. The checks hold for
// mlir-opt 22.1.8's output too.
// RUN: passflow-opt %s -control-flow-sink -mlir-pass-statistics -o %t.out 2> %t.err
// RUN: filecheck %s < %t.out
// RUN: filecheck %s --check-prefix=STATS < %t.err

// STATS:      ControlFlowSink
// STATS-NEXT:   (S) 2 num-sunk - Number of operations sunk

// CHECK-LABEL: func.func @chain
// CHECK-NEXT:    %[[R:.*]] = scf.if
// CHECK-NEXT:      %[[S:.*]] = arith.subi
// CHECK-NEXT:      %[[M:.*]] = arith.muli %[[S]], %[[S]]
// CHECK-NEXT:      scf.yield %[[M]]
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    return %[[R]]
func.func @chain(%c: i1, %a: i32, %b: i32) -> i32 {
  %s = arith.subi %a, %b : i32
  %m = arith.muli %s, %s : i32
  %r = scf.if %c -> (i32) {
    scf.yield %m : i32
  } else {
    scf.yield %a : i32
  }
  return %r : i32
}

// CHECK-LABEL: func.func @kept
// CHECK-NEXT:    arith.addi
// CHECK-NEXT:    arith.muli
// CHECK-NEXT:    scf.execute_region
func.func @kept(%c: i1, %a: i32) -> (i32, i32) {
  %x = arith.addi %a, %a : i32
  %y = arith.muli %a, %a : i32
  %r = scf.execute_region -> (i32) {
    scf.yield %x : i32
  }
  %q = scf.if %c -> (i32) {
    scf.yield %y : i32
  } else {
    scf.yield %y : i32
  }
  return %r, %q : i32, i32
}

// CHECK-LABEL: func.func @switch
// CHECK-NEXT:    scf.index_switch
// CHECK-NEXT:    case 1 {
// CHECK-NEXT:      arith.addi
// CHECK-NEXT:      arith.addi
func.func @switch(%i: index, %a: i32) -> i32 {
  %x = arith.addi %a, %a : i32
  %y = arith.addi %x, %a : i32
  %r = scf.index_switch %i -> i32
  case 1 {
    scf.yield %y : i32
  }
  default {
    scf.yield %a : i32
  }
  return %r : i32
}
