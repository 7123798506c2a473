// passflow-xdsl-opt prints what xdsl-opt prints, byte for byte, flag for flag:
// output, chunks, IR between passes, xDSL's verifier and pass failures under
// --verify-diagnostics, parse errors under --parsing-diagnostics.
// RUN: xdsl-opt %s --split-input-file -p 'cse,arith-add-fastmath{flags=nnan,nsz},canonicalize' --print-between-passes --verify-diagnostics --parsing-diagnostics > %t.xdsl
// RUN: passflow-xdsl-opt %s --split-input-file -p 'cse,arith-add-fastmath{flags=nnan,nsz},canonicalize' --print-between-passes --verify-diagnostics --parsing-diagnostics > %t.passflow
// RUN: diff %t.xdsl %t.passflow
// RUN: xdsl-opt %s --split-input-file -p convert-memref-to-ptr,dce --print-op-generic --print-debuginfo --verify-diagnostics --parsing-diagnostics > %t.xdsl
// RUN: passflow-xdsl-opt %s --split-input-file -p convert-memref-to-ptr,dce --print-op-generic --print-debuginfo --verify-diagnostics --parsing-diagnostics > %t.passflow
// RUN: diff %t.xdsl %t.passflow
// RUN: xdsl-opt %s --split-input-file --no-implicit-module --allow-unregistered-dialect -p licm --verify-diagnostics --parsing-diagnostics -o %t.xdsl
// RUN: passflow-xdsl-opt %s --split-input-file --no-implicit-module --allow-unregistered-dialect -p licm --verify-diagnostics --parsing-diagnostics -o %t.passflow
// RUN: diff %t.xdsl %t.passflow
// RUN: passflow-xdsl-opt %s --split-input-file -p convert-memref-to-ptr --verify-diagnostics --parsing-diagnostics | filecheck %s

// CHECK: func.func @twice
// CHECK: {{^}}// {{-+$}}
// CHECK-NEXT: Unsupported layout type affine_map<(d0, d1) -> (d1, d0)>
// CHECK: | Error while applying pattern: Unsupported layout type
// CHECK: {{^}}// {{-+$}}
// CHECK-NEXT: result 'result' at position 0 does not verify:
// CHECK: Operation test.unknown is not registered
// CHECK: values used but not defined: [%b]

func.func @twice(%a: f32) -> f32 {
  %0 = arith.addf %a, %a : f32
  %1 = arith.addf %a, %a : f32
  %2 = arith.mulf %0, %1 : f32
  func.return %2 : f32
}

// -----

func.func @layout(%m: memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>, %i: index) -> f32 {
  %0 = memref.load %m[%i, %i] : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>
  func.return %0 : f32
}

// -----

func.func @mistyped(%a: i32) -> i32 {
  %0 = "arith.addi"(%a, %a) : (i32, i32) -> i64
  func.return %a : i32
}

// -----

"test.op"() ({
  %0 = "test.unknown"() : () -> i32
}) : () -> ()

// -----

func.func @unparsable(%a: i32) -> i32 {
  %0 = arith.addi %a, %b : i32
  func.return %0 : i32
}
