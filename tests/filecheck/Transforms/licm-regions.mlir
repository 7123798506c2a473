// loop-invariant-code-motion moves ops with regions as a whole, as mlir-opt
// 22.1.8 does (MLIR's moveLoopInvariantCode with isMemoryEffectFree and
// isSpeculatable, both recursive; issue 14): an invariant inner loop with a
// unit step, an `scf.if` whose regions have no effect, a `linalg.generic` on
// tensors. Nothing that may trap or loop forever moves: a division by a value
// that may be 0 or -1, a loop with another step, an `scf.while`, a `dim` whose
// index may be out of range. The checks hold for mlir-opt's output too.
// RUN: passflow-opt %s -allow-unregistered-dialect -split-input-file -loop-invariant-code-motion -o %t.out
// RUN: filecheck %s < %t.out
// canonicalize keeps the loop of the second chunk, as mlir-opt does: the
// unregistered op in it is no constant to hoist (xDSL's RehoistConstInLoops took
// it for one, and the loop, then empty, was erased; issue 40).
// RUN: passflow-opt %s -allow-unregistered-dialect -split-input-file -pass-pipeline='builtin.module(func.func(canonicalize))' | filecheck %s --check-prefix=CANON

// CHECK-LABEL: func.func @loops
// CHECK-SAME:    (%[[LB:[^:]*]]: index, %[[UB:[^:]*]]: index, %[[S:[^:]*]]: index, %[[A:[^:]*]]: i32)
// CHECK-NEXT:    %[[C1:.*]] = arith.constant 1 : index
// CHECK-NEXT:    arith.addi %[[A]], %[[A]] : i32
// CHECK-NEXT:    scf.for %{{.*}} = %[[LB]] to %[[UB]] step %[[C1]] {
// CHECK-NEXT:    }
// CHECK-NEXT:    arith.addi %[[A]], %[[A]] : i32
// CHECK-NEXT:    scf.for %[[I:.*]] = %[[LB]] to %[[UB]] step %[[S]] {
// CHECK-NEXT:      scf.for %{{.*}} = %[[I]] to %[[UB]] step %[[C1]] {
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.for %{{.*}} = %[[LB]] to %[[UB]] step %[[S]] {
// CHECK-NEXT:        scf.while
func.func @loops(%lb: index, %ub: index, %s: index, %a: i32) {
  %c1 = arith.constant 1 : index
  scf.for %i = %lb to %ub step %s {
    scf.for %j = %lb to %ub step %s {
      scf.for %k = %lb to %ub step %c1 {
        %x = arith.addi %a, %a : i32
      }
      scf.for %k = %i to %ub step %c1 {
        %y = arith.addi %a, %a : i32
      }
      %w = scf.while (%v = %a) : (i32) -> i32 {
        %f = arith.cmpi slt, %v, %a : i32
        scf.condition(%f) %v : i32
      } do {
      ^bb0(%v: i32):
        scf.yield %v : i32
      }
    }
  }
  return
}

// -----

// CANON-LABEL: func.func @regions
// CANON:         scf.for
// CANON-NEXT:      %[[R:.*]] = scf.if
// CANON:           "test.use"(%[[R]],
// CANON-NEXT:    }
// CANON-NEXT:    func.return

// CHECK-LABEL: func.func @regions
// CHECK:         %[[C5:.*]] = arith.constant 5 : i32
// CHECK:         %[[X:.*]] = arith.addi
// CHECK-NEXT:    scf.for
// CHECK-NEXT:    }
// CHECK-NEXT:    arith.addi
// CHECK-NEXT:    %[[R:.*]] = scf.if
// CHECK-NEXT:      arith.muli
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    } else {
// CHECK-NEXT:      scf.yield
// CHECK-NEXT:    }
// CHECK-NEXT:    arith.ceildivsi %{{.*}}, %[[C5]] : i32
// CHECK-NEXT:    arith.divui %{{.*}}, %[[C5]] : i32
// CHECK-NEXT:    arith.ceildivui %{{.*}}, %[[C5]] : i32
// CHECK-NEXT:    tensor.dim
// CHECK-NEXT:    tensor.empty
// CHECK-NEXT:    scf.for
// CHECK-NEXT:      scf.for
// CHECK-NEXT:      }
// CHECK-NEXT:      scf.if
// CHECK-NEXT:        memref.store
// CHECK-NEXT:      }
// CHECK-NEXT:      arith.ceildivsi
// CHECK-NEXT:      arith.ceildivsi
// CHECK-NEXT:      tensor.dim
// CHECK-NEXT:      memref.dim
// CHECK-NEXT:      "test.use"(%[[R]],
func.func @regions(%lb: index, %ub: index, %s: index, %a: i32, %b: i32, %c: i1,
                   %m: memref<4xi32>, %t: tensor<?x4xf32>) {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : i32
  %cm1 = arith.constant -1 : i32
  scf.for %i = %lb to %ub step %s {
    scf.for %j = %lb to %ub step %c1 {
      %x = arith.addi %a, %b : i32
    }
    scf.for %k = %lb to %ub step %c2 {
      %y = arith.addi %a, %b : i32
    }
    %r = scf.if %c -> (i32) {
      %p = arith.muli %a, %b : i32
      scf.yield %p : i32
    } else {
      scf.yield %a : i32
    }
    scf.if %c {
      memref.store %a, %m[%c1] : memref<4xi32>
    }
    %d0 = arith.ceildivsi %a, %b : i32
    %d1 = arith.ceildivsi %a, %c5 : i32
    %d2 = arith.ceildivsi %a, %cm1 : i32
    %d3 = arith.divui %a, %c5 : i32
    %d4 = arith.ceildivui %a, %c5 : i32
    %n0 = tensor.dim %t, %c1 : tensor<?x4xf32>
    %n1 = tensor.dim %t, %c2 : tensor<?x4xf32>
    %n2 = memref.dim %m, %c1 : memref<4xi32>
    %e = tensor.empty(%n0) : tensor<?xf32>
    "test.use"(%r, %d0, %d1, %d2, %d3, %d4, %n0, %n1, %n2, %e)
        : (i32, i32, i32, i32, i32, i32, index, index, index, tensor<?xf32>) -> ()
  }
  return
}

// -----

// CHECK-LABEL: func.func @affine_and_linalg
// CHECK-NEXT:    affine.for
// CHECK-NEXT:    }
// CHECK-NEXT:    %[[G:.*]] = linalg.generic
// CHECK:         scf.for
// CHECK-NEXT:      affine.for
// CHECK-NEXT:        affine.for {{.*}} step 2 {
// CHECK-NEXT:        }
// CHECK-NEXT:      }
// CHECK-NEXT:      linalg.generic
// CHECK-SAME:        outs(%{{.*}} : memref<8xf32>)
// CHECK:           arith.addf %[[G]],
#map = affine_map<(d0) -> (d0)>
func.func @affine_and_linalg(%lb: index, %ub: index, %s: index, %a: tensor<8xf32>,
                             %b: tensor<8xf32>, %m: memref<8xf32>) -> tensor<8xf32> {
  %r = scf.for %i = %lb to %ub step %s iter_args(%acc = %b) -> (tensor<8xf32>) {
    affine.for %j = 0 to 10 {
      affine.for %k = %lb to %ub {
      }
      affine.for %k = %lb to %ub step 2 {
      }
    }
    %g = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%a : tensor<8xf32>) outs(%b : tensor<8xf32>) {
    ^bb0(%x: f32, %y: f32):
      %z = arith.addf %x, %y : f32
      linalg.yield %z : f32
    } -> tensor<8xf32>
    linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%m : memref<8xf32>) outs(%m : memref<8xf32>) {
    ^bb0(%x: f32, %y: f32):
      linalg.yield %x : f32
    }
    %n = arith.addf %g, %acc : tensor<8xf32>
    scf.yield %n : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
