// Passes scheduled directly on a top-level op that is unregistered, not
// IsolatedFromAbove, or not supported by the pass fail with MLIR's messages.
// RUN: not passflow-opt %s --split-input-file --no-implicit-module --allow-unregistered-dialect -pass-pipeline='any(test-module-pass)' 2>&1 | filecheck %s

// CHECK: pipeline-invalid.mlir:[[# @LINE + 1]]:1: error: 'test.foo' op trying to schedule a pass on an unregistered operation
"test.foo"() : () -> ()

// -----

// CHECK: pipeline-invalid.mlir:[[# @LINE + 1]]:6: error: 'arith.constant' op trying to schedule a pass on an operation not marked as 'IsolatedFromAbove'
%c = arith.constant 1 : i32

// -----

// CHECK: pipeline-invalid.mlir:[[# @LINE + 1]]:1: error: 'func.func' op trying to schedule pass 'TestModulePass' on an unsupported operation
func.func @f() {
  func.return
}
