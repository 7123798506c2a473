// A chunk that fails to parse or run hides no other chunk: every chunk's output is
// printed, separated by the output marker, and the exit status is 1.
// RUN: not passflow-opt %s --split-input-file --mlir-disable-threading 2>%t.err | filecheck %s
// RUN: filecheck --check-prefix=ERR %s < %t.err
// With an output file, a failure leaves no file, as in mlir-opt.
// RUN: rm -f %t.out && not passflow-opt %s --split-input-file -o %t.out 2>/dev/null
// RUN: not test -e %t.out
// Custom markers in and out; `--split-input-file input` still names the input.
// RUN: not passflow-opt '--split-input-file=// -----' %s --output-split-marker='// ==' 2>/dev/null | filecheck --check-prefix=MARKER %s

// CHECK: func.func @first
// CHECK-NEXT: func.return
// CHECK: // -----
// CHECK-NEXT: // -----
// CHECK-NEXT: builtin.module {
// CHECK-NEXT: func.func @third

// ERR: split-input-file.mlir:[[# @LINE + 8]]:{{[0-9]+}}: error: operation being parsed with an unregistered dialect

// MARKER: // ==
// MARKER-NEXT: // ==
func.func @first() {
  func.return
}
// -----
func.func @second() { %0 = "bad"() : () -> i32 }
// -----
func.func @third() {
  func.return
}
