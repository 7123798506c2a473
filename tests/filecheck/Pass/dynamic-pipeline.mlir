// test-dynamic-pipeline runs a pipeline from inside a pass, on the op it runs on or
// on nested ops, filtered by symbol name; scheduling on the parent is refused (the
// pass expects that refusal, so the run itself succeeds, as upstream).
// RUN: passflow-opt %s -pass-pipeline='builtin.module(builtin.module(test-dynamic-pipeline{op-name=inner_mod1 dynamic-pipeline=func.func(test-function-pass)}))' -o %t.out 2>&1 | filecheck --check-prefix=MOD1 %s
// RUN: passflow-opt %s -pass-pipeline='builtin.module(builtin.module(test-dynamic-pipeline{dynamic-pipeline=test-module-pass run-on-nested-operations=1}))' -o %t.out 2>&1 | filecheck --check-prefix=NESTED %s
// RUN: passflow-opt %s -pass-pipeline='builtin.module(builtin.module(test-dynamic-pipeline{op-name=inner_mod1 run-on-parent=1 dynamic-pipeline=test-module-pass}))' 2>&1 | filecheck --check-prefix=PARENT %s

// MOD1: Dynamic execute 'func.func(test-function-pass)' on builtin.module
// MOD1-NEXT: Dynamic execute 'func.func(test-function-pass)' on builtin.module
// MOD1-NEXT: dynamic-pipeline skip op name: inner_mod2

// NESTED: Dynamic execute 'test-module-pass' on builtin.module
// NESTED-NEXT: Run on nested op
// NESTED-NEXT: Run on builtin.module @foo {

// PARENT: dynamic-pipeline.mlir:0:0: error: 'builtin.module' op Trying to schedule a dynamic pipeline on an operation that isn't nested under the current operation the pass is processing

module @inner_mod1 {
  module @foo {}
  func.func @bar() {
    func.return
  }
}

module @inner_mod2 {
  func.func @baz() {
    func.return
  }
}
