// --log-mlir-actions-filter keeps the actions on ops at `file[:line[:col]]`
// (comma separated, the flag repeatable). The implicit module is at line 0.
// RUN: passflow-opt %s --log-mlir-actions-filter=%s --log-actions-to=- -p 'builtin.module(func.func(cse))' -o %t.out | filecheck --check-prefix=ALL %s
// RUN: passflow-opt %s --log-mlir-actions-filter=%s:39 --log-actions-to=- -p 'builtin.module(func.func(cse))' -o %t.out | filecheck --check-prefix=SECOND %s
// RUN: passflow-opt %s --log-mlir-actions-filter=%s:35:1 --log-mlir-actions-filter=%s:43 --log-actions-to=- -p 'builtin.module(func.func(cse))' -o %t.out | filecheck --check-prefix=ODD %s
// RUN: passflow-opt %s --log-mlir-actions-filter=%s:0 --log-actions-to=- -p 'builtin.module(func.func(cse))' -o %t.out | filecheck --check-prefix=MODULE %s
// RUN: passflow-opt %s --log-mlir-actions-filter=%s:35:2,foo.mlir --log-actions-to=- -p 'builtin.module(func.func(cse))' -o %t.out | filecheck --check-prefix=NONE --allow-empty %s
// RUN: not passflow-opt %s --log-mlir-actions-filter=%s, --log-actions-to=- -cse -o %t.out 2>&1 | filecheck --check-prefix=EMPTY %s

// ALL: running `mlir::detail::OpToOpPassAdaptor` on Operation `builtin.module` (module {...})`
// ALL-NEXT: running `CSE` on Operation `func.func` (func.func @a() {...})`
// ALL: running `CSE` on Operation `func.func` (func.func @b() {...})`
// ALL: running `CSE` on Operation `func.func` (func.func @c() {...})`

// SECOND-NOT: @a
// SECOND: begins (no breakpoint) Action `pass-execution` running `CSE` on Operation `func.func` (func.func @b() {...})`
// SECOND-NEXT: completed `pass-execution`
// SECOND-NOT: Action

// ODD: (func.func @a() {...})`
// ODD-NEXT: completed
// ODD-NEXT: (func.func @c() {...})`
// ODD-NEXT: completed
// ODD-NOT: Action

// MODULE: OpToOpPassAdaptor
// MODULE-NEXT: completed `pass-execution`
// MODULE-NOT: Action

// NONE-NOT: Action

// EMPTY: error: initializing FileLineColLocBreakpoint with empty file name
// EMPTY-NEXT: Invalid location filter: {{$}}

func.func @a() {
  func.return
}

func.func @b() {
  func.return
}

func.func @c() {
  func.return
}
