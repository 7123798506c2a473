// --dump-pass-pipeline prints the pipeline as built (before adaptors merge); pass
// flags nest implicitly, one fresh nested pipeline per op-specific flag.
// RUN: passflow-opt %s -pass-pipeline='builtin.module(func.func(test-function-pass),func.func(test-function-pass),test-module-pass)' --dump-pass-pipeline -o %t.out 2>&1 | filecheck --check-prefix=TEXT %s
// RUN: passflow-opt %s -test-function-pass --test-module-pass -test-function-pass --dump-pass-pipeline -o %t.out 2>&1 | filecheck --check-prefix=FLAGS %s
// RUN: passflow-opt %s -pass-pipeline='builtin.module()' --dump-pass-pipeline -o %t.out 2>&1 | filecheck --check-prefix=EMPTY %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(test-module-pass)' -test-module-pass 2>&1 | filecheck --check-prefix=BOTH %s

// TEXT: Pass Manager with 3 passes:
// TEXT-NEXT: builtin.module(
// TEXT-NEXT:   func.func(
// TEXT-NEXT:     test-function-pass
// TEXT-NEXT:   ),
// TEXT-NEXT:   func.func(
// TEXT-NEXT:     test-function-pass
// TEXT-NEXT:   ),
// TEXT-NEXT:   test-module-pass
// TEXT-NEXT: )
// TEXT-EMPTY:
// TEXT-EMPTY:

// FLAGS: Pass Manager with 3 passes:
// FLAGS-NEXT: builtin.module(
// FLAGS-NEXT:   func.func(
// FLAGS-NEXT:     test-function-pass
// FLAGS-NEXT:   ),
// FLAGS-NEXT:   test-module-pass,
// FLAGS-NEXT:   func.func(
// FLAGS-NEXT:     test-function-pass
// FLAGS-NEXT:   )
// FLAGS-NEXT: )

// EMPTY: Pass Manager with 0 passes:
// EMPTY-NEXT: builtin.module(
// EMPTY-EMPTY:
// EMPTY-NEXT: )

// BOTH: <unknown>:0: error: '-pass-pipeline' option can't be used with individual pass options

func.func @foo() {
  func.return
}
