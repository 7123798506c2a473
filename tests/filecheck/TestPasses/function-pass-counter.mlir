// test-function-pass counts its invocations in its `counter` statistic.
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-function-pass))' --mlir-pass-statistics --mlir-pass-statistics-display=list -o %t.out 2>&1 | filecheck %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-function-pass))' --mlir-pass-statistics --mlir-disable-threading -o %t.out 2>&1 | filecheck --check-prefix=PIPELINE %s

// CHECK:      TestFunctionPass
// CHECK-NEXT:   (S) 3 counter - Number of invocations

// PIPELINE:      'func.func' Pipeline
// PIPELINE-NEXT:   TestFunctionPass
// PIPELINE-NEXT:     (S) 3 counter - Number of invocations

func.func @a() {
  func.return
}
func.func @b() {
  func.return
}
func.func @c() {
  func.return
}
