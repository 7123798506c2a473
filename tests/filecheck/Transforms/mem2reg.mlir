// mem2reg promotes one-element memref.alloca slots and entry-block llvm.alloca
// slots: loads read the last store, merge points get a block argument fed by
// each branch, a load before any store reads the default value. A slot whose
// address escapes is left alone. Outputs checked are mlir-opt 22.1.8's.
// RUN: passflow-opt %s -allow-unregistered-dialect --mem2reg | filecheck %s
// RUN: passflow-opt %s -allow-unregistered-dialect --mem2reg --mlir-pass-statistics -o /dev/null 2>&1 | filecheck %s --check-prefix=STATS

// CHECK-LABEL: func.func @merge
// CHECK-SAME: (%[[COND:.*]]: i1, %[[V:.*]]: i32)
// CHECK-NEXT:   %[[POISON:.*]] = ub.poison : i32
// CHECK-NEXT:   cf.cond_br %[[COND]], ^[[BB1:.*]], ^[[BB2:.*]](%[[POISON]] : i32)
// CHECK-NEXT: ^[[BB1]]:
// CHECK-NEXT:   cf.br ^[[BB2]](%[[V]] : i32)
// CHECK-NEXT: ^[[BB2]](%[[ARG:.*]]: i32):
// CHECK-NEXT:   func.return %[[ARG]] : i32
func.func @merge(%c: i1, %v: i32) -> i32 {
  %a = memref.alloca() : memref<i32>
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  memref.store %v, %a[] : memref<i32>
  cf.br ^bb2
^bb2:
  %r = memref.load %a[] : memref<i32>
  return %r : i32
}

// CHECK-LABEL: func.func @escapes
// CHECK: memref.alloca
// CHECK: memref.store
// CHECK: "t.use"
// CHECK: memref.load
func.func @escapes(%v: i32) -> i32 {
  %a = memref.alloca() : memref<i32>
  memref.store %v, %a[] : memref<i32>
  "t.use"(%a) : (memref<i32>) -> ()
  %r = memref.load %a[] : memref<i32>
  return %r : i32
}

// CHECK-LABEL: llvm.func @forward
// CHECK-SAME: (%[[X:.*]]: i32)
// CHECK-NOT: llvm.alloca
// CHECK: llvm.return %[[X]] : i32
llvm.func @forward(%x: i32) -> i32 {
  %one = llvm.mlir.constant(1 : i32) : i32
  %p = llvm.alloca %one x i32 : (i32) -> !llvm.ptr
  llvm.store %x, %p : i32, !llvm.ptr
  %r = llvm.load %p : !llvm.ptr -> i32
  llvm.return %r : i32
}

// STATS:      Mem2Reg
// STATS-NEXT:   (S) 1 new block args - Total amount of new block argument inserted in blocks
// STATS-NEXT:   (S) 2 promoted slots - Total amount of memory slot promoted
