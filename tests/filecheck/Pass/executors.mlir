// The same pipeline gives byte-identical output and diagnostics whichever
// executor runs the nested pipelines.
// RUN: passflow-opt %s -p 'builtin.module(func.func(canonicalize,cse))' --mlir-disable-threading > %t.serial
// RUN: passflow-opt %s -p 'builtin.module(func.func(canonicalize,cse))' --executor=thread --jobs=2 > %t.thread
// RUN: passflow-opt %s -p 'builtin.module(func.func(canonicalize,cse))' --executor=process --jobs=2 > %t.process
// RUN: diff %t.serial %t.thread
// RUN: diff %t.serial %t.process
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-pass-failure{gen-diagnostics}))' --mlir-disable-threading 2> %t.serial.err
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-pass-failure{gen-diagnostics}))' --executor=process --jobs=2 2> %t.process.err
// RUN: diff %t.serial.err %t.process.err
// RUN: filecheck %s < %t.serial

// CHECK: func.func @f0
// CHECK: func.func @f3
func.func @f0(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %x = arith.addi %a, %c0 : i32
  %y = arith.addi %a, %c0 : i32
  %s = arith.addi %x, %y : i32
  func.return %s : i32
}
func.func @f1(%a: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %x = arith.muli %a, %c1 : i32
  func.return %x : i32
}
func.func @f2(%a: i32) -> i32 {
  %x = arith.addi %a, %a : i32
  %y = arith.addi %a, %a : i32
  %s = arith.muli %x, %y : i32
  func.return %s : i32
}
func.func @f3() {
  func.return
}
