// --mlir-generate-reproducer writes the output IR and the pipeline after a
// successful run, with mlir-opt's fixed flags; resources pass through otherwise.
// RUN: passflow-opt %s -pass-pipeline='builtin.module(func.func(test-function-pass))' --mlir-generate-reproducer=%t -o %t.out
// RUN: filecheck %s < %t
// RUN: passflow-opt %t | filecheck --check-prefix=PASSTHROUGH %s

// CHECK: func.func @foo()
// CHECK: pipeline: "builtin.module(func.func(test-function-pass))",
// CHECK-NEXT: disable_threading: false,
// CHECK-NEXT: verify_each: false

// PASSTHROUGH: func.func @foo()
// PASSTHROUGH: {-#
// PASSTHROUGH: pipeline: "builtin.module(func.func(test-function-pass))",
// PASSTHROUGH: #-}
func.func @foo() {
  func.return
}
