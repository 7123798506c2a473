// `inline` leaves a call alone when the call or its callee carries `no_inline`
// (mlir-opt 22.1.8: the func dialect's isLegalToInline). A callee still called
// stays, private or not; one whose every call was inlined goes (issue 14).
// The checks hold for mlir-opt's output too.
// RUN: passflow-opt %s -inline='default-pipeline=' -o %t.out
// RUN: filecheck %s < %t.out
// RUN: passflow-opt %s -inline -o %t.out
// RUN: filecheck %s --check-prefix=SIMPLIFY < %t.out

// CHECK-LABEL: func.func private @never_inlined
// CHECK-SAME:    attributes {no_inline}
// SIMPLIFY-LABEL: func.func private @never_inlined
func.func private @never_inlined(%a: i32) -> i32 attributes {no_inline} {
  %c1 = arith.constant 1 : i32
  %r = arith.addi %a, %c1 : i32
  return %r : i32
}

// CHECK-LABEL: func.func private @twice
// SIMPLIFY-LABEL: func.func private @twice
func.func private @twice(%a: i32) -> i32 {
  %c2 = arith.constant 2 : i32
  %r = arith.muli %a, %c2 : i32
  return %r : i32
}

// The only call is `no_inline`: the private callee keeps its use.
// CHECK-LABEL: func.func private @once
// SIMPLIFY-LABEL: func.func private @once
func.func private @once(%a: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %r = arith.subi %a, %c3 : i32
  return %r : i32
}

// Inlined everywhere, then erased.
// CHECK-NOT: @inlined
// SIMPLIFY-NOT: @inlined
func.func private @inlined(%a: i32) -> i32 {
  %r = arith.xori %a, %a : i32
  return %r : i32
}

// CHECK-LABEL: func.func @main
// CHECK-NEXT:    %[[X:.*]] = {{(func\.)?}}call @never_inlined(%{{.*}}) : (i32) -> i32
// CHECK-NEXT:    %[[Y:.*]] = {{(func\.)?}}call @twice(%[[X]]) {no_inline} : (i32) -> i32
// CHECK-NEXT:    %[[C2:.*]] = arith.constant 2 : i32
// CHECK-NEXT:    %[[Z:.*]] = arith.muli %[[Y]], %[[C2]] : i32
// CHECK-NEXT:    %[[W:.*]] = {{(func\.)?}}call @once(%[[Z]]) {no_inline} : (i32) -> i32
// CHECK-NEXT:    %[[V:.*]] = arith.xori %[[W]], %[[W]] : i32
// CHECK-NEXT:    {{(func\.)?}}return %[[V]] : i32
// SIMPLIFY-LABEL: func.func @main
// SIMPLIFY:        {{(func\.)?}}call @never_inlined(
// SIMPLIFY:        {{(func\.)?}}call @twice({{.*}}) {no_inline}
// SIMPLIFY-NOT:    call
// SIMPLIFY:        arith.muli
// SIMPLIFY:        {{(func\.)?}}call @once({{.*}}) {no_inline}
// SIMPLIFY-NOT:    call
// SIMPLIFY:        return
func.func @main(%a: i32) -> i32 {
  %x = func.call @never_inlined(%a) : (i32) -> i32
  %y = func.call @twice(%x) {no_inline} : (i32) -> i32
  %z = func.call @twice(%y) : (i32) -> i32
  %w = func.call @once(%z) {no_inline} : (i32) -> i32
  %v = func.call @inlined(%w) : (i32) -> i32
  return %v : i32
}
