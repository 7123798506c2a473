// Pass options in pipeline text and pass flags: MLIR's syntax, printing (sorted,
// every scalar, lists only when set) and error messages.
// RUN: passflow-opt %s -p 'builtin.module(func.func(canonicalize{top-down=false max-iterations=3 disable-patterns=A,B}),inline{default-pipeline={cse }},symbol-privatize{exclude=foo,bar})' --dump-pass-pipeline -o %t.out 2>&1 | filecheck --check-prefix=DUMP %s
// RUN: passflow-opt %s -p 'builtin.module(symbol-privatize{exclude=},print-op-stats)' --dump-pass-pipeline -o %t.out 2>/dev/null
// RUN: passflow-opt %s -p 'builtin.module(symbol-privatize{exclude=})' --dump-pass-pipeline -o %t.out 2>&1 | filecheck --check-prefix=EMPTY-LIST %s
// RUN: passflow-opt %s --canonicalize='top-down=false' -cse --dump-pass-pipeline -o %t.out 2>&1 | filecheck --check-prefix=FLAGS %s
// RUN: not passflow-opt %s -p 'builtin.module(cse{x=1})' 2>&1 | filecheck --check-prefix=NO-OPTION %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(canonicalize{max-iterations=abc}))' 2>&1 | filecheck --check-prefix=BAD-INT %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(canonicalize{top-down=maybe}))' 2>&1 | filecheck --check-prefix=BAD-BOOL %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(canonicalize{region-simplify=bogus}))' 2>&1 | filecheck --check-prefix=BAD-ENUM %s
// RUN: not passflow-opt %s --canonicalize=bogus=1 2>&1 | filecheck --check-prefix=FLAG-OPTION %s

// DUMP:      Pass Manager with 3 passes:
// DUMP-NEXT: builtin.module(
// DUMP-NEXT:   func.func(
// DUMP-NEXT:     canonicalize{disable-patterns={A,B}  max-iterations=3 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=false}
// DUMP-NEXT:   ),
// DUMP-NEXT:   inline{default-pipeline=cse inlining-threshold=4294967295 max-iterations=4 },
// DUMP-NEXT:   symbol-privatize{exclude={foo,bar}}
// DUMP-NEXT: )

// EMPTY-LIST: symbol-privatize{exclude={}}

// FLAGS:      builtin.module(
// FLAGS-NEXT:   canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=false},
// FLAGS-NEXT:   cse
// FLAGS-NEXT: )

// NO-OPTION:      <unknown>:0: error: <Pass-Options-Parser>: no such option x
// NO-OPTION-EMPTY:
// NO-OPTION-NEXT: failed to add `cse` with options `x=1`

// BAD-INT:      passflow-opt: for the --max-iterations option: 'abc' value invalid for long argument!
// BAD-INT-NEXT: <unknown>:0: error: {{$}}
// BAD-INT-NEXT: failed to add `canonicalize` with options `max-iterations=abc`
// BAD-INT-NEXT: failed to add `func.func` with options `` to inner pipeline

// BAD-BOOL: passflow-opt: for the --top-down option: 'maybe' is invalid value for boolean argument! Try 0 or 1

// BAD-ENUM: passflow-opt: for the --region-simplify option: Cannot find option named 'bogus'!

// FLAG-OPTION:      <unknown>:0: error: <Pass-Options-Parser>: no such option bogus
// FLAG-OPTION-EMPTY:
// FLAG-OPTION-NOT: failed to add

func.func @foo() {
  func.return
}
