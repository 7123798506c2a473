// composite-fixed-point-pass runs its pipeline until a run changes nothing, at
// most max-iterations + 1 times, warning when the last allowed run is reached
// (whether or not it changed the IR, as mlir-opt 22.1.8 does on this file).
// RUN: passflow-opt %s -pass-pipeline='builtin.module(composite-fixed-point-pass{pipeline="canonicalize,cse"})' -log-actions-to=- | filecheck %s
// RUN: passflow-opt %s -pass-pipeline='builtin.module(composite-fixed-point-pass{pipeline=canonicalize max-iterations=1})' -o /dev/null 2>&1 | filecheck --check-prefix=WARN %s
// RUN: passflow-opt %s -pass-pipeline='builtin.module(composite-fixed-point-pass{name=Foo pipeline="func.func(canonicalize),cse" max-iterations=3})' -dump-pass-pipeline -o /dev/null 2>&1 | filecheck --check-prefix=DUMP %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(composite-fixed-point-pass{pipeline=bogus})' 2>&1 | filecheck --check-prefix=BAD %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(composite-fixed-point-pass{pipeline=cse max-iterations=0})' 2>&1 | filecheck --check-prefix=ZERO %s

// Round 1 folds the constants (canonicalize) and merges the additions (cse);
// round 2 changes nothing, so the pipeline stops there.
// CHECK: running `CompositeFixedPointPass` on Operation `builtin.module`
// CHECK-COUNT-2: running `Canonicalizer`
// CHECK-NOT: running `Canonicalizer`
// CHECK:      func.func @f(%{{.*}}: i32) -> i32 {
// CHECK-NEXT:   %[[C:.*]] = arith.constant 3 : i32
// CHECK-NEXT:   %[[S:.*]] = arith.addi %{{.*}}, %[[C]] : i32
// CHECK-NEXT:   %[[M:.*]] = arith.muli %[[S]], %[[S]] : i32
// CHECK-NEXT:   {{(func\.)?}}return %[[M]] : i32

// WARN: composite-fixed-point-pass.mlir:0:0: warning: Composite pass "CompositeFixedPointPass"+ didn't converge in 1 iterations

// DUMP: composite-fixed-point-pass{max-iterations=3 name=Foo pipeline=func.func(canonicalize),cse}

// BAD: MLIR Textual PassPipeline Parser:1:1: error: 'bogus' does not refer to a registered pass or pass pipeline
// BAD-NEXT: bogus
// BAD-NEXT: ^
// BAD-NEXT: <unknown>:0: error: Failed to parse composite pass pipeline
// BAD: failed to add `composite-fixed-point-pass` with options `pipeline=bogus`

// ZERO: <unknown>:0: error: Invalid maxIterations value:

func.func @f(%a: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %0 = arith.addi %c1, %c2 : i32
  %1 = arith.addi %0, %a : i32
  %2 = arith.addi %0, %a : i32
  %3 = arith.muli %1, %2 : i32
  return %3 : i32
}
