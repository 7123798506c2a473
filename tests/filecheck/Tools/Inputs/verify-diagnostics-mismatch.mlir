// Checked by ../verify-diagnostics.mlir.

// expected-error @below {{not this message}}
func.func @unexpected() {
  func.return
}

// expected-warning @below {{illegal operation}}
func.func @near_miss() {
  func.return
}

// expected-remark @unknown {{never}}

// MISMATCH: verify-diagnostics-mismatch.mlir:4:1: error: unexpected error: illegal operation
// MISMATCH-NEXT: func.func @unexpected() {
// MISMATCH-NEXT: ^
// MISMATCH: verify-diagnostics-mismatch.mlir:8:4: error: 'error' diagnostic emitted when expecting a 'warning'
// MISMATCH: verify-diagnostics-mismatch.mlir:3:4: error: expected error "not this message" was not produced
// MISMATCH-NEXT: // expected-error @below {{.}}{not this message}{{.}}
// MISMATCH-NEXT: {{^   \^~~~~~~~~~~~~~~~$}}
// MISMATCH: verify-diagnostics-mismatch.mlir:8:4: error: expected warning "illegal operation" was not produced
// MISMATCH: {{^}}error: expected remark "never" was not produced

// ONLY-NOT: unexpected error
// ONLY-NOT: diagnostic emitted when expecting
// ONLY: verify-diagnostics-mismatch.mlir:3:4: error: expected error "not this message" was not produced
// ONLY: {{^}}error: expected remark "never" was not produced
