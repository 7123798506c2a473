// IR dumps around passes: headers byte-for-byte as mlir-opt 22.1.8 prints them.
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize),symbol-dce)' --mlir-print-ir-before=cse -o %t.out 2>&1 | filecheck --check-prefix=BEFORE %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize),symbol-dce)' --mlir-print-ir-after-all -o %t.out 2>&1 | filecheck --check-prefix=AFTER-ALL %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize),symbol-dce)' --mlir-print-ir-after-all --mlir-print-ir-after-change -o %t.out 2>&1 | filecheck --check-prefix=CHANGE %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse))' --mlir-print-ir-before=cse --mlir-print-ir-module-scope --mlir-disable-threading -o %t.out 2>&1 | filecheck --check-prefix=MODULE %s
// Module scope needs threading disabled, by any of the flags that disable it
// (one rule: no executor, a serial one, or one job).
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse))' --mlir-print-ir-before=cse --mlir-print-ir-module-scope --executor=serial -o %t.out 2>&1 | filecheck --check-prefix=MODULE %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse))' --mlir-print-ir-before=cse --mlir-print-ir-module-scope --jobs=1 -o %t.out 2>&1 | filecheck --check-prefix=MODULE %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(cse))' --mlir-print-ir-before=cse --mlir-print-ir-module-scope --executor=thread --jobs=2 -o %t.out 2>&1 | filecheck --check-prefix=MODULE-THREADS %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-pass-failure))' --mlir-print-ir-after-failure 2>&1 | filecheck --check-prefix=FAILURE %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(cse))' --mlir-print-ir-before=no-such-pass 2>&1 | filecheck --check-prefix=UNKNOWN %s

// BEFORE: // -----// IR Dump Before CSE (cse) //----- //
// BEFORE-NEXT: func.func @foo()
// BEFORE: // -----// IR Dump Before CSE (cse) //----- //
// BEFORE-NEXT: func.func private @bar()
// BEFORE-NOT: IR Dump

// AFTER-ALL: // -----// IR Dump After CSE (cse) //----- //
// AFTER-ALL-NEXT: func.func @foo()
// AFTER-ALL: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// AFTER-ALL: // -----// IR Dump After CSE (cse) //----- //
// AFTER-ALL-NEXT: func.func private @bar()
// AFTER-ALL: // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// AFTER-ALL: // -----// IR Dump After SymbolDCE (symbol-dce) //----- //
// AFTER-ALL-NEXT: builtin.module {

// Only cse changes @foo (the duplicate constant), and symbol-dce removes @bar.
// CHANGE: // -----// IR Dump After CSE (cse) //----- //
// CHANGE-NEXT: func.func @foo()
// CHANGE-NOT: IR Dump After CSE
// CHANGE: // -----// IR Dump After SymbolDCE (symbol-dce) //----- //
// CHANGE-NOT: IR Dump

// MODULE: // -----// IR Dump Before CSE (cse) ('func.func' operation: @foo) //----- //
// MODULE-NEXT: builtin.module {

// MODULE-THREADS: <unknown>:0: error: IR print for module scope can't be setup on a pass-manager without disabling multi-threading first.
// MODULE-THREADS-NOT: IR Dump

// FAILURE: // -----// IR Dump After TestFailurePass Failed (test-pass-failure) //----- //
// FAILURE-NEXT: func.func @foo()

// UNKNOWN: passflow-opt: for the --mlir-print-ir-before option: Cannot find option named 'no-such-pass'!

func.func @foo() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.constant 1 : i32
  %c = arith.addi %a, %b : i32
  func.return %c : i32
}

func.func private @bar() {
  func.return
}
