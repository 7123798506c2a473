// Passes and dialects from a Python file or an IRDL file, as mlir-opt's
// --load-pass-plugin, --load-dialect-plugin and --irdl-file; --show-dialects.
// RUN: passflow-opt %s --load-pass-plugin=%S/../../../examples/plugin_count_adds.py -p 'builtin.module(func.func(count-adds))' --allow-unregistered-dialect --mlir-pass-statistics --mlir-disable-threading -o /dev/null 2>&1 | filecheck --check-prefix=PASS %s
// RUN: passflow-opt %s --load-pass-plugin %S/../../../examples/plugin_count_adds.py --count-adds --allow-unregistered-dialect --mlir-pass-statistics --mlir-disable-threading -o /dev/null 2>&1 | filecheck --check-prefix=PASS %s
// RUN: passflow-opt --load-pass-plugin=%S/../../../examples/plugin_count_adds.py --list-passes | filecheck --check-prefix=LIST %s
// RUN: not passflow-opt %s --load-pass-plugin=%S/Inputs/missing.py 2>&1 | filecheck --check-prefix=MISSING %s
// RUN: passflow-opt %s --load-dialect-plugin=%S/Inputs/twice_dialect.py --irdl-file=%S/Inputs/cplx.irdl.mlir | filecheck --check-prefix=DIALECTS %s
// RUN: not passflow-opt %s 2>&1 | filecheck --check-prefix=UNKNOWN %s
// RUN: passflow-opt --load-dialect-plugin=%S/Inputs/twice_dialect.py --irdl-file=%S/Inputs/cplx.irdl.mlir --show-dialects | filecheck --check-prefix=SHOW %s

// PASS:      'func.func' Pipeline
// PASS-NEXT:   CountAdds
// PASS-NEXT:     (S) 2 adds - Number of arith.addi ops

// LIST: Passes and pipelines of plugin {{.*}}plugin_count_adds.py:
// LIST-NEXT:   count-adds {{ +}}Count the arith.addi ops of each function
// LIST-EMPTY:
// LIST-NEXT: xDSL's passes:

// MISSING: passflow-opt: Failed to load passes from '{{.*}}missing.py': FileNotFoundError: no such file
// MISSING-NEXT: note: a plugin is a Python file (FILE.py) or an importable module

// DIALECTS: "twice.twice"
// DIALECTS: "cplx.norm"

// UNKNOWN: plugins.mlir:33:21: error: operation being parsed with an unregistered dialect

// SHOW: Available Dialects: {{.*}},cplx,{{.*}},twice,{{.*}}

func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %0, %a : i32
  %2 = "twice.twice"(%1) : (i32) -> i32
  %3 = "cplx.norm"(%2) : (i32) -> i32
  return %3 : i32
}
