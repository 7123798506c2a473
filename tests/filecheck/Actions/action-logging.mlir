// Every pass execution is a `pass-execution` action. --log-actions-to logs each
// one as it begins and completes, in mlir-opt's words, nested as they ran: the
// nested-pipeline adaptor (MLIR's C++ name) around the passes it runs.
// RUN: passflow-opt %s --log-actions-to=- -p 'builtin.module(func.func(test-stats-pass),test-module-pass)' -o %t.out 2> %t.err | filecheck %s
// RUN: filecheck --check-prefix=ERR %s < %t.err
// To a file, the same lines:
// RUN: passflow-opt %s --log-actions-to=%t.log -p 'builtin.module(func.func(test-stats-pass),test-module-pass)' -o %t.out
// RUN: filecheck %s < %t.log
// Whatever the executor, actions run (and are logged) in program order, here:
// RUN: passflow-opt %s --log-actions-to=%t.process.log --executor=process --jobs=2 -p 'builtin.module(func.func(test-stats-pass),test-module-pass)' -o %t.out
// RUN: diff %t.log %t.process.log
// A file that can't be opened is reported, and the run goes on without actions:
// RUN: passflow-opt %s --log-actions-to=%t.missing/x.log -cse -o %t.out 2>&1 | filecheck --check-prefix=NOFILE %s

// ERR: {{^}}ExecutionContext registered on the context{{$}}

// CHECK: [thread {{.*}}] begins (no breakpoint) Action `pass-execution` running `mlir::detail::OpToOpPassAdaptor` on Operation `builtin.module` (module {...})`
// CHECK-NEXT: [thread {{.*}}] begins (no breakpoint) Action `pass-execution` running `TestStatisticPass` on Operation `func.func` (func.func @a() {...})`
// CHECK-NEXT: [thread {{.*}}] completed `pass-execution`
// CHECK-NEXT: [thread {{.*}}] begins (no breakpoint) Action `pass-execution` running `TestStatisticPass` on Operation `func.func` (func.func @b(%x: i32) -> i32 {...})`
// CHECK-NEXT: [thread {{.*}}] completed `pass-execution`
// CHECK-NEXT: [thread {{.*}}] completed `pass-execution`
// CHECK-NEXT: [thread {{.*}}] begins (no breakpoint) Action `pass-execution` running `TestModulePass` on Operation `builtin.module` (module {...})`
// CHECK-NEXT: [thread {{.*}}] completed `pass-execution`
// CHECK-NOT: Action

// NOFILE: ExecutionContext registered on the contexterror: Opening file for --log-actions-to failed: cannot open output file '{{.*}}x.log': No such file or directory
// NOFILE-NOT: Action

func.func @a() {
  func.return
}

func.func @b(%x: i32) -> i32 {
  func.return %x : i32
}
