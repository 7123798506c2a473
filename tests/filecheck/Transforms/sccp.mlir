// sccp replaces what it proves constant by constants made at the front of the
// function's entry block, and erases the ops left dead; it follows only the
// control flow that can run (a constant branch condition, a constant scf.if
// condition), joins what reaches a block argument or a region's results, and
// goes through the arguments and results of private functions whose callers
// are all known. `arith.cmpi` folds through xDSL's arith interpreter. The
// checks hold for mlir-opt 22.1.8's output too.
// RUN: passflow-opt %s -allow-unregistered-dialect -split-input-file -sccp -o %t.out
// RUN: filecheck %s < %t.out
// RUN: passflow-opt %s -allow-unregistered-dialect -split-input-file --pass-pipeline='builtin.module(func.func(sccp))' | filecheck %s --check-prefix=FUNC

// CHECK-LABEL: func.func @taken_edge_only
// CHECK-NEXT:    %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT:    %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT:    cf.cond_br %[[TRUE]], ^{{.*}}, ^{{.*}}(%{{.*}} : i32)
// CHECK:         return %[[ONE]] : i32
func.func @taken_edge_only(%arg0: i32) -> i32 {
  %cond = arith.constant true
  %one = arith.constant 1 : i32
  cf.cond_br %cond, ^bb1, ^bb2(%arg0 : i32)
^bb1:
  cf.br ^bb2(%one : i32)
^bb2(%x: i32):
  return %x : i32
}

// CHECK-LABEL: func.func @both_edges
// CHECK:       ^{{.*}}(%[[X:.*]]: i32):
// CHECK-NEXT:    return %[[X]] : i32
func.func @both_edges(%arg0: i32, %c: i1) -> i32 {
  %one = arith.constant 1 : i32
  cf.cond_br %c, ^bb1, ^bb2(%arg0 : i32)
^bb1:
  cf.br ^bb2(%one : i32)
^bb2(%x: i32):
  return %x : i32
}

// CHECK-LABEL: func.func @folded_compare
// CHECK-NOT:     scf.if
// CHECK-NOT:     arith.cmpi
// CHECK:         return %{{.*}} : i32
func.func @folded_compare() -> i32 {
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

// CHECK-LABEL: func.func @loop_carried
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    return %[[ZERO]] : i32
func.func @loop_carried(%lb: index, %ub: index, %step: index) -> i32 {
  %zero = arith.constant 0 : i32
  %r = scf.for %i = %lb to %ub step %step iter_args(%s = %zero) -> (i32) {
    %n = arith.addi %s, %s : i32
    scf.yield %n : i32
  }
  return %r : i32
}

// -----

// CHECK-LABEL: func.func private @callee
// CHECK-NEXT:    %[[C:.*]] = arith.constant 7 : i32
// CHECK-NEXT:    return %[[C]] : i32
// CHECK-LABEL: func.func @caller
// CHECK:         %[[C7:.*]] = arith.constant 7 : i32
// CHECK:         call @callee(%[[C7]])
// CHECK-NEXT:    return %[[C7]] : i32
// FUNC-LABEL:  func.func @caller
// FUNC:          %[[R:[^ ]*]] = {{.*}}call @callee
// FUNC-NEXT:     return %[[R]] : i32
func.func private @callee(%a: i32) -> i32 {
  return %a : i32
}
func.func @caller() -> i32 {
  %seven = arith.constant 7 : i32
  %r = call @callee(%seven) : (i32) -> i32
  return %r : i32
}
