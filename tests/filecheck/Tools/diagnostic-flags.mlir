// mlir-opt's diagnostic flags. An error on an op gets a note showing the op
// (generic, in local scope) unless --mlir-print-op-on-diagnostic=false; a
// remark's note shows it as printed. --mlir-disable-diagnostic-notes drops
// every note, --mlir-diagnostic-verbosity-level drops lower severities and
// --mlir-print-stacktrace-on-diagnostic attaches where it was emitted.
// RUN: not passflow-opt %s 2>&1 | filecheck %s
// RUN: not passflow-opt %s --mlir-print-debuginfo 2>&1 | filecheck --check-prefix=DEBUG %s
// RUN: not passflow-opt %s --mlir-print-op-on-diagnostic=false 2>&1 | filecheck --check-prefix=NOOP %s
// RUN: not passflow-opt %s --mlir-disable-diagnostic-notes 2>&1 | filecheck --check-prefix=NOOP %s
// RUN: not passflow-opt %s --mlir-print-stacktrace-on-diagnostic 2>&1 | filecheck --check-prefix=TRACE %s
// RUN: passflow-opt %inputs/remark-on-func.mlir -p 'builtin.module(func.func(test-interface-pass))' -o /dev/null 2>&1 | filecheck --check-prefix=REMARK %s
// RUN: passflow-opt %inputs/remark-on-func.mlir -p 'builtin.module(func.func(test-interface-pass))' -o /dev/null --mlir-diagnostic-verbosity-level=warnings 2>&1 | filecheck --allow-empty --check-prefix=QUIET %s
// RUN: not passflow-opt %s --mlir-diagnostic-verbosity-level=remark 2>&1 | filecheck --check-prefix=BAD %s

// CHECK:      diagnostic-flags.mlir:25:3: error: 'func.return' op
// CHECK-NEXT:   return %a : i32
// CHECK-NEXT:   ^
// CHECK-NEXT: diagnostic-flags.mlir:25:3: note: see current operation: "func.return"(%a) : (i32) -> (){{$}}
// DEBUG:      note: see current operation: "func.return"(%a) : (i32) -> () loc("{{.*}}diagnostic-flags.mlir":25:3)
// NOOP:       error: 'func.return' op
// NOOP-NOT:   note:
// TRACE:      note: diagnostic emitted with trace:
// TRACE:      in parse
func.func @f(%a: i32) -> i64 {
  return %a : i32
}

// REMARK:      remark-on-func.mlir:1:1: remark: Executing interface pass on operation
// REMARK-NEXT: func.func @f() {
// REMARK-NEXT: ^
// REMARK-NEXT: remark-on-func.mlir:1:1: note: see current operation:{{ $}}
// REMARK-NEXT: func.func @f() {
// REMARK-NEXT:   func.return
// REMARK-NEXT: }
// QUIET-NOT:   remark

// BAD: passflow-opt: for the --mlir-diagnostic-verbosity-level option: Cannot find option named 'remark'!
// BAD-NEXT: passflow-opt: Did you mean '--mlir-diagnostic-verbosity-level=remarks'?
