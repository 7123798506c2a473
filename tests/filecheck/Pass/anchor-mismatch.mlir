// A pipeline anchored on another op than the input's top-level op is refused at
// run time, at the location of the top-level op (the implicit module: file:0:0).
// RUN: not passflow-opt %s -pass-pipeline='func.func(test-function-pass)' 2>&1 | filecheck %s
// No statistics report: the pipeline never ran.
// RUN: not passflow-opt %s -pass-pipeline='func.func(test-function-pass)' --mlir-pass-statistics 2>&1 | filecheck --check-prefix=NO-STATS %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(test-interface-pass)' 2>&1 | filecheck --check-prefix=UNSCHEDULABLE %s

// CHECK: anchor-mismatch.mlir:0:0: error: can't run 'func.func' pass manager on 'builtin.module' op

// NO-STATS: error: can't run 'func.func' pass manager
// NO-STATS-NOT: statistics

// UNSCHEDULABLE: <unknown>:0: error: unable to schedule pass 'TestInterfacePass' on a PassManager intended to run on 'builtin.module'!
func.func @f() {
  func.return
}
