// --mlir-print-value-users and --mlir-print-unique-ssa-ids print as
// mlir-opt 22.1.8 does (its output, but for `builtin.module`, `func.return`
// and the block's `// 2 preds` comment, which xDSL does not print).
// RUN: passflow-opt %s --split-input-file --mlir-print-value-users | filecheck %s
// RUN: passflow-opt %s --split-input-file --mlir-print-unique-ssa-ids | filecheck --check-prefix=UNIQUE %s
// RUN: passflow-opt %s --split-input-file --mlir-print-unique-ssa-ids --mlir-print-value-users | filecheck --check-prefix=BOTH %s

// CHECK-LABEL: func.func @g(%arg0: i32, %arg1: i1) -> i32 {
// CHECK-NEXT:    // %arg0 is used by %2, %1
// CHECK-NEXT:    // %arg1 is used by %4
// CHECK-NEXT:    %1 = arith.addi %arg0, %arg0 : i32 // users: %4, %2
// CHECK-NEXT:    %2 = arith.addi %1, %arg0 : i32 // users: %4, %3
// CHECK-NEXT:    %3 = arith.addi %2, %2 : i32 // unused
// CHECK-NEXT:    cf.cond_br %arg1, ^bb1(%2 : i32), ^bb1(%1 : i32) // id: %4
// CHECK-NEXT:  ^bb1(%5: i32):
// CHECK-NEXT:    // %5 is used by %6
// CHECK-NEXT:    func.return %5 : i32 // id: %6

// BOTH-LABEL: func.func @g(%arg0: i32, %arg1: i1) -> i32 {
// BOTH-NEXT:    // %arg0 is used by %3, %2
// BOTH-NEXT:    // %arg1 is used by %5
// BOTH-NEXT:    %2 = arith.addi %arg0, %arg0 : i32 // users: %5, %3
// BOTH:         cf.cond_br %arg1, ^bb1(%3 : i32), ^bb1(%2 : i32) // id: %5
// BOTH-NEXT:  ^bb1(%6: i32):
// BOTH-NEXT:    // %6 is used by %7
// BOTH-NEXT:    func.return %6 : i32 // id: %7
func.func @g(%arg0: i32, %arg1: i1) -> i32 {
  %0 = arith.addi %arg0, %arg0 : i32
  %1 = arith.addi %0, %arg0 : i32
  %2 = arith.addi %1, %1 : i32
  cf.cond_br %arg1, ^bb1(%1 : i32), ^bb1(%0 : i32)
^bb1(%3: i32):
  return %3 : i32
}

// -----

// Unique ids: numbers never restart in a function, and mlir-opt numbers the
// last function first. (Entry block arguments keep the names the text gave,
// made unique: mlir-opt renames them %arg0, %arg1, ...)
// UNIQUE-LABEL: func.func @f(
// UNIQUE-NEXT:    %2 = arith.addi
// UNIQUE-LABEL: func.func @h(
// UNIQUE-NEXT:    %0 = arith.addi
// UNIQUE-NEXT:    %1 = arith.addi %0, %0 : i32
func.func @f(%arg0: i32) -> i32 {
  %0 = arith.addi %arg0, %arg0 : i32
  return %0 : i32
}
func.func @h(%arg0: i32) -> i32 {
  %0 = arith.addi %arg0, %arg0 : i32
  %1 = arith.addi %0, %0 : i32
  return %1 : i32
}
