// --verify-roundtrip prints the parsed input in generic form with its
// locations, parses that and prints it again: the run goes on when both
// prints agree (mlir-opt's check; its bytecode half is not done, passflow
// writes no bytecode).
// RUN: passflow-opt %s --verify-roundtrip | filecheck %s
// RUN: passflow-opt %s --verify-roundtrip --mlir-print-debuginfo | filecheck --check-prefix=LOC %s

// CHECK: func.func @f(%a: i32) -> i32
// LOC: %0 = arith.addi %a, %a : i32 loc(#loc6)
// LOC: #loc6 = loc(fused<"m">[#loc3, #loc4])
#loc = loc("src.c":4:2)
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32 loc(fused<"m">[#loc, "x.c":1:1])
  return %0 : i32
}
