// A failing run prints the reproducer's message after the errors it is about;
// replaying the reproducer reports the failure it reproduced, and exits 1 as the
// run that wrote it did (mlir-opt replays a silent failure in silence).
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-pass-failure{gen-diagnostics}))' --mlir-pass-pipeline-crash-reproducer=%t.loud 2>&1 | filecheck --check-prefix=FAILED %s
// RUN: not passflow-opt %t.loud --run-reproducer 2>&1 | filecheck --check-prefix=LOUD %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-pass-failure))' --mlir-pass-pipeline-crash-reproducer=%t.silent 2>&1
// RUN: not passflow-opt %t.silent --run-reproducer 2>&1 | filecheck --check-prefix=SILENT %s

// FAILED:      error: illegal operation
// FAILED-NEXT: func.func @foo()
// FAILED:      error: illegal operation
// FAILED-NEXT: func.func @bar()
// FAILED:      error: Failures have been detected while processing an MLIR pass pipeline
// FAILED:      note: Pipeline failed while executing [`TestFailurePass` on 'func.func' operation: @foo]: reproducer generated at
// FAILED-NOT:  illegal operation

// LOUD:      error: illegal operation
// LOUD:      error: illegal operation
// LOUD:      .loud:2:3: note: reproduced the failure: the pipeline failed while executing `TestFailurePass` on 'func.func' operation: @foo

// SILENT:      .silent:2:3: error: reproduced the failure: the pipeline failed while executing `TestFailurePass` on 'func.func' operation: @foo
// SILENT-NOT:  error:

func.func @foo() {
  func.return
}

func.func @bar() {
  func.return
}
