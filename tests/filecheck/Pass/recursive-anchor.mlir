// `**func.func(...)` runs on func.func ops at any depth; --pass-pipeline-anchor
// nests the individual pass flags that way. Without it, only direct children.
// RUN: passflow-opt %s -p 'builtin.module(**func.func(test-function-pass))' -mlir-pass-statistics -mlir-pass-statistics-display=list -o %t.out 2>&1 | filecheck --check-prefix=REC %s
// RUN: passflow-opt %s -test-function-pass --pass-pipeline-anchor=func.func -mlir-pass-statistics -mlir-pass-statistics-display=list --dump-pass-pipeline -o %t.out 2>&1 | filecheck --check-prefixes=DUMP,REC %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-function-pass))' -mlir-pass-statistics -mlir-pass-statistics-display=list -o %t.out 2>&1 | filecheck --check-prefix=DIRECT %s
// Each function is visited once, in program order:
// RUN: passflow-opt %s -p 'builtin.module(**func.func(test-function-pass))' --mlir-disable-threading --mlir-print-ir-before=test-function-pass -o %t.out 2>&1 | filecheck --check-prefix=ORDER %s

// DUMP: **func.func(
// DUMP-NEXT: test-function-pass
// REC: TestFunctionPass
// REC-NEXT: (S) 3 counter - Number of invocations
// DIRECT: TestFunctionPass
// DIRECT-NEXT: (S) 1 counter - Number of invocations
// ORDER: IR Dump Before
// ORDER-NEXT: func.func @top
// ORDER: IR Dump Before
// ORDER-NEXT: func.func @deep
// ORDER: IR Dump Before
// ORDER-NEXT: func.func @middle
// ORDER-NOT: IR Dump Before

func.func @top() {
  func.return
}

builtin.module @outer {
  builtin.module @inner {
    func.func @deep() {
      func.return
    }
  }
  func.func @middle() {
    func.return
  }
}
