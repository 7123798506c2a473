// MLIR's test dialect allows unknown operations: `"test.op"` parses without
// --allow-unregistered-dialect, as an unregistered op (so passes refuse to be
// scheduled on it), while `test.symbol` is a registered symbol whose `sym_name`
// is a property. Other dialects still refuse unknown ops.
// RUN: passflow-opt %s -o %t.out
// RUN: filecheck %s < %t.out
// RUN: passflow-opt %s --no-implicit-module --split-input-file --verify-diagnostics -p 'any(test-stats-pass)' -o %t.out
// RUN: not passflow-opt %S/Inputs/unknown-arith-op.mlir 2>&1 | filecheck --check-prefix=ARITH %s

// CHECK:      "test.op"() : () -> ()
// CHECK:      "test.symbol"() <{sym_name = "foo"}> : () -> ()

// expected-error @below {{trying to schedule a pass on an unregistered operation}}
"test.op"() : () -> ()

// -----

module {
  "test.symbol"() {sym_name = "foo"} : () -> ()
}

// ARITH: unregistered operation 'arith.nonsense' found in dialect ('arith') that does not allow unknown operations
