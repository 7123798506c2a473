// A dynamic pipeline may only run on the op its pass is running on or ops nested
// in it: asked to run on the parent, it fails (and test-dynamic-pipeline, which
// expects that, does not). An unparsable dynamic pipeline is reported and skipped.
// RUN: passflow-opt %s -p 'builtin.module(builtin.module(test-dynamic-pipeline{op-name=inner_mod1 run-on-parent=1 dynamic-pipeline=func.func(test-patterns)}))' --verify-diagnostics -o %t.out
// RUN: passflow-opt %s -p 'builtin.module(builtin.module(test-dynamic-pipeline{dynamic-pipeline=no-such-pass}))' -o %t.out 2>&1 | filecheck %s

// CHECK: Dynamic execute 'no-such-pass' on builtin.module
// CHECK-NEXT: MLIR Textual PassPipeline Parser:1:1: error: 'no-such-pass' does not refer to a registered pass or pass pipeline
// CHECK-NEXT: no-such-pass
// CHECK-NEXT: ^

// expected-error @below {{'builtin.module' op Trying to schedule a dynamic pipeline on an operation that isn't nested under the current operation}}
module {
  module @inner_mod1 {
    "test.symbol"() {sym_name = "foo"} : () -> ()
    func.func private @bar()
  }
}
