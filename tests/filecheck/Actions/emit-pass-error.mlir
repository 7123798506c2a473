// -emit-pass-error-on-failure adds `failed to run pass '<Name>'` at the op a pass
// failed on (crashes and verifier failures included), after the pass's own
// diagnostics; the adaptor that ran it says nothing more.
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-pass-failure{gen-diagnostics}))' -emit-pass-error-on-failure --verify-diagnostics -o %t.out
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-pass-failure{gen-diagnostics}))' -emit-pass-error-on-failure 2>&1 | filecheck %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-pass-failure{gen-diagnostics}))' 2>&1 | filecheck --check-prefix=OFF %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-pass-failure))' -emit-pass-error-on-failure=false 2>&1 | filecheck --check-prefix=SILENT --allow-empty %s

// CHECK: emit-pass-error.mlir:[[# @LINE + 11]]:1: error: illegal operation
// CHECK: emit-pass-error.mlir:[[# @LINE + 10]]:1: error: failed to run pass 'TestFailurePass'
// CHECK-NEXT: func.func @f() {
// CHECK-NOT: OpToOpPassAdaptor

// OFF-NOT: failed to run pass

// SILENT-NOT: {{.}}

// expected-error@+2 {{illegal operation}}
// expected-error@+1 {{failed to run pass 'TestFailurePass'}}
func.func @f() {
  func.return
}
