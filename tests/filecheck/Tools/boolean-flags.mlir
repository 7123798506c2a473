// Boolean flags take llvm::cl's `=true|false|1|0` (and TRUE/True/FALSE/False);
// a bare boolean never takes the next argument as its value.
// RUN: passflow-opt %s -mlir-disable-threading=1 -verify-each=0 -mlir-pass-statistics=true -p 'builtin.module(func.func(cse))' -o %t.out 2>&1 | filecheck --check-prefix=STATS %s
// RUN: passflow-opt %s --mlir-pass-statistics=false -p 'builtin.module(func.func(cse))' -o %t.out 2>&1 | filecheck --allow-empty --check-prefix=NONE %s
// RUN: passflow-opt --mlir-print-op-generic=True %s | filecheck --check-prefix=GENERIC %s
// RUN: passflow-opt --mlir-print-op-generic=False %s | filecheck --check-prefix=CUSTOM %s
// RUN: not passflow-opt %s --mlir-timing=yes 2>&1 | filecheck --check-prefix=BAD %s

// STATS: Pass statistics report
// NONE-NOT: statistics
// GENERIC: "func.func"()
// CUSTOM: func.func @f()
// BAD: passflow-opt: for the --mlir-timing option: 'yes' is invalid value for boolean argument! Try 0 or 1
func.func @f() {
  func.return
}
