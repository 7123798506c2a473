// --mlir-generate-reproducer writes the output IR and the pipeline after a
// successful run, with mlir-opt's fixed flags; resources pass through otherwise.
// RUN: passflow-opt %s -pass-pipeline='builtin.module(func.func(test-function-pass))' --mlir-generate-reproducer=%t -o %t.out
// RUN: filecheck %s < %t
// RUN: passflow-opt %t | filecheck --check-prefix=PASSTHROUGH %s
// The pipeline is the pass manager's text, anchor included (mlir-opt 22's
// `printAsTextualPipeline`): `any` stays `any`, passes are joined by ','.
// RUN: passflow-opt %s -pass-pipeline='any(cse, symbol-dce)' --mlir-generate-reproducer=%t.any -o %t.out
// RUN: filecheck --check-prefix=ANY %s < %t.any

// CHECK: func.func @foo()
// CHECK: pipeline: "builtin.module(func.func(test-function-pass))",
// CHECK-NEXT: disable_threading: false,
// CHECK-NEXT: verify_each: false

// ANY: pipeline: "any(cse,symbol-dce)",

// PASSTHROUGH: func.func @foo()
// PASSTHROUGH: {-#
// PASSTHROUGH: pipeline: "builtin.module(func.func(test-function-pass))",
// PASSTHROUGH: #-}
func.func @foo() {
  func.return
}
