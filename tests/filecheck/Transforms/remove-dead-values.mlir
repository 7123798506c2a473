// remove-dead-values drops the arguments of private functions nothing live
// reads (and what calls pass them), the results no call needs (from every
// return and call), block arguments nothing live reads (and the branch
// operands feeding them), and effect-free ops none of whose results is
// needed, region ops included. Public signatures stay, and so does every
// signature when the pass root does not hold all the calls. The CHECK lines
// hold for mlir-opt 22.1.8's output too; under a func.func root mlir-opt
// 22.1.8 drops @f's argument anyway and leaves @main's call invalid.
// RUN: passflow-opt %s -split-input-file -remove-dead-values | filecheck %s
// RUN: passflow-opt %s -split-input-file --pass-pipeline='builtin.module(func.func(remove-dead-values))' | filecheck %s --check-prefix=FUNC

// CHECK-LABEL: func.func private @f(%{{.*}}: memref<i32>) -> i32 {
// CHECK-NEXT:    %[[C:.*]] = arith.constant 0 : i32
// CHECK-NEXT:    memref.store %[[C]]
// CHECK-NEXT:    return %[[C]] : i32
// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[R:[^ ]*]] = {{.*}}call @f(%{{.*}}) : (memref<i32>) -> i32
// CHECK-NEXT:    return %[[R]] : i32
// FUNC-LABEL:  func.func private @f(%{{.*}}: i32, %{{.*}}: memref<i32>) -> (i32, i32)
func.func private @f(%dead: i32, %m: memref<i32>) -> (i32, i32) {
  %c0 = arith.constant 0 : i32
  %unused = arith.muli %dead, %dead : i32
  memref.store %c0, %m[] : memref<i32>
  return %c0, %unused : i32, i32
}
func.func @main(%x: i32, %m: memref<i32>) -> i32 {
  %r:2 = func.call @f(%x, %m) : (i32, memref<i32>) -> (i32, i32)
  %d = arith.addi %x, %x : i32
  return %r#0 : i32
}

// -----

// CHECK-LABEL: func.func @branches
// CHECK-NEXT:    cf.cond_br %{{.*}}, ^[[B1:.*]](%{{.*}} : i32), ^
// CHECK-NEXT:  ^[[B1]](%[[P:.*]]: i32):
// CHECK-NEXT:    return %[[P]] : i32
func.func @branches(%c: i1, %x: i32) -> i32 {
  %d = arith.addi %x, %x : i32
  cf.cond_br %c, ^bb1(%x, %d : i32, i32), ^bb2
^bb1(%p: i32, %q: i32):
  return %p : i32
^bb2:
  return %x : i32
}

// -----

// CHECK-LABEL: func.func @region_ops
// CHECK-NOT:     scf.while
// CHECK:         return
func.func @region_ops(%c: i1, %x: i32) -> i32 {
  %w = scf.while (%a = %x) : (i32) -> (i32) {
    scf.condition(%c) %a : i32
  } do {
  ^bb0(%a: i32):
    scf.yield %a : i32
  }
  return %x : i32
}
