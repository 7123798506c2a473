// xDSL's convert-scf-to-cf nests under func.func (it only rewrites the ops inside
// the op it is given), so its control flow can be handed to a function pass: here
// the liveness of the loop it builds. A module-only xDSL pass is still refused.
// RUN: passflow-opt %s -p 'builtin.module(func.func(convert-scf-to-cf),func.func(test-print-liveness))' -o %t.out 2>&1 | filecheck %s
// RUN: filecheck --check-prefix=IR %s < %t.out
// RUN: not passflow-opt %s -p 'builtin.module(func.func(convert-ml-program-to-memref))' 2>&1 | filecheck --check-prefix=REFUSED %s

// The upper bound, the step and %x (used in the body) stay live around the loop;
// the induction variable and the accumulator (^bb1's arguments) leave the header.
// CHECK-LABEL: Testing : sum
// CHECK:       // - Block: 0
// CHECK-NEXT:  // --- LiveIn: {{$}}
// CHECK-NEXT:  // --- LiveOut: arg1@0 arg2@0 arg3@0 {{$}}
// CHECK:       // - Block: 1
// CHECK-NEXT:  // --- LiveIn: arg1@0 arg2@0 arg3@0 {{$}}
// CHECK-NEXT:  // --- LiveOut: arg1@0 arg2@0 arg3@0 arg0@1 arg1@1 {{$}}
// CHECK:       // - Block: 2
// CHECK-NEXT:  // --- LiveIn: arg1@0 arg2@0 arg3@0 arg0@1 arg1@1 {{$}}
// CHECK-NEXT:  // --- LiveOut: arg1@0 arg2@0 arg3@0 {{$}}
// CHECK:       // - Block: 3
// CHECK-NEXT:  // --- LiveIn: arg1@1 {{$}}
// CHECK-NEXT:  // --- LiveOut: {{$}}
// CHECK-NOT:   // - Block:

// IR-NOT:  scf.
// IR:      cf.cond_br

// REFUSED: Can't add pass 'ConvertMlProgramToMemRefPass' restricted to 'builtin.module' on a PassManager intended to run on 'func.func', did you intend to nest?
func.func @sum(%lb: index, %ub: index, %step: index, %x: i32) -> i32 {
  %r = scf.for %i = %lb to %ub step %step iter_args(%acc = %x) -> (i32) {
    %next = arith.addi %acc, %x : i32
    scf.yield %next : i32
  }
  func.return %r : i32
}
