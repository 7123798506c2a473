// topological-sort orders the graph regions of registered ops (builtin.module
// here) so that definitions come first; it leaves SSA regions (func.func) and
// the regions of unregistered ops alone. Ops on a cycle keep their order and go
// last. The order checked is mlir-opt 22.1.8's on this file.
// RUN: passflow-opt %s -allow-unregistered-dialect -topological-sort | filecheck %s

// CHECK-LABEL: "t.top"
// CHECK-NEXT: %[[B:.*]] = "t.b"() : () -> i32
// CHECK-NEXT: "t.unregistered_region"() ({
// CHECK-NEXT:   %[[E:.*]] = "t.e"(%[[F:.*]]) : (i32) -> i32
// CHECK-NEXT:   %[[F]] = "t.f"(%[[B]]) : (i32) -> i32
// CHECK-NEXT: }) : () -> ()
// CHECK-NEXT: %[[G:.*]] = "t.g"() : () -> i32
// CHECK-NEXT: module @inner {
// CHECK-NEXT:   %[[X:.*]] = "t.x"() : () -> i32
// CHECK-NEXT:   %[[Y:.*]] = "t.y"(%[[X]]) : (i32) -> i32
// CHECK-NEXT:   %{{.*}} = scf.execute_region -> {{\(?}}i32{{\)?}} {
// CHECK-NEXT:     %[[P:.*]] = "t.p"(%[[Y]]) : (i32) -> i32
// CHECK-NEXT:     "t.use"(%[[P]]) : (i32) -> ()
// CHECK-NEXT:     scf.yield %[[P]] : i32
// CHECK-NEXT:   }
// CHECK-NEXT: }
// CHECK-NEXT: %[[A:.*]] = "t.a"(%[[B]]) : (i32) -> i32
// CHECK-NEXT: "t.nest"() ({
// CHECK-NEXT:   "t.use"(%[[G]]) : (i32) -> ()
// CHECK-NEXT: }) : () -> ()
// CHECK-NEXT: %[[C:.*]] = "t.c"(%[[D:.*]], %[[A]]) : (i32, i32) -> i32
// CHECK-NEXT: %[[D]] = "t.d"(%[[C]]) : (i32) -> i32
"t.top"() : () -> ()
%0 = "t.a"(%1) : (i32) -> i32
%1 = "t.b"() : () -> i32
%2 = "t.c"(%3, %0) : (i32, i32) -> i32
%3 = "t.d"(%2) : (i32) -> i32
"t.unregistered_region"() ({
  %5 = "t.e"(%4) : (i32) -> i32
  %4 = "t.f"(%1) : (i32) -> i32
}) : () -> ()
"t.nest"() ({
  "t.use"(%6) : (i32) -> ()
}) : () -> ()
%6 = "t.g"() : () -> i32

// A nested module is sorted too (above): the op holding a use of a value
// defined later moves after it, its body (an SSA region) unchanged; the module
// itself uses nothing of the outer one, so it is placed in the first scan.
builtin.module @inner {
  %r = scf.execute_region -> (i32) {
    %p = "t.p"(%y) : (i32) -> i32
    "t.use"(%p) : (i32) -> ()
    scf.yield %p : i32
  }
  %y = "t.y"(%x) : (i32) -> i32
  %x = "t.x"() : () -> i32
}
