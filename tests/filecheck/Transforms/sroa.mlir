// sroa splits a memref.alloca of a small static shape whose every access has
// constant in-bounds indices into one slot per element used, in mlir-opt
// 22.1.8's order; mem2reg then promotes the new slots.
// RUN: passflow-opt %s --sroa | filecheck %s
// RUN: passflow-opt %s --sroa --mlir-pass-statistics -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS
// RUN: passflow-opt %s --sroa --mem2reg | filecheck %s --check-prefix=PROMOTED

// CHECK-LABEL: func.func @pair
// CHECK:      %[[A0:.*]] = memref.alloca() : memref<i32>
// CHECK-NEXT: %[[A1:.*]] = memref.alloca() : memref<i32>
// CHECK-NEXT: memref.store %{{.*}}, %[[A0]][] : memref<i32>
// CHECK-NEXT: memref.store %{{.*}}, %[[A1]][] : memref<i32>
// CHECK-NEXT: %[[R:.*]] = memref.load %[[A0]][] : memref<i32>
// CHECK-NEXT: func.return %[[R]] : i32
// PROMOTED-LABEL: func.func @pair
// PROMOTED-SAME: (%[[X:.*]]: i32, %{{.*}}: i32)
// PROMOTED-NOT: memref
// PROMOTED: func.return %[[X]] : i32
func.func @pair(%x: i32, %y: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloca() : memref<2xi32>
  memref.store %x, %a[%c0] : memref<2xi32>
  memref.store %y, %a[%c1] : memref<2xi32>
  %r = memref.load %a[%c0] : memref<2xi32>
  return %r : i32
}

// CHECK-LABEL: func.func @dynamic_index
// CHECK: memref.alloca() : memref<2xi32>
func.func @dynamic_index(%x: i32, %i: index) {
  %a = memref.alloca() : memref<2xi32>
  memref.store %x, %a[%i] : memref<2xi32>
  return
}

// STATS:      SROA
// STATS-NEXT:   (S) 1 destructured slots
// STATS-NEXT:   (S) 2 max subelement number
// STATS-NEXT:   (S) 0 slots with memory benefit
