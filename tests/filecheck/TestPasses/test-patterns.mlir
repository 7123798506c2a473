// test-patterns: the test dialect's declarative patterns, applied greedily
// (bottom-up, with folding and dead-code removal) to each function.
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-patterns))' --mlir-print-op-generic -o %t.out
// RUN: filecheck %s < %t.out

// CHECK-LABEL: "func.func"() <{sym_name = "named"
// CHECK-NEXT:  ^bb0(%arg: i32):
// CHECK-NEXT:    %0 = "test.op_b"(%arg) <{attr = 7 : i32}> : (i32) -> i32
// CHECK-NEXT:    %1 = "test.op_b"(%arg) <{attr = 17 : i32}> : (i32) -> i32
// CHECK-NEXT:    "func.return"(%0, %1) : (i32, i32) -> ()
func.func @named(%arg: i32) -> (i32, i32) {
  %0 = "test.op_a"(%arg) {attr = 7 : i32} : (i32) -> i32
  %1 = "test.op_c"(%arg) : (i32) -> i32
  func.return %0, %1 : i32, i32
}

// The higher benefit wins: op_d becomes op_f (benefit 11), not op_e (1); two
// op_g in a row become one op_b 34 (2 matched ops) rather than op_b 20.
// CHECK-LABEL: "func.func"() <{sym_name = "benefit"
// CHECK:         %[[F:.*]] = "test.op_f"(%arg) : (i32) -> i32
// CHECK:         %[[B:.*]] = "test.op_b"(%arg) <{attr = 34 : i32}> : (i32) -> i32
// CHECK:         "func.return"(%[[F]], %[[B]])
func.func @benefit(%arg: i32) -> (i32, i32) {
  %0 = "test.op_d"(%arg) : (i32) -> i32
  %1 = "test.op_g"(%arg) : (i32) -> i32
  %2 = "test.op_g"(%1) : (i32) -> i32
  func.return %0, %2 : i32, i32
}

// Same operand twice: op_n(a, a) is op_o(a); different operands do not match.
// Zero-result and zero-operand ops are rewritten too, and constants fold.
// CHECK-LABEL: "func.func"() <{sym_name = "shapes"
// CHECK-NEXT:  ^bb0(%a: i32, %b: i32):
// CHECK-NEXT:    %{{.*}} = "arith.constant"() <{value = 5 : i32}> : () -> i32
// CHECK-NEXT:    %{{.*}} = "test.op_o"(%a) : (i32) -> i32
// CHECK-NEXT:    %{{.*}} = "test.op_n"(%a, %b) : (i32, i32) -> i32
// CHECK-NEXT:    %{{.*}} = "test.op_k"() : () -> i32
// CHECK-NEXT:    "test.op_i"(%{{.*}}) : (i32) -> ()
func.func @shapes(%a: i32, %b: i32) -> (i32, i32, i32) {
  %0 = "test.op_n"(%a, %a) : (i32, i32) -> i32
  %1 = "test.op_n"(%a, %b) : (i32, i32) -> i32
  %2 = "test.op_j"() : () -> i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %3 = arith.addi %c2, %c3 : i32
  "test.op_h"(%3) : (i32) -> ()
  func.return %0, %1, %2 : i32, i32, i32
}
