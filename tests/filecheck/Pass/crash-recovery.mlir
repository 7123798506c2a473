// A failing or crashing pass writes a reproducer (mlir-opt's format) and reports
// where; --run-reproducer replays it. Local mode replays only the failing pass.
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-function-pass,test-pass-failure),test-module-pass)' --mlir-pass-pipeline-crash-reproducer=%t.global 2>&1 | filecheck --check-prefix=GLOBAL %s
// RUN: filecheck --check-prefix=GLOBAL-FILE %s < %t.global
// RUN: not passflow-opt %t.global --run-reproducer 2>&1 | filecheck --allow-empty --check-prefix=REPLAY %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-function-pass,test-pass-crash))' --mlir-pass-pipeline-crash-reproducer=%t.local --mlir-pass-pipeline-local-reproducer --mlir-disable-threading 2>&1 | filecheck --check-prefix=LOCAL %s
// RUN: filecheck --check-prefix=LOCAL-FILE %s < %t.local
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(test-pass-failure)' --mlir-pass-pipeline-crash-reproducer=%t.nodir/sub/r.mlir 2>&1 | filecheck --check-prefix=NOFILE %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(test-pass-failure)' --mlir-pass-pipeline-crash-reproducer=%t.serial --mlir-disable-threading
// RUN: filecheck --check-prefix=SERIAL %s < %t.serial
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(test-pass-failure)' --mlir-pass-pipeline-crash-reproducer=%t.x --mlir-pass-pipeline-local-reproducer --executor=process --jobs=2 2>&1 | filecheck --check-prefix=NEEDS-SERIAL %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(test-pass-failure)' --mlir-pass-pipeline-crash-reproducer=%t.x --mlir-pass-pipeline-local-reproducer --executor=thread --jobs=2 2>&1 | filecheck --check-prefix=NEEDS-SERIAL %s
// Threading is disabled by any of the flags that disable it (one rule: no
// executor, a serial one, or one job).
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-pass-failure))' --mlir-pass-pipeline-crash-reproducer=%t.serial-executor --mlir-pass-pipeline-local-reproducer --executor=serial
// RUN: filecheck --check-prefix=SERIAL-LOCAL %s < %t.serial-executor
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-pass-failure))' --mlir-pass-pipeline-crash-reproducer=%t.one-job --mlir-pass-pipeline-local-reproducer --jobs=1
// RUN: filecheck --check-prefix=SERIAL-LOCAL %s < %t.one-job

// A failure is reported on the failing op; a crash (below) on the op the run
// started on, as mlir-opt's crash recovery does.
// GLOBAL: crash-recovery.mlir:[[# @LINE + 37]]:1: error: Failures have been detected while processing an MLIR pass pipeline
// GLOBAL: note: Pipeline failed while executing [`TestFailurePass` on 'func.func' operation: @foo]: reproducer generated at `{{.*}}.global`

// GLOBAL-FILE: func.func @foo()
// GLOBAL-FILE: func.func @bar()
// GLOBAL-FILE:      {-#
// GLOBAL-FILE-NEXT:   external_resources: {
// GLOBAL-FILE-NEXT:     mlir_reproducer: {
// GLOBAL-FILE-NEXT:       pipeline: "builtin.module(func.func(test-function-pass,test-pass-failure{gen-diagnostics=false}), test-module-pass)",
// GLOBAL-FILE-NEXT:       disable_threading: false,
// GLOBAL-FILE-NEXT:       verify_each: true
// GLOBAL-FILE-NEXT:     }
// GLOBAL-FILE-NEXT:   }
// GLOBAL-FILE-NEXT: #-}

// REPLAY-NOT: builtin.module

// SERIAL: disable_threading: true,

// NEEDS-SERIAL: <unknown>:0: error: Local crash reproduction may not be used without disabling multi-threading first.

// A crash under a reproducer reports only the reproducer's diagnostic (as MLIR's
// crash recovery); the Python traceback is written at the top of the file.
// LOCAL-NOT: crashed
// LOCAL: crash-recovery.mlir:0:0: error: Failures have been detected while processing an MLIR pass pipeline
// LOCAL-NEXT: note: Pipeline failed while executing `TestPassCrash` on 'func.func' operation: @foo: reproducer generated at `{{.*}}.local`
// LOCAL-NOT: crashed

// LOCAL-FILE: // {{.*}}crash-recovery.mlir:[[# @LINE + 9]]:1: pass 'TestPassCrash' crashed on 'func.func' op: RuntimeError: test-pass-crash: deliberate crash
// LOCAL-FILE-NEXT: // Traceback (most recent call last):
// LOCAL-FILE: // RuntimeError: test-pass-crash: deliberate crash
// LOCAL-FILE: pipeline: "builtin.module(func.func(test-pass-crash))",
// LOCAL-FILE-NEXT: disable_threading: true,

// NOFILE: error: Failures have been detected while processing an MLIR pass pipeline
// NOFILE: note: Pipeline failed while executing [`TestFailurePass` on 'builtin.module' operation]: failed to create output stream: Failed to create reproducer stream: cannot open output file '{{.*}}r.mlir': No such file or directory

func.func @foo() {
  func.return
}

func.func @bar() {
  func.return
}

// SERIAL-LOCAL: pipeline: "builtin.module(func.func(test-pass-failure{gen-diagnostics=false}))",
// SERIAL-LOCAL-NEXT: disable_threading: true,
