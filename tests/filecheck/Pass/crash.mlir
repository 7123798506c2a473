// A Python exception inside a pass is a crash: reported with the pass and the op,
// the traceback attached as a note, the run fails and nothing is printed.
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-pass-crash))' 2>&1 | filecheck %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-pass-crash))' -o %t.out 2>&1
// RUN: not test -e %t.out

// CHECK: crash.mlir:[[# @LINE + 4]]:1: error: pass 'TestPassCrash' crashed on 'func.func' op: RuntimeError: test-pass-crash: deliberate crash
// CHECK: note: Traceback (most recent call last):
// CHECK: crash.mlir:[[# @LINE + 6]]:1: error: pass 'TestPassCrash' crashed on 'func.func' op
// CHECK-NOT: builtin.module {
func.func @a() {
  func.return
}

func.func @b() {
  func.return
}
