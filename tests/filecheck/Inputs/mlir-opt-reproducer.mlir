module {
  func.func @foo(%arg0: i32) -> i32 {
    %c0_i32 = arith.constant 0 : i32
    %0 = arith.addi %arg0, %c0_i32 : i32
    %1 = arith.addi %arg0, %c0_i32 : i32
    %2 = arith.addi %0, %1 : i32
    return %2 : i32
  }
}

{-#
  external_resources: {
    mlir_reproducer: {
      pipeline: "builtin.module(func.func(cse,canonicalize{  max-iterations=1 max-num-rewrites=-1 region-simplify=normal test-convergence=true top-down=true}))",
      disable_threading: false,
      verify_each: true
    }
  }
#-}
