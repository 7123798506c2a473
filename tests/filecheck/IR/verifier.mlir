// MLIR's verifier after parsing (mlir/lib/IR/Verifier.cpp): dominance of every
// use with MLIR's notes, uses across an op isolated from above, entry blocks
// without predecessors, terminators, integer attributes in range (issue 40).
// Each error and note is mlir-opt 22.1.8's, but for the index constant, which
// mlir-opt's parser already refuses.
// RUN: passflow-opt %s --split-input-file --verify-diagnostics --allow-unregistered-dialect
// Valid IR that xDSL's verifier also accepts stays valid: graph regions,
// unreachable blocks, uses in nested regions.
// RUN: passflow-opt %S/Inputs/verifier-valid.mlir --allow-unregistered-dialect | filecheck %S/Inputs/verifier-valid.mlir

func.func @same_block() -> i32 {
  // expected-error@+1 {{operand #0 does not dominate this use}}
  %y = arith.addi %x, %x : i32
  // expected-note@+1 {{operand defined here (op in the same block)}}
  %x = arith.constant 1 : i32
  return %y : i32
}

// -----

func.func @same_region(%c: i1) -> i32 {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  // expected-note@+1 {{operand defined here (op in the same region)}}
  %x = arith.constant 1 : i32
  cf.br ^bb2
^bb2:
  // expected-error@+1 {{operand #0 does not dominate this use}}
  return %x : i32
}

// -----

func.func @parent_region() {
  "test.region"() ({
    // expected-error@+1 {{operand #0 does not dominate this use}}
    "test.use"(%x) : (i32) -> ()
    "test.end"() : () -> ()
  }) : () -> ()
  // expected-note@+1 {{operand defined here (op in a parent region)}}
  %x = arith.constant 1 : i32
  return
}

// -----

// expected-note@+1 {{operand defined as a block argument (block #1 in the same region)}}
func.func @block_argument(%c: i1) {
  // expected-error@+1 {{operand #0 does not dominate this use}}
  "test.use"(%a) : (i32) -> ()
  cf.br ^bb1(%c : i1)
^bb1(%a: i32):
  return
}

// -----

func.func @own_result() {
  // expected-error@+2 {{operand #0 does not dominate this use}}
  // expected-note@+1 {{operand defined here (op in the same block)}}
  %x = "test.self"(%x) : (i32) -> i32
  return
}

// -----

func.func @isolated(%a: i32) {
  "test.holder"() ({
    // expected-note@+1 {{required by region isolation constraints}}
    func.func @inner() {
      // expected-error@+1 {{'test.use' op using value defined outside the region}}
      "test.use"(%a) : (i32) -> ()
      return
    }
    "test.end"() : () -> ()
  }) : () -> ()
  return
}

// -----

// expected-error@+1 {{entry block of region may not have predecessors}}
func.func @entry_predecessor() {
^bb0:
  cf.br ^bb0
}

// -----

func.func @no_terminator(%c: i1) {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  // expected-error@+1 {{block with no terminator, has %x = arith.constant 1 : i32}}
  %x = arith.constant 1 : i32
^bb2:
  return
}

// -----

func.func @empty_block() {
  // expected-error@+1 {{empty block: expect at least a terminator}}
  "test.region"() ({
  ^bb0:
  ^bb1:
    "test.end"() : () -> ()
  }) : () -> ()
  return
}

// -----

func.func @successors_not_last() {
  // expected-error@+1 {{operation with block successors must terminate its parent block}}
  cf.br ^bb1
  %x = arith.constant 1 : i32
^bb1:
  return
}

// -----

func.func @index_out_of_range() -> index {
  // expected-error@+2 {{'arith.constant' op integer constant out of range for attribute 'value': 9223372036854775808 : index}}
  // expected-note@+1 {{'index' holds -9223372036854775808 to 9223372036854775807 in MLIR}}
  %a = arith.constant 9223372036854775808 : index
  return %a : index
}
