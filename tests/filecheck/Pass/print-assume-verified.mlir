// After a failure, invalid IR is dumped in generic form, unless the user says the
// IR may be printed as it is (--mlir-print-assume-verified, or mlir-opt's newer
// --mlir-unsafe-print-assume-verified).
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-pass-create-invalid-ir{emit-invalid-ir=true signal-pass-failure=true}))' -mlir-print-ir-after-failure 2>&1 | filecheck --check-prefix=GENERIC %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-pass-create-invalid-ir{emit-invalid-ir=true signal-pass-failure=true}))' -mlir-print-ir-after-failure -mlir-print-assume-verified 2>&1 | filecheck --check-prefix=CUSTOM %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-pass-create-invalid-ir{emit-invalid-ir=true signal-pass-failure=true}))' -mlir-print-ir-after-failure -mlir-unsafe-print-assume-verified=true 2>&1 | filecheck --check-prefix=CUSTOM %s

// GENERIC: IR Dump After{{.*}}Failed
// GENERIC-NEXT: "func.func"
// CUSTOM: IR Dump After{{.*}}Failed
// CUSTOM-NEXT: func.func @invalid
func.func @invalid() {
  func.return
}
