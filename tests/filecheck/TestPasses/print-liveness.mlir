// test-print-liveness: MLIR's Liveness::print for every symbol op, on stderr:
// live-in/live-out sets per block (pre-order block numbering, `val_N` results,
// `argN@B` block arguments), each result's live range, and the values live at
// each op (MLIR ends that list with a literal backspace before `]`).
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-print-liveness))' --split-input-file -o %t.out 2>&1 | filecheck %s

// CHECK-LABEL: Testing : branch
// CHECK-NEXT:  // ---- Liveness -----
// CHECK-NEXT:  // - Block: 0
// CHECK-NEXT:  // --- LiveIn: {{$}}
// CHECK-NEXT:  // --- LiveOut: val_2 {{$}}
// CHECK-NEXT:  // --- BeginLivenessIntervals
// CHECK-NEXT:  // val_2 :
// CHECK-NEXT:  //     %x = arith.addi %a, %a : i32
// CHECK-NEXT:  //     cf.cond_br %c, ^bb1, ^bb2(%a : i32)
// CHECK-NEXT:  //     func.return %x : i32
// CHECK-NEXT:  // --- EndLivenessIntervals
// CHECK-NEXT:  // --- BeginCurrentlyLive
// CHECK-NEXT:  //     %x = arith.addi %a, %a : i32 [arg0@0 arg1@0 val_2 {{.}}]
// CHECK-NEXT:  //     cf.cond_br %c, ^bb1, ^bb2(%a : i32) [arg0@0 arg1@0 val_2 {{.}}]
// CHECK-NEXT:  // --- EndCurrentlyLive
// CHECK-NEXT:  // - Block: 1
// CHECK-NEXT:  // --- LiveIn: val_2 {{$}}
// CHECK-NEXT:  // --- LiveOut: {{$}}
// CHECK-NEXT:  // --- BeginLivenessIntervals
// CHECK-NEXT:  // --- EndLivenessIntervals
// CHECK-NEXT:  // --- BeginCurrentlyLive
// CHECK-NEXT:  //     func.return %x : i32 [val_2 {{.}}]
// CHECK-NEXT:  // --- EndCurrentlyLive
// CHECK-NEXT:  // - Block: 2
// CHECK-NEXT:  // --- LiveIn: {{$}}
// CHECK-NEXT:  // --- LiveOut: {{$}}
// CHECK-NEXT:  // --- BeginLivenessIntervals
// CHECK-NEXT:  // --- EndLivenessIntervals
// CHECK-NEXT:  // --- BeginCurrentlyLive
// CHECK-NEXT:  //     func.return %y : i32 [arg0@2 {{.}}]
// CHECK-NEXT:  // --- EndCurrentlyLive
// CHECK-NEXT:  // -------------------
func.func @branch(%a: i32, %c: i1) -> i32 {
  %x = arith.addi %a, %a : i32
  cf.cond_br %c, ^bb1, ^bb2(%a : i32)
^bb1:
  func.return %x : i32
^bb2(%y: i32):
  func.return %y : i32
}

// -----

// A value used inside a loop body is live into the body's block and live across
// the loop op, which is printed whole; the body's unused induction variable is
// live at its first op only.
// CHECK-LABEL: Testing : nested
// CHECK:       // - Block: 0
// CHECK-NEXT:  // --- LiveIn: {{$}}
// CHECK-NEXT:  // --- LiveOut: {{$}}
// CHECK-NEXT:  // --- BeginLivenessIntervals
// CHECK-NEXT:  // val_4 :
// CHECK-NEXT:  //     %x = arith.addi %a, %a : i32
// CHECK-NEXT:  //     scf.for %iv = %lb to %ub step %lb {
// CHECK-NEXT:    %y = arith.addi %x, %a : i32
// CHECK-NEXT:    memref.store %y, %buf[] : memref<i32>
// CHECK-NEXT:  }
// CHECK-NEXT:  //     %y = arith.addi %x, %a : i32
// CHECK-NEXT:  // --- EndLivenessIntervals
// CHECK:       // - Block: 1
// CHECK-NEXT:  // --- LiveIn: arg2@0 arg3@0 val_4 {{$}}
// CHECK-NEXT:  // --- LiveOut: {{$}}
// CHECK:       // --- BeginCurrentlyLive
// CHECK-NEXT:  //     %y = arith.addi %x, %a : i32 [arg2@0 arg3@0 val_4 arg0@1 val_6 {{.}}]
// CHECK-NEXT:  //     memref.store %y, %buf[] : memref<i32> [arg3@0 val_6 {{.}}]
// CHECK-NEXT:  // --- EndCurrentlyLive
// CHECK-NEXT:  // -------------------
func.func @nested(%lb: index, %ub: index, %a: i32, %buf: memref<i32>) {
  %x = arith.addi %a, %a : i32
  scf.for %iv = %lb to %ub step %lb {
    %y = arith.addi %x, %a : i32
    memref.store %y, %buf[] : memref<i32>
  }
  func.return
}
