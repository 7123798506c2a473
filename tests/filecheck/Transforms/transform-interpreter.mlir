// transform-interpreter runs the script's @__transform_main; each
// transform.apply_registered_pass runs through passflow's pass manager, so IR
// printing shows every pass it applies, with the options the op gives.
// RUN: passflow-opt %s -pass-pipeline='builtin.module(transform-interpreter)' -mlir-print-ir-after-all -o /dev/null 2>&1 | filecheck --check-prefix=DUMP %s
// RUN: passflow-opt %s -pass-pipeline='builtin.module(transform-interpreter)' | filecheck %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(transform-interpreter{entry-point=nowhere})' 2>&1 | filecheck --check-prefix=ENTRY %s

// DUMP:      // -----// IR Dump After CSE (cse) //----- //
// DUMP:      // -----// IR Dump After Canonicalizer (canonicalize) //----- //
// DUMP:      // -----// IR Dump After TransformInterpreter (transform-interpreter) //----- //

// CHECK:      func.func @f(%{{.*}}: i32) -> i32 {
// CHECK-NEXT:   %[[S:.*]] = arith.addi
// CHECK-NEXT:   %[[M:.*]] = arith.muli %[[S]], %[[S]] : i32

// ENTRY: error: could not find a nested named sequence with name: nowhere

builtin.module attributes {transform.with_named_sequence} {
  func.func @f(%a: i32) -> i32 {
    %0 = arith.addi %a, %a : i32
    %1 = arith.addi %a, %a : i32
    %2 = arith.muli %0, %1 : i32
    func.return %2 : i32
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op) {
    %m = transform.apply_registered_pass "cse" to %root : (!transform.any_op) -> !transform.any_op
    %n = transform.apply_registered_pass "canonicalize" with options = {"max-iterations" = 1 : i64} to %m : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
