// --mlir-elide-elementsattrs-if-larger prints dense elements with more
// elements than the limit (splats excepted) as mlir-opt does; the generic form
// too. --mlir-elide-resource-strings-if-larger leaves out the resource entries
// longer than the limit, and the groups left empty.
// RUN: passflow-opt %s --allow-unregistered-dialect --mlir-elide-elementsattrs-if-larger=2 | filecheck %s
// RUN: passflow-opt %s --allow-unregistered-dialect --mlir-elide-elementsattrs-if-larger=2 --mlir-print-op-generic | filecheck --check-prefix=GENERIC %s
// RUN: passflow-opt %s --allow-unregistered-dialect --mlir-elide-resource-strings-if-larger=21 | filecheck --check-prefix=RES21 %s
// RUN: passflow-opt %s --allow-unregistered-dialect --mlir-elide-resource-strings-if-larger=0 | filecheck --check-prefix=RES0 %s

// CHECK: %c = arith.constant dense_resource<__elided__> : tensor<4xi32>
// CHECK: %d = arith.constant dense<5> : tensor<8xi32>
// CHECK: %e = arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
// GENERIC: "arith.constant"() <{value = dense_resource<__elided__> : tensor<4xi32>}> : () -> tensor<4xi32>

// RES21:      {-#
// RES21-NEXT:   external_resources: {
// RES21-NEXT:     mlir_reproducer: {
// RES21-NEXT:       pipeline: "builtin.module(cse)",
// RES21-NEXT:       disable_threading: true
// RES21-NEXT:     }
// RES21-NEXT:   }
// RES21-NEXT: #-}

// RES0:      {-#
// RES0-EMPTY:
// RES0-NEXT: #-}

%c = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>
%d = arith.constant dense<5> : tensor<8xi32>
%e = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>

{-#
  dialect_resources: {
    builtin: {
      blob1: "0x08000000010000000000000002000000000000000300000000000000"
    }
  },
  external_resources: {
    mlir_reproducer: {
      pipeline: "builtin.module(cse)",
      disable_threading: true
    }
  }
#-}
