// view-op-graph writes mlir-opt 22.1.8's Graphviz text to stderr: clusters for
// ops with regions and blocks, record nodes with ports named after mlir-opt's
// value names, data-flow edges, and control-flow edges on request.
// RUN: passflow-opt %s --view-op-graph -o /dev/null 2>&1 | filecheck %s
// RUN: passflow-opt %s --view-op-graph='print-data-flow-edges=false print-control-flow-edges=true print-attrs=false' -o /dev/null 2>&1 | filecheck %s --check-prefix=CFG

// CHECK:      digraph G {
// CHECK-NEXT:   compound = true;
// CHECK-NEXT:   subgraph cluster_1 {
// CHECK-NEXT:     v2 [label = " ", shape = plain];
// CHECK-NEXT:     label = "builtin.module : ()\l";
// CHECK:            label = "func.func : ()\lfunction_type: (i32) -\> i32\lsym_name: \"f\"\l";
// CHECK:              v9 [label = "<res_arg0> %arg0 i32", shape = Mrecord];
// CHECK-NEXT:         v10 [fillcolor = "0.000000 0.3 0.95", label = "{arith.constant\l\lvalue: 1 : i32\l|{<res_c1_i32> %c1_i32 i32}}", shape = Mrecord, style = filled];
// CHECK-NEXT:         v11 [fillcolor = "0.200000 0.3 0.95", label = "{{[{][{]}}<arg_arg0> %arg0|<arg_c1_i32> %c1_i32}|arith.addi\l\loverflowFlags: #arith.overflow\<none...\l|{<res_0> %0 i32}}", shape = Mrecord, style = filled];
// CHECK-NEXT:         v12 [fillcolor = "0.400000 0.3 0.95", label = "{{[{][{]}}<arg_0> %0}|func.return\l}", shape = Mrecord, style = filled];
// CHECK:        v9:res_arg0:s -> v11:arg_arg0:n[style = solid];
// CHECK-NEXT:   v10:res_c1_i32:s -> v11:arg_c1_i32:n[style = solid];
// CHECK-NEXT:   v11:res_0:s -> v12:arg_0:n[style = solid];
// CHECK-NEXT: }

// CFG:      label = "func.func : ()";
// CFG:      v10 -> v11[style = dashed];
// CFG-NEXT: v11 -> v12[style = dashed];
// CFG-NEXT: }
func.func @f(%a: i32) -> i32 {
  %c = arith.constant 1 : i32
  %r = arith.addi %a, %c : i32
  return %r : i32
}
