// --run-reproducer on a file written by mlir-opt 22.1.8 itself (Inputs/): the
// pipeline and flags come from its mlir_reproducer resource, and the failure it
// recorded (canonicalize not converging in one iteration) happens again.
// RUN: not passflow-opt %inputs/mlir-opt-reproducer.mlir --run-reproducer --dump-pass-pipeline 2>&1 | filecheck %s
// RUN: not passflow-opt %inputs/mlir-opt-reproducer.mlir --run-reproducer --mlir-print-ir-after-failure 2>&1 | filecheck --check-prefix=FAILED %s
// A pass flag is appended after the reproducer's pipeline, as in mlir-opt.
// RUN: not passflow-opt %inputs/mlir-opt-reproducer.mlir --run-reproducer -symbol-dce --dump-pass-pipeline 2>&1 | filecheck --check-prefix=APPEND %s
// Without --run-reproducer the resource passes through to the output untouched.
// RUN: passflow-opt %inputs/mlir-opt-reproducer.mlir | filecheck --check-prefix=KEEP %s

// CHECK:      Pass Manager with 1 passes:
// CHECK-NEXT: builtin.module(
// CHECK-NEXT:   func.func(
// CHECK-NEXT:     cse,
// CHECK-NEXT:     canonicalize{  max-iterations=1 max-num-rewrites=-1 region-simplify=normal test-convergence=true top-down=true}
// CHECK-NEXT:   )
// CHECK-NEXT: )

// FAILED: // -----// IR Dump After Canonicalizer Failed (canonicalize) //----- //

// APPEND: Pass Manager with 2 passes:
// APPEND:   symbol-dce

// KEEP: func.func @foo
// KEEP: {-#
// KEEP-NEXT:   external_resources: {
// KEEP-NEXT:     mlir_reproducer: {
