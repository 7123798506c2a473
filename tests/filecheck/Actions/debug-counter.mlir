// --mlir-debug-counter runs a window of the pass executions, numbered from 1 in
// execution order (the nested-pipeline adaptor on the module is 1, then each
// function's passes in program order): `-skip=N` skips the first N, `-count=M`
// runs the next M, and every later one is skipped. A skipped pass did not run.
// --mlir-print-debug-counter prints {executions counted,skip,count} on stderr.
//
// Actions: 1 adaptor, 2 cse @a, 3 canonicalize @a, 4 cse @b, 5 canonicalize @b.
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize))' --mlir-debug-counter=pass-execution-count=2 --mlir-print-debug-counter 2> %t.err | filecheck --check-prefix=CSE-A %s
// RUN: filecheck --check-prefix=REPORT %s < %t.err
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize))' --mlir-debug-counter=pass-execution-count=3 | filecheck --check-prefix=ALL-A %s
// Skipping the adaptor skips its whole pipeline:
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize))' --mlir-debug-counter=pass-execution-skip=1 --mlir-print-debug-counter 2>&1 | filecheck --check-prefix=NOTHING %s
// The numbering does not depend on the executor:
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize))' --mlir-debug-counter=pass-execution-count=2 --mlir-disable-threading -o %t.serial
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize))' --mlir-debug-counter=pass-execution-count=2 --executor=process --jobs=2 -o %t.process
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize))' --mlir-debug-counter=pass-execution-count=2 --executor=thread --jobs=2 -o %t.thread
// RUN: diff %t.serial %t.process
// RUN: diff %t.serial %t.thread
// As in mlir-opt, a counter is refused when actions are logged or profiled:
// RUN: passflow-opt %s -cse --mlir-debug-counter=pass-execution-skip=1 --log-actions-to=%t.log -o %t.out 2>&1 | filecheck --check-prefix=REFUSED %s
// RUN: filecheck --check-prefix=LOGGED %s < %t.log
// Malformed counters end the run with mlir-opt's messages:
// RUN: not passflow-opt %s -cse --mlir-debug-counter=pass-execution -o %t.out 2>&1 | filecheck --check-prefix=NO-EQUAL %s
// RUN: not passflow-opt %s -cse --mlir-debug-counter=pass-execution-skip=two -o %t.out 2>&1 | filecheck --check-prefix=NOT-NUMBER %s
// RUN: not passflow-opt %s -cse --mlir-debug-counter=pass-execution-every=2 -o %t.out 2>&1 | filecheck --check-prefix=BAD-SUFFIX %s

// CSE-A-LABEL: func.func @a
// CSE-A-NEXT: %c1 = arith.constant 1 : i32
// CSE-A-NEXT: %0 = arith.addi %x, %x : i32
// CSE-A-NEXT: %1 = arith.muli %0, %c1 : i32
// CSE-A-LABEL: func.func @b
// CSE-A-NEXT: %0 = arith.addi %y, %y : i32
// CSE-A-NEXT: %1 = arith.addi %y, %y : i32

// REPORT: DebugCounter counters:
// REPORT-NEXT: {{^}}pass-execution                  : {5,0,2}{{$}}

// ALL-A-LABEL: func.func @a
// ALL-A-NEXT: %0 = arith.addi %x, %x : i32
// ALL-A-NEXT: func.return %0 : i32
// ALL-A-LABEL: func.func @b
// ALL-A-NEXT: %0 = arith.addi %y, %y : i32
// ALL-A-NEXT: %1 = arith.addi %y, %y : i32

// NOTHING: DebugCounter counters:
// NOTHING-NEXT: {{^}}pass-execution                  : {1,1,-1}{{$}}
// NOTHING: func.func @a
// NOTHING-NEXT: arith.constant
// NOTHING-NEXT: arith.addi %x, %x
// NOTHING-NEXT: arith.addi %x, %x

// REFUSED: ExecutionContext registered on the contexterror: Debug counters are incompatible with --log-actions-to and --mlir-enable-debugger-hook options and are disabled
// LOGGED: begins (no breakpoint) Action `pass-execution` running `CSE`

// NO-EQUAL: error: expected DebugCounter argument to have an `=` separating the counter name and value, but the provided argument was: `pass-execution`
// NO-EQUAL-NEXT: LLVM ERROR: Invalid DebugCounter command-line configuration
// NOT-NUMBER: error: expected DebugCounter counter value to be numeric, but got `two`
// BAD-SUFFIX: error: expected DebugCounter counter name to end with either `-skip` or `-count`, but got`pass-execution-every`

func.func @a(%x: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %0 = arith.addi %x, %x : i32
  %1 = arith.addi %x, %x : i32
  %2 = arith.muli %1, %c1 : i32
  func.return %2 : i32
}

func.func @b(%y: i32) -> i32 {
  %0 = arith.addi %y, %y : i32
  %1 = arith.addi %y, %y : i32
  %2 = arith.addi %0, %1 : i32
  func.return %2 : i32
}
