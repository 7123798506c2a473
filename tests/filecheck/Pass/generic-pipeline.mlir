// An `any` pipeline runs on every IsolatedFromAbove child, and only where each of
// its passes can run; an interface pass runs only on ops with the interface.
// RUN: passflow-opt %s -pass-pipeline='builtin.module(any(test-interface-pass))' -o %t.out 2>&1 | filecheck %s
// RUN: passflow-opt %s -pass-pipeline='builtin.module(any(test-stats-pass,test-interface-pass))' -o %t.out 2>&1 | filecheck --check-prefix=MIXED %s
// RUN: passflow-opt %s -pass-pipeline='builtin.module(func.func(test-interface-pass))' -o %t.out 2>&1 | filecheck --check-prefix=NESTED %s

// CHECK: generic-pipeline.mlir:[[# @LINE + 5]]:1: remark: Executing interface pass on operation
// CHECK-NOT: remark
// MIXED: generic-pipeline.mlir:[[# @LINE + 3]]:1: remark: Executing interface pass on operation
// NESTED: generic-pipeline.mlir:[[# @LINE + 2]]:1: remark: Executing interface pass on operation
// NESTED-NOT: remark
func.func @f() {
  func.return
}
module @named {
}
