// --mlir-print-ir-tree-dir writes one file per dump, in a directory per op and
// ancestor, with counter-prefixed names (mlir-opt's layout).
// RUN: rm -rf %t
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize),symbol-dce,builtin.module(func.func(cse)),func.func(cse))' --mlir-print-ir-before-all --mlir-print-ir-after-all --mlir-print-ir-tree-dir=%t -o %t.out
// The same file set as mlir-opt 22.1.8 writes for this command line:
// RUN: cd %t && find . -type f | sort > %t.files
// RUN: filecheck --check-prefix=FILES %s < %t.files
// RUN: filecheck %s < %t/builtin_module_no-symbol-name/func_func_foo/0_0_cse.mlir

// FILES:      ./builtin_module_no-symbol-name/1_symbol-dce.mlir
// FILES-NEXT: ./builtin_module_no-symbol-name/2_symbol-dce.mlir
// FILES-NEXT: ./builtin_module_no-symbol-name/builtin_module_inner/func_func_bar/2_0_0_cse.mlir
// FILES-NEXT: ./builtin_module_no-symbol-name/builtin_module_inner/func_func_bar/2_0_1_cse.mlir
// FILES-NEXT: ./builtin_module_no-symbol-name/func_func_foo/0_0_cse.mlir
// FILES-NEXT: ./builtin_module_no-symbol-name/func_func_foo/0_1_cse.mlir
// FILES-NEXT: ./builtin_module_no-symbol-name/func_func_foo/0_2_canonicalize.mlir
// FILES-NEXT: ./builtin_module_no-symbol-name/func_func_foo/0_3_canonicalize.mlir
// FILES-NEXT: ./builtin_module_no-symbol-name/func_func_foo/2_4_cse.mlir
// FILES-NEXT: ./builtin_module_no-symbol-name/func_func_foo/2_5_cse.mlir
// FILES-EMPTY:

// CHECK: // -----// IR Dump Before CSE (cse) //----- //
// CHECK-NEXT: func.func @foo()

func.func @foo() {
  func.return
}

module @inner {
  func.func @bar() {
    func.return
  }
}
