// Where mlir-opt's message leaves the user guessing, passflow-opt keeps its first
// line exactly and adds a note saying how to fix it.
// RUN: not passflow-opt %s -p 'func.func(cse)' 2>&1 | filecheck --check-prefix=ANCHOR %s
// RUN: not passflow-opt %s --cse --mlir-pass-pipeline-crash-reproducer=%t.r --mlir-pass-pipeline-local-reproducer --executor=process --jobs=2 2>&1 | filecheck --check-prefix=LOCAL %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(canonicalise))' 2>&1 | filecheck --check-prefix=PASS %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(canonicalize{top-dwn=false}))' 2>&1 | filecheck --check-prefix=OPTION %s
// RUN: not passflow-opt %s --cannonicalize 2>&1 | filecheck --check-prefix=FLAG %s
// RUN: not passflow-opt %inputs/unknown-dialect-op.mlir 2>&1 | filecheck --check-prefix=DIALECT %s
// RUN: passflow-opt %inputs/unknown-dialect-op.mlir --allow-unregistered-dialect | filecheck --check-prefix=ALLOWED %s

// ANCHOR-NOT: <unknown>:0: error:
// ANCHOR:      fix-it-notes.mlir:0:0: error: can't run 'func.func' pass manager on 'builtin.module' op
// ANCHOR-NEXT: fix-it-notes.mlir:0:0: note: to run it on the 'func.func' ops in 'builtin.module', write `builtin.module(func.func(cse))`
// ANCHOR-NOT: error:

// LOCAL:      <unknown>:0: error: Local crash reproduction may not be used without disabling multi-threading first.
// LOCAL-NEXT: <unknown>:0: note: passflow-opt runs nested pipelines in worker processes by default; add --mlir-disable-threading (or --executor=serial, or --jobs=1) to run them on this thread

// PASS:      <unknown>:0: error: MLIR Textual PassPipeline Parser:1:11: error: 'canonicalise' does not refer to a registered pass or pass pipeline
// PASS:      <unknown>:0: note: did you mean 'canonicalize'?

// OPTION:      <unknown>:0: error: <Pass-Options-Parser>: no such option top-dwn
// OPTION:      <unknown>:0: note: did you mean 'top-down' (an option of 'canonicalize')?

// FLAG:      passflow-opt: Unknown command line argument '--cannonicalize'.  Try: 'passflow-opt --help'
// FLAG-NEXT: passflow-opt: Did you mean '--canonicalize'?

// DIALECT:      unknown-dialect-op.mlir:1:10: error: operation being parsed with an unregistered dialect. If this is intended, please use -allow-unregistered-dialect with the MLIR tool used
// DIALECT:      unknown-dialect-op.mlir:1:10: note: passflow-opt accepts ops of dialects it does not know, in generic form (`"dialect.op"(...) : (...) -> (...)`), with --allow-unregistered-dialect

// ALLOWED: "foo.bar"() : () -> ()

func.func @f() {
  func.return
}
