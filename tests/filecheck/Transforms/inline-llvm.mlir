// inline inlines llvm.call into llvm.func, turning llvm.return into llvm.br
// for a multi-block callee, and keeps calls the llvm dialect does not inline
// (no_inline, a personality, disallowed passthrough attributes, variadic
// callees), as mlir-opt 22.1.8 does.
// RUN: passflow-opt %s --inline='default-pipeline=' | filecheck %s

// CHECK-LABEL: llvm.func @caller
// CHECK-NEXT:   llvm.cond_br %{{.*}}, ^[[BB1:.*]], ^[[BB2:.*]]
// CHECK:        llvm.br ^[[BB3:.*]](%{{.*}} : i32)
// CHECK:        llvm.br ^[[BB3]](%{{.*}} : i32)
// CHECK-NEXT: ^[[BB3]](%[[R:.*]]: i32):
// CHECK-NEXT:   llvm.br ^[[BB4:.*]](%[[R]] : i32)
// CHECK-NEXT: ^[[BB4]](%[[S:.*]]: i32):
// CHECK-NEXT:   llvm.call @no_inline() : () -> ()
// CHECK-NEXT:   llvm.call @strictfp() : () -> ()
// CHECK-NEXT:   llvm.call @variadic() vararg(!llvm.func<void (...)>) : () -> ()
// CHECK-NEXT:   llvm.return %[[S]] : i32
llvm.func @caller(%cond: i1) -> (i32) {
  %0 = llvm.call @multiple_blocks(%cond) : (i1) -> (i32)
  llvm.call @no_inline() : () -> ()
  llvm.call @strictfp() : () -> ()
  llvm.call @variadic() vararg(!llvm.func<void (...)>) : () -> ()
  llvm.return %0 : i32
}
llvm.func @multiple_blocks(%cond: i1) -> (i32) {
  llvm.cond_br %cond, ^bb1, ^bb2
^bb1:
  %0 = llvm.mlir.constant(0 : i32) : i32
  llvm.br ^bb3(%0: i32)
^bb2:
  %1 = llvm.mlir.constant(1 : i32) : i32
  llvm.br ^bb3(%1: i32)
^bb3(%arg: i32):
  llvm.return %arg : i32
}
llvm.func @no_inline() attributes { no_inline } {
  llvm.return
}
llvm.func @strictfp() attributes { passthrough = ["strictfp"] } {
  llvm.return
}
llvm.func @variadic(...) {
  llvm.return
}
