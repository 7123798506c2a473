// The `name` option is the pass's name everywhere MLIR shows one: action logs
// (MLIR's composite-pass.mlir, second RUN line), IR dumps, timing and statistics.
// RUN: passflow-opt %s --log-actions-to=- --composite-fixed-point-pass='name=TestCompositePass pipeline=any(canonicalize,cse)' -split-input-file | filecheck %s
// RUN: passflow-opt %s --composite-fixed-point-pass='name=TestCompositePass pipeline=any(canonicalize,cse)' -split-input-file --mlir-print-ir-after-all --mlir-timing -o /dev/null 2>&1 | filecheck --check-prefix=REPORTS %s

// CHECK-LABEL: running `TestCompositePass`
//       CHECK: running `Canonicalizer`
//       CHECK: running `CSE`
//   CHECK-NOT: running `Canonicalizer`
//   CHECK-NOT: running `CSE`
// REPORTS: IR Dump After TestCompositePass (composite-fixed-point-pass)
// REPORTS: TestCompositePass
// REPORTS-NOT: CompositeFixedPointPass
func.func @test() {
  return
}

// -----

// CHECK-LABEL: running `TestCompositePass`
//       CHECK: running `Canonicalizer`
//       CHECK: running `CSE`
//       CHECK: running `Canonicalizer`
//       CHECK: running `CSE`
//   CHECK-NOT: running `Canonicalizer`
//   CHECK-NOT: running `CSE`
func.func @test() {
  %0 = arith.constant 1.5 : f32
  return
}
