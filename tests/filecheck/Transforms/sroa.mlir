// sroa splits a memref.alloca of a small static shape whose every access has
// constant in-bounds indices into one slot per element used, in mlir-opt
// 22.1.8's order, and an llvm.alloca of a struct accessed through GEPs the same
// way; mem2reg then promotes the new slots.
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

// CHECK-LABEL: llvm.func @struct_field
// CHECK-NEXT:   %[[ONE:.*]] = llvm.mlir.constant(1 : i32) : i32
// CHECK-NEXT:   %[[FIELD:.*]] = llvm.alloca %[[ONE]] x i32 : (i32) -> !llvm.ptr
// CHECK-NEXT:   llvm.store %{{.*}}, %[[FIELD]] : i32, !llvm.ptr
// CHECK-NEXT:   %[[R:.*]] = llvm.load %[[FIELD]] : !llvm.ptr -> i32
// CHECK-NEXT:   llvm.return %[[R]] : i32
llvm.func @struct_field(%v: i32) -> i32 {
  %0 = llvm.mlir.constant(1 : i32) : i32
  %1 = llvm.alloca %0 x !llvm.struct<(i32, f64, i32)> {alignment = 8 : i64} : (i32) -> !llvm.ptr
  %2 = llvm.getelementptr %1[0, 2] : (!llvm.ptr) -> !llvm.ptr, !llvm.struct<(i32, f64, i32)>
  llvm.store %v, %2 : i32, !llvm.ptr
  %3 = llvm.load %2 : !llvm.ptr -> i32
  llvm.return %3 : i32
}

// CHECK-LABEL: func.func @dynamic_index
// CHECK: memref.alloca() : memref<2xi32>
func.func @dynamic_index(%x: i32, %i: index) {
  %a = memref.alloca() : memref<2xi32>
  memref.store %x, %a[%i] : memref<2xi32>
  return
}

// STATS:      SROA
// STATS-NEXT:   (S) 2 destructured slots
// STATS-NEXT:   (S) 3 max subelement number
// STATS-NEXT:   (S) 1 slots with memory benefit
