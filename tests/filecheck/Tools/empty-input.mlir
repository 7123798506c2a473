// Input with no operation (empty, or only comments) is an empty module.
// RUN: passflow-opt %s | filecheck %s
// RUN: passflow-opt < /dev/null | filecheck %s
// RUN: passflow-opt %s -p 'builtin.module(canonicalize)' --mlir-disable-threading | filecheck %s

// CHECK: builtin.module {
// CHECK-NEXT: }
