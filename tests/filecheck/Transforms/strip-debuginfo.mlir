// strip-debuginfo forgets every location: the ones written with loc(...) and
// the file positions ops were parsed at, so a later diagnostic says <unknown>:0
// (as mlir-opt 22.1.8 does on this file). Nothing else changes.
// RUN: passflow-opt %s -strip-debuginfo | filecheck %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(strip-debuginfo,func.func(symbol-dce))' 2>&1 | filecheck --check-prefix=STRIPPED %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(strip-debuginfo,symbol-dce))' 2>&1 | filecheck --check-prefix=STRIPPED %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(symbol-dce))' 2>&1 | filecheck --check-prefix=KEPT %s

// CHECK:      func.func @f(%a: i32) -> i32 {
// CHECK-NEXT:   %0 = arith.addi %a, %a : i32
// CHECK-NEXT:   cf.br ^bb1(%0 : i32)
// CHECK-NEXT: ^bb1(%b: i32):
// CHECK-NEXT:   func.return %b : i32

// STRIPPED-NOT: strip-debuginfo.mlir:
// STRIPPED: <unknown>:0: error: 'func.func' op  was scheduled to run under SymbolDCE, but does not define a symbol table
// STRIPPED-NOT: strip-debuginfo.mlir:
// STRIPPED: <unknown>:0: error: 'func.func' op  was scheduled to run under SymbolDCE, but does not define a symbol table
// STRIPPED-NOT: strip-debuginfo.mlir:

// KEPT: strip-debuginfo.mlir:[[# @LINE + 1]]:1: error: 'func.func' op  was scheduled
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  cf.br ^bb1(%0 : i32)
^bb1(%b: i32):
  return %b : i32
}
// KEPT: x.c:7:2: error: 'func.func' op  was scheduled
func.func @g() {
  return
} loc("x.c":7:2)
