// Folds of `index` arithmetic wrap at 64 bits, as MLIR's do (its `index` is a
// 64-bit APInt in attributes and folds): 9223372036854775807 + 1 is
// -9223372036854775808, not 9223372036854775808, which mlir-opt cannot read
// back. xDSL truncates the folds of `iN` only (issue 40). The same output
// comes from canonicalize and from sccp, and matches mlir-opt 22.1.8's.
// RUN: passflow-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(canonicalize))' | filecheck %s
// RUN: passflow-opt %s -split-input-file -pass-pipeline='builtin.module(func.func(sccp))' | filecheck %s
// RUN: passflow-opt %s -pass-pipeline='builtin.module(func.func(canonicalize),sccp)' | filecheck %s --check-prefix=NARROW

// No constant is wider than 64 bits (sign and 19 digits at most).
// NARROW-NOT: {{[^-0-9][0-9]{19,} : index|[0-9]{20,} : index}}

// CHECK-LABEL: func.func @add_overflows
// CHECK-DAG:     arith.constant -9223372036854775808 : index
// CHECK-DAG:     arith.constant 9223372036854775807 : index
// CHECK-DAG:     arith.constant 0 : index
// CHECK-DAG:     arith.constant -2 : index
// CHECK:         return
func.func @add_overflows() -> (index, index, index, index) {
  %max = arith.constant 9223372036854775807 : index
  %min = arith.constant -9223372036854775808 : index
  %one = arith.constant 1 : index
  %four = arith.constant 4 : index
  %big = arith.constant 4611686018427387904 : index
  %a = arith.addi %max, %one : index
  %s = arith.subi %min, %one : index
  %m = arith.muli %big, %four : index
  %d = arith.muli %max, %max : index
  %e = arith.addi %max, %max : index
  return %a, %s, %m, %e : index, index, index, index
}
