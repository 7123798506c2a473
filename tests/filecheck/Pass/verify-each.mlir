// The verifier runs after every pass unless --verify-each=false; its message is
// the only diagnostic of a verification failure.
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-pass-create-invalid-ir))' 2>&1 | filecheck %s
// RUN: passflow-opt %s -pass-pipeline='builtin.module(func.func(test-pass-create-invalid-ir))' --verify-each=false | filecheck --check-prefix=OFF %s
// RUN: passflow-opt %s -pass-pipeline='builtin.module(func.func(test-pass-create-invalid-ir{emit-invalid-ir=false}))' | filecheck --check-prefix=CLEAN %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-pass-create-invalid-ir{signal-pass-failure=true emit-invalid-ir=false}))' 2>&1 | filecheck --allow-empty --check-prefix=FAILED %s

// CHECK: <unknown>:0: error: 'arith.constant' op
// CHECK-NOT: error

// Unverified output that does not verify is printed in generic form, as
// mlir-opt's AsmState does.
// OFF: %0 = "arith.constant"() : () -> i32

// CLEAN: func.func @a()
// CLEAN-NOT: arith.constant

// FAILED-NOT: error
func.func @a() {
  func.return
}
