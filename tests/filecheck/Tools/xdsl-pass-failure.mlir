// An xDSL pass that raises one of xDSL's failure exceptions fails with the
// exception's message at the op it names; it does not crash.
// RUN: not passflow-opt %s -p 'builtin.module(convert-memref-to-ptr)' -o %t.out 2>&1 | filecheck %s
// RUN: passflow-opt %s -p 'builtin.module(convert-memref-to-ptr)' --verify-diagnostics -o %t.out

// CHECK: xdsl-pass-failure.mlir:[[# @LINE + 6]]:8: error: Error while applying pattern: Unsupported layout type affine_map<(d0, d1) -> (d1, d0)>
// CHECK-NEXT: %0 = memref.load %m[%i, %i] : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>
// CHECK-NEXT: {{^       }}^
// CHECK-NOT: crashed
// CHECK-NOT: Traceback
func.func @f(%m: memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>, %i: index) -> f32 {
  %0 = memref.load %m[%i, %i] : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>
  // expected-error @above {{Unsupported layout type}}
  func.return %0 : f32
}
