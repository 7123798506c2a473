// A failing pass fails the run (exit code 1, no output); a failing function does
// not stop its siblings, and every error is reported in program order.
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-pass-failure{gen-diagnostics}))' 2>&1 | filecheck %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(test-pass-failure)' 2>&1 | filecheck --check-prefix=SILENT --allow-empty %s

// CHECK: pass-failure.mlir:[[# @LINE + 6]]:1: error: illegal operation
// CHECK-NEXT: func.func @a() {
// CHECK-NEXT: {{^}}^
// CHECK: pass-failure.mlir:[[# @LINE + 6]]:1: error: illegal operation
// CHECK-NOT: builtin.module

func.func @a() {
  func.return
}
func.func @b() {
  func.return
}

// A failure without a diagnostic is silent, as in mlir-opt.
// SILENT-NOT: {{.}}
