// A user's xDSL ModulePass, in a file that does not import passflow, loaded
// with --load-pass-plugin: its `name` is its argument, its fields its options
// (printed as xdsl-opt prints them), and it runs under passflow's timing,
// IR printing and crash reproducers.
// RUN: passflow-opt %s --load-pass-plugin=%S/../../../examples/xdsl_fold_add_zero.py -p 'builtin.module(fold-add-zero{max-iterations=3 fail-on=g})' --dump-pass-pipeline --mlir-timing --mlir-print-ir-after-all 2>&1 | filecheck %s
// RUN: not passflow-opt %s --load-pass-plugin=%S/../../../examples/xdsl_fold_add_zero.py -p 'builtin.module(fold-add-zero{fail-on=f})' 2>&1 | filecheck --check-prefix=FAIL %s
// RUN: not passflow-opt %s --load-pass-plugin=%S/../../../examples/xdsl_fold_add_zero.py -p 'builtin.module(fold-add-zero{crash=true})' --mlir-pass-pipeline-crash-reproducer=%t.repro.mlir 2>&1 | filecheck --check-prefix=CRASH %s
// RUN: filecheck --check-prefix=REPRO %s < %t.repro.mlir
// RUN: not passflow-opt --load-pass-plugin=%S/../../../examples/xdsl_fold_add_zero.py --run-reproducer %t.repro.mlir 2>&1 | filecheck --check-prefix=AGAIN %s
// RUN: not passflow-opt %s --load-pass-plugin=%S/../../../examples/xdsl_fold_add_zero.py -p 'builtin.module(fold-add-zero{bogus=1})' 2>&1 | filecheck --check-prefix=OPTION %s

// CHECK:      Pass Manager with 1 passes:
// CHECK-NEXT: builtin.module(
// CHECK-NEXT:   fold-add-zero{fail_on="g" max_iterations=3}
// CHECK-NEXT: )
// CHECK:      // -----// IR Dump After FoldAddZeroPass (fold-add-zero) //----- //
// CHECK:      func.return %x : i32
// CHECK:      Execution time report
// CHECK:      FoldAddZeroPass

// FAIL: error: fold-add-zero: refusing 'f'
// FAIL-NOT: Traceback

// CRASH: error: Failures have been detected while processing an MLIR pass pipeline
// CRASH: note: Pipeline failed while executing [`FoldAddZeroPass` on 'builtin.module' operation]: reproducer generated at

// REPRO: pipeline: "builtin.module(fold-add-zero{crash=true})"

// AGAIN: error: pass 'FoldAddZeroPass' crashed on 'builtin.module' op: RuntimeError: fold-add-zero crashed, as asked

// OPTION: error: <Pass-Options-Parser>: Provided arguments ["bogus"] not found in expected arguments
// OPTION: note: the options of 'fold-add-zero' are: fail_on, crash, max_iterations

func.func @f(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %y = arith.addi %x, %c0 : i32
  func.return %y : i32
}
