// The output file is written only when the run succeeded, and atomically; the
// input file is never touched.
// RUN: cp %s %t.in
// RUN: passflow-opt %t.in -pass-pipeline='builtin.module(test-module-pass)' -o %t.ok
// RUN: filecheck --check-prefix=OK %s < %t.ok
// RUN: not passflow-opt %t.in -pass-pipeline='builtin.module(test-pass-failure)' -o %t.bad
// RUN: not test -e %t.bad
// RUN: diff %s %t.in
// RUN: not passflow-opt %t.missing 2>&1 | filecheck --check-prefix=MISSING %s
// RUN: not passflow-opt %t.in --no-such-flag 2>&1 | filecheck --check-prefix=FLAG %s
// /dev/stdout is written in place, not replaced:
// RUN: passflow-opt %t.in -o /dev/stdout | filecheck --check-prefix=OK %s
// A symlink is followed and stays a link:
// RUN: touch %t.target && ln -sfn %t.target %t.link
// RUN: passflow-opt %t.in -o %t.link && test -L %t.link
// RUN: filecheck --check-prefix=OK %s < %t.target
// Input from stdin, output in generic form:
// RUN: passflow-opt --mlir-print-op-generic < %s | filecheck --check-prefix=GENERIC %s

// OK: func.func @keep()
// MISSING: cannot open input file '{{.*}}missing': No such file or directory
// FLAG: passflow-opt: Unknown command line argument '--no-such-flag'.
// GENERIC: "func.func"() <{sym_name = "keep", function_type = () -> ()}> ({
// GENERIC: "func.return"() : () -> ()
func.func @keep() {
  func.return
}
