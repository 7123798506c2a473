// Input xDSL rejects is an error in mlir-opt's shape, never a traceback: one
// `file:line:col: error: message` line, the source line, a caret, exit status 1.
// RUN: not passflow-opt %s --split-input-file -o %t.out 2>&1 | filecheck --strict-whitespace --match-full-lines %s
// The same errors, each on the line its expected-error names:
// RUN: passflow-opt %s --split-input-file --verify-diagnostics -o %t.out

// A verifier xDSL runs while parsing an op (valid MLIR: xDSL's arith.extsi
// takes no vectors of i1) is reported at the op, as mlir-opt reports a
// verifier's error.
// CHECK:{{.*}}parse-errors.mlir:[[# @LINE + 4]]:3: error: 'arith.extsi' op vector<4xi1> should be of base attribute integer_type
// CHECK-NEXT:  %0 = arith.extsi %a : vector<4xi1> to vector<4xi64>
// CHECK-NEXT:  ^
func.func @extsi(%a: vector<4xi1>) -> vector<4xi64> {
  %0 = arith.extsi %a : vector<4xi1> to vector<4xi64>
  // expected-error @above {{'arith.extsi' op vector<4xi1> should be of base attribute integer_type}}
  func.return %0 : vector<4xi64>
}

// -----

// xDSL's two-line verifier messages are one line.
// CHECK:{{.*}}parse-errors.mlir:[[# @LINE + 4]]:8: error: 'arith.addi' op operand 'rhs' at position 1 does not verify: attribute i32 expected from variable 'T', but got i64
// CHECK-NEXT:  %r = "arith.addi"(%a, %b) : (i32, i64) -> i32
// CHECK-NEXT:       ^
func.func @two_lines(%a: i32, %b: i64) -> i32 {
  %r = "arith.addi"(%a, %b) : (i32, i64) -> i32
  // expected-error @above {{operand 'rhs' at position 1 does not verify: attribute i32 expected}}
  func.return %r : i32
}

// -----

// An attribute its verifier rejects is reported at the attribute (xDSL 0.75
// rejects this one as it parses it, at the parameter: tests/test_parse_errors.py
// checks each version's column).
// CHECK:{{.*}}parse-errors.mlir:[[# @LINE + 4]]:{{25|36}}: error: Invalid register name foo for register type x86.reg64.
// CHECK-NEXT:"test.op"() {register = !x86.reg64<foo>} : () -> ()
// CHECK-NEXT:{{( {24}| {35})}}^
// expected-error @below {{Invalid register name foo}}
"test.op"() {register = !x86.reg64<foo>} : () -> ()

// -----

// A block used and never defined, at its first use.
// CHECK:{{.*}}parse-errors.mlir:[[# @LINE + 5]]:9: error: reference to an undefined block
// CHECK-NEXT:  cf.br ^missing
// CHECK-NEXT:        ^
func.func @undefined_block() {
  // expected-error @below {{reference to an undefined block}}
  cf.br ^missing
}

// -----

// A custom op xDSL does not know, at its name.
// CHECK:{{.*}}parse-errors.mlir:[[# @LINE + 5]]:8: error: custom op 'arith.frobnicate' is unknown
// CHECK-NEXT:  %0 = arith.frobnicate %a : i32
// CHECK-NEXT:       ^
func.func @unknown(%a: i32) {
  // expected-error @below {{custom op 'arith.frobnicate' is unknown}}
  %0 = arith.frobnicate %a : i32
  func.return
}

// -----

// A missing token is expected right after the last token, not at the next
// line's first token (mlir-opt's wrong-token position, comments skipped).
// CHECK:{{.*}}parse-errors.mlir:[[# @LINE + 5]]:20: error: Expected ':'function type signature expected
// CHECK-NEXT:  %0 = "test.foo"()  // the type is missing
// CHECK-NEXT:                   ^
func.func @missing_type() {
  // expected-error @below {{Expected ':'}}
  %0 = "test.foo"()  // the type is missing

  func.return
}

// -----

// The end of the input, too.
// CHECK:{{.*}}parse-errors.mlir:[[# @LINE + 5]]:30: error: expected operation name in quotes
// CHECK-NEXT:  %0 = arith.constant 1 : i32
// CHECK-NEXT:                             ^
func.func @unterminated() {
  // expected-error @below {{expected operation name in quotes}}
  %0 = arith.constant 1 : i32

// -----

// An unterminated string fails at once (xDSL's pattern backtracks for ages).
// CHECK:{{.*}}parse-errors.mlir:[[# @LINE + 2]]:1: error: expected '"' in string literal
// expected-error @below {{expected '"' in string literal}}
"test.op  a string that goes on and on and on and on and on and on and on and on

// -----

// CHECK-NOT: error
// CHECK-NOT: Traceback
func.func @fine() {
  func.return
}
