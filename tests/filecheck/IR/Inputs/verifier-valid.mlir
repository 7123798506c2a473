// Valid for MLIR's verifier (and mlir-opt 22.1.8): checked by ../verifier.mlir.
// Uses before definitions in graph regions (a module, an unregistered op's
// single block), in unreachable blocks, and of values of enclosing regions.

// CHECK-LABEL: builtin.module
// CHECK:         "test.a"(%[[B:.*]]) : (i32) -> i32
// CHECK-NEXT:    %[[B]] = "test.b"() : () -> i32
%y = "test.a"(%x) : (i32) -> i32
%x = "test.b"() : () -> i32

// CHECK:         "test.graph"() ({
// CHECK-NEXT:      "test.c"(%[[D:.*]]) : (i32) -> ()
// CHECK-NEXT:      %[[D]] = "test.d"() : () -> i32
"test.graph"() ({
  "test.c"(%d) : (i32) -> ()
  %d = "test.d"() : () -> i32
}) : () -> ()

// CHECK-LABEL: func.func @unreachable
func.func @unreachable() -> i32 {
  %c = arith.constant 1 : i32
  return %c : i32
^bb1:
  %u = arith.addi %v, %v : i32
  %v = arith.constant 2 : i32
  cf.br ^bb1
}

// CHECK-LABEL: func.func @nested
func.func @nested(%a: i32, %c: i1) -> i32 {
  %s = arith.addi %a, %a : i32
  %r = scf.if %c -> (i32) {
    %t = arith.addi %s, %a : i32
    scf.yield %t : i32
  } else {
    scf.yield %s : i32
  }
  return %r : i32
}
