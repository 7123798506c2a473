// A `dense_resource` keeps its key through --verify-roundtrip and in every
// chunk of --split-input-file, as in mlir-opt, which parses each in a context of
// its own: xDSL's one store per process renamed the second `blob1` `blob1_0`,
// so the round trip differed and the second chunk printed another key than
// its resource section holds.
// RUN: passflow-opt %s --split-input-file --verify-roundtrip | filecheck %s

// CHECK:      arith.constant dense_resource<blob1> : tensor<2xi32>
// CHECK:      blob1: "0x040000000100000002000000"
// CHECK:      // -----
// CHECK:      arith.constant dense_resource<blob1> : tensor<2xi32>
// CHECK-NOT:  blob1_
// CHECK:      blob1: "0x040000000300000004000000"
func.func @f() -> tensor<2xi32> {
  %0 = arith.constant dense_resource<blob1> : tensor<2xi32>
  return %0 : tensor<2xi32>
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000100000002000000"
    }
  }
#-}

// -----

func.func @g() -> tensor<2xi32> {
  %0 = arith.constant dense_resource<blob1> : tensor<2xi32>
  return %0 : tensor<2xi32>
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000300000004000000"
    }
  }
#-}
