// --verify-diagnostics: the expected-* comments of each chunk are checked; only
// mismatches are printed, and the exit status is the verifier's.
// RUN: passflow-opt %s --split-input-file --verify-diagnostics -p 'builtin.module(func.func(test-pass-failure{gen-diagnostics=true}))' --mlir-disable-threading -o %t.out
// A mismatch in every form:
// RUN: not passflow-opt %S/Inputs/verify-diagnostics-mismatch.mlir --verify-diagnostics -p 'builtin.module(func.func(test-pass-failure{gen-diagnostics=true}))' --mlir-disable-threading -o %t.out 2>&1 | filecheck --check-prefix=MISMATCH %S/Inputs/verify-diagnostics-mismatch.mlir
// only-expected ignores the unexpected, but not the missing:
// RUN: not passflow-opt %S/Inputs/verify-diagnostics-mismatch.mlir --verify-diagnostics=only-expected -p 'builtin.module(func.func(test-pass-failure{gen-diagnostics=true}))' --mlir-disable-threading -o %t.out 2>&1 | filecheck --check-prefix=ONLY %S/Inputs/verify-diagnostics-mismatch.mlir
// RUN: not passflow-opt %s --verify-diagnostics=some 2>&1 | filecheck --check-prefix=BAD %s

// BAD: passflow-opt: for the --verify-diagnostics option: Cannot find option named 'some'!

// expected-error @below {{illegal operation}}
func.func @same_line_below() {
  func.return
}

// -----

func.func @above() { func.return }
// expected-error @above {{illegal operation}}

// -----

// expected-error-re @+2 {{{{ill+egal}} op{{[a-z]+}}}}

func.func @offset() {
  func.return
}

// -----

// Parse errors are diagnostics too.
// expected-error @+1 {{use of undeclared SSA value name}}
func.func @parse_error() { "func.return"(%undefined) : (i32) -> () }
