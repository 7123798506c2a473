// Structural errors of the textual pipeline grammar, located with a caret in the
// text inside the anchor, as mlir-opt reports them.
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-function-pass)' 2>&1 | filecheck --check-prefix=UNBALANCED %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-function-pass)))' 2>&1 | filecheck --check-prefix=EXTRA %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(builtin.module()()' 2>&1 | filecheck --check-prefix=COMMA %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(,)' 2>&1 | filecheck --check-prefix=EMPTY %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(no-such-pass)' 2>&1 | filecheck --check-prefix=UNKNOWN %s
// RUN: not passflow-opt %s -pass-pipeline='test-module-pass' 2>&1 | filecheck --check-prefix=ANCHOR %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(test-dynamic-pipeline{op-name=x)' 2>&1 | filecheck --check-prefix=BRACE %s
// RUN: not passflow-opt %s -pass-pipeline='builtin.module(func.func(test-module-pass))' 2>&1 | filecheck --check-prefix=NEST %s

// UNBALANCED: <unknown>:0: error: MLIR Textual PassPipeline Parser:1:11: error: encountered unbalanced parentheses while parsing pipeline
// UNBALANCED-NEXT: func.func(test-function-pass
// UNBALANCED-NEXT: {{^}}          ^

// EXTRA: <unknown>:0: error: MLIR Textual PassPipeline Parser:1:30: error: encountered extra closing ')' creating unbalanced parentheses while parsing pipeline
// EXTRA-NEXT: func.func(test-function-pass))
// EXTRA-NEXT: {{^}}                             ^

// COMMA: <unknown>:0: error: MLIR Textual PassPipeline Parser:1:17: error: expected ',' after parsing pipeline
// COMMA-NEXT: builtin.module()(
// COMMA-NEXT: {{^}}                ^

// EMPTY: <unknown>:0: error: MLIR Textual PassPipeline Parser:1:1: error: '' does not refer to a registered pass or pass pipeline

// UNKNOWN: <unknown>:0: error: MLIR Textual PassPipeline Parser:1:1: error: 'no-such-pass' does not refer to a registered pass or pass pipeline
// UNKNOWN-NEXT: no-such-pass
// UNKNOWN-NEXT: {{^}}^

// ANCHOR: <unknown>:0: error: expected pass pipeline to be wrapped with the anchor operation type, e.g. 'builtin.module(...)'

// BRACE: <unknown>:0: error: MLIR Textual PassPipeline Parser:1:22: error: missing closing '}' while processing pass options

// NEST: <unknown>:0: error: Can't add pass 'TestModulePass' restricted to 'builtin.module' on a PassManager intended to run on 'func.func', did you intend to nest?
// NEST-NEXT: failed to add `test-module-pass` with options ``
// NEST-NEXT: failed to add `func.func` with options `` to inner pipeline

func.func @foo() {
  func.return
}
