// symbol-dce erases dead `nested` symbols wherever nothing outside the IR can
// see them, as mlir-opt 22.1.8 does (MLIR's test-symbol-dce.mlir, issue 14): in
// the top-level module and every table inside it, but not in a public or nested
// module the pass runs on from inside another. An unregistered op is neither a
// symbol nor a symbol table. The checks hold for mlir-opt's output too.
// RUN: passflow-opt %s -allow-unregistered-dialect -split-input-file -symbol-dce -mlir-pass-statistics -o %t.out 2> %t.stats
// RUN: filecheck %s < %t.out
// RUN: filecheck %s --check-prefix=STATS < %t.stats
// RUN: passflow-opt %s -allow-unregistered-dialect -split-input-file -pass-pipeline='builtin.module(builtin.module(symbol-dce))' -o %t.out
// RUN: filecheck %s --check-prefix=INNER < %t.out

// One report per chunk.
// STATS:      SymbolDCE
// STATS-NEXT:   (S) 5 num-dce'd - Number of symbols DCE'd
// STATS:      SymbolDCE
// STATS-NEXT:   (S) 1 num-dce'd - Number of symbols DCE'd

// CHECK-LABEL: module attributes {test.top}
// INNER-LABEL: module attributes {test.top}
module attributes {test.top} {
  // CHECK-NOT: @dead_private
  // INNER:     func private @dead_private
  func.func private @dead_private()
  // CHECK-NOT: @dead_nested
  // INNER:     func nested @dead_nested
  func.func nested @dead_nested()
  // CHECK:     func nested @live_nested
  // INNER:     func nested @live_nested
  func.func nested @live_nested()
  // CHECK:     func @public_function
  func.func @public_function() {
    "foo.user"() {uses = [@live_nested]} : () -> ()
    return
  }

  // CHECK:       module @public_module
  // CHECK-NOT:     @inner_dead
  // CHECK:         func nested @inner_used
  // INNER:       module @public_module
  // INNER-NEXT:    func nested @inner_dead
  // INNER-NEXT:    func nested @inner_used
  module @public_module {
    func.func nested @inner_dead()
    func.func nested @inner_used() {
      return
    }
  }
  // CHECK:       module @nested_module attributes {sym_visibility = "nested"} {
  // CHECK-NEXT:  }
  // INNER:       module @nested_module attributes {sym_visibility = "nested"} {
  // INNER-NEXT:    func nested @inner_dead
  module @nested_module attributes {sym_visibility = "nested"} {
    func.func nested @inner_dead()
  }
  // A private module is hidden from above: its nested symbols may go.
  // CHECK:       module @private_module attributes {sym_visibility = "private"} {
  // CHECK-NEXT:  }
  // INNER:       module @private_module attributes {sym_visibility = "private"} {
  // INNER-NEXT:  }
  module @private_module attributes {sym_visibility = "private"} {
    func.func nested @inner_dead()
  }
  "foo.user"() {uses = [@public_module::@inner_used, @nested_module, @private_module]} : () -> ()
}

// -----

// CHECK-LABEL: module attributes {test.unregistered}
// CHECK-NEXT:    "foo.sym"() {sym_name = "x", sym_visibility = "private"}
// CHECK-NEXT:    "foo.two"()
// CHECK-NEXT:      func private @in_unregistered
// CHECK-NOT:     @dead
module attributes {test.unregistered} {
  "foo.sym"() {sym_name = "x", sym_visibility = "private"} : () -> ()
  "foo.two"() ({
    func.func private @in_unregistered()
    "foo.end"() : () -> ()
  }, {
    "foo.end"() : () -> ()
  }) : () -> ()
  func.func private @dead()
}
