// test-print-liveness is an InterfacePass on SymbolOpInterface: an unnamed module
// is of a symbol kind but is no symbol, so the pass refuses it before running (no
// liveness is printed); a named module is a symbol.
// RUN: passflow-opt %s -test-print-liveness --split-input-file --verify-diagnostics -o %t.out 2>&1 | filecheck %s

// CHECK-NOT: Testing : {{$}}
// expected-error @below {{trying to schedule pass 'TestLivenessPass' on an unsupported operation}}
module {}

// -----

// CHECK: Testing : named_module
// CHECK-NEXT: // ---- Liveness -----
// CHECK-NEXT: // - Block: 0
module @named_module {}
