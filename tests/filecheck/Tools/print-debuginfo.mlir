// Locations print as mlir-opt 22.1.8 prints them, `#loc` aliases numbered as
// it numbers them (block arguments' aliases first, the others after the op),
// and parse back: the printed output prints again the same.
// RUN: passflow-opt %s --mlir-print-debuginfo | filecheck %s
// RUN: passflow-opt %s --mlir-print-debuginfo --mlir-pretty-debuginfo | filecheck --check-prefix=PRETTY %s
// RUN: passflow-opt %s --mlir-print-debuginfo --mlir-print-local-scope | filecheck --check-prefix=LOCAL %s
// RUN: passflow-opt %s --mlir-print-debuginfo -o %t.1
// RUN: passflow-opt %t.1 --mlir-print-debuginfo -o %t.2
// RUN: diff %t.1 %t.2
// RUN: passflow-opt %s --mlir-print-debuginfo -p 'builtin.module(func.func(cse))' --mlir-print-ir-after-all -o /dev/null 2>&1 | filecheck --check-prefix=DUMP %s

#loc0 = loc("foo.mlir":3:4)
func.func @f(%arg0: i32 loc("x.c":1:2), %b: f32) -> i32 {
  %0 = arith.addi %arg0, %arg0 : i32 loc(#loc0)
  %1 = arith.muli %0, %0 : i32 loc("name"("a.c":5:6))
  %2 = arith.subi %1, %0 : i32 loc(callsite("f"("a.c":1:1) at "b.c":2:2))
  %3 = arith.addi %2, %2 : i32 loc(fused["a.c":1:1, "b.c":2:2])
  %4 = arith.addi %3, %3 : i32 loc(fused<"meta">["a.c":1:1])
  %5 = arith.addi %4, %4 : i32 loc(unknown)
  %6 = arith.addi %5, %5 : i32 loc("onlyname")
  cf.br ^bb1(%6 : i32)
^bb1(%c: i32 loc("z.c":7:7)):
  return %c : i32
}

// CHECK:      #loc2 = loc("x.c":1:2)
// CHECK-NEXT: #loc3 = loc("{{.*}}print-debuginfo.mlir":13:41)
// CHECK-NEXT: #loc11 = loc("z.c":7:7)
// CHECK-NEXT: builtin.module {
// CHECK-NEXT:   func.func @f(%arg0: i32 loc("x.c":1:2), %b: f32 loc("{{.*}}print-debuginfo.mlir":13:41)) -> i32 {
// CHECK-NEXT:     %0 = arith.addi %arg0, %arg0 : i32 loc(#loc4)
// CHECK-NEXT:     %1 = arith.muli %0, %0 : i32 loc(#loc13)
// CHECK-NEXT:     %2 = arith.subi %1, %0 : i32 loc(#loc17)
// CHECK-NEXT:     %3 = arith.addi %2, %2 : i32 loc(#loc15)
// CHECK-NEXT:     %4 = arith.addi %3, %3 : i32 loc(#loc16)
// CHECK-NEXT:     %5 = arith.addi %4, %4 : i32 loc(#loc8)
// CHECK-NEXT:     %6 = arith.addi %5, %5 : i32 loc(#loc9)
// CHECK-NEXT:     cf.br ^bb1(%6 : i32) loc(#loc10)
// CHECK-NEXT:   ^bb1(%c: i32 loc("z.c":7:7)):
// CHECK-NEXT:     func.return %c : i32 loc(#loc12)
// CHECK-NEXT:   } loc(#loc1)
// CHECK-NEXT: } loc(#loc)
// CHECK-NEXT: #loc = loc("{{.*}}print-debuginfo.mlir":0:0)
// CHECK-NEXT: #loc1 = loc("{{.*}}print-debuginfo.mlir":13:1)
// CHECK-NEXT: #loc4 = loc("foo.mlir":3:4)
// CHECK-NEXT: #loc5 = loc("a.c":5:6)
// CHECK-NEXT: #loc6 = loc("a.c":1:1)
// CHECK-NEXT: #loc7 = loc("b.c":2:2)
// CHECK-NEXT: #loc8 = loc(unknown)
// CHECK-NEXT: #loc9 = loc("onlyname")
// CHECK-NEXT: #loc10 = loc("{{.*}}print-debuginfo.mlir":21:3)
// CHECK-NEXT: #loc12 = loc("{{.*}}print-debuginfo.mlir":23:3)
// CHECK-NEXT: #loc13 = loc("name"(#loc5))
// CHECK-NEXT: #loc14 = loc("f"(#loc6))
// CHECK-NEXT: #loc15 = loc(fused[#loc6, #loc7])
// CHECK-NEXT: #loc16 = loc(fused<"meta">[#loc6])
// CHECK-NEXT: #loc17 = loc(callsite(#loc14 at #loc7))
// CHECK-NOT:  #loc

// PRETTY:      #loc2 = x.c:1:2
// PRETTY:      %0 = arith.addi %arg0, %arg0 : i32 foo.mlir:3:4
// PRETTY-NEXT: %1 = arith.muli %0, %0 : i32 "name"(#loc5)
// PRETTY-NEXT: %2 = arith.subi %1, %0 : i32 #loc14 at #loc7
// PRETTY-NEXT: %3 = arith.addi %2, %2 : i32 [#loc6, #loc7]
// PRETTY-NEXT: %4 = arith.addi %3, %3 : i32 <"meta">[#loc6]
// PRETTY-NEXT: %5 = arith.addi %4, %4 : i32 [unknown]
// PRETTY:      #loc17 = #loc14 at #loc7

// LOCAL-NOT:  #loc
// LOCAL:      %1 = arith.muli %0, %0 : i32 loc("name"("a.c":5:6))
// LOCAL-NEXT: %2 = arith.subi %1, %0 : i32 loc(callsite("f"("a.c":1:1) at "b.c":2:2))
// LOCAL-NEXT: %3 = arith.addi %2, %2 : i32 loc(fused["a.c":1:1, "b.c":2:2])
// LOCAL-NEXT: %4 = arith.addi %3, %3 : i32 loc(fused<"meta">["a.c":1:1])
// LOCAL-NOT:  #loc

// An IR dump of a nested op prints its locations inline, as mlir-opt.
// DUMP:      // -----// IR Dump After CSE (cse) //----- //
// DUMP-NEXT: func.func @f(%arg0: i32 loc("x.c":1:2), %b: f32 loc("{{.*}}":13:41)) -> i32 {
// DUMP-NEXT:   %0 = arith.addi %arg0, %arg0 : i32 loc("foo.mlir":3:4)
// DUMP:      } loc("{{.*}}print-debuginfo.mlir":13:1)
