// --mlir-timing reports: the tree (nested pipelines, (A) analyses, the tool's
// Parser/Output timers, Rest, Total), the list (sorted by time) and JSON.
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize),symbol-dce)' --mlir-timing --mlir-disable-threading -o %t.out 2>&1 | filecheck --check-prefix=TREE %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse,canonicalize),symbol-dce)' --mlir-timing --mlir-timing-display=list --mlir-disable-threading -o %t.out 2>&1 | filecheck --check-prefix=LIST %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(cse),builtin.module(cse))' --mlir-timing --mlir-output-format=json --mlir-disable-threading -o %t.out 2>%t.json
// RUN: python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print([e['name'] for e in d])" %t.json | filecheck --check-prefix=JSON %s
// RUN: not passflow-opt %s --mlir-timing --mlir-timing-display=bogus 2>&1 | filecheck --check-prefix=BAD %s

// TREE:      ===-------------------------------------------------------------------------===
// TREE-NEXT:                          ... Execution time report ...
// TREE-NEXT: ===-------------------------------------------------------------------------===
// TREE-NEXT:   Total Execution Time: {{[0-9]+\.[0-9][0-9][0-9][0-9]}} seconds
// TREE-EMPTY:
// TREE-NEXT:   ----Wall Time----  ----Name----
// TREE-NEXT: {{^    [0-9.]+ \( *[0-9.]+%\)  Parser$}}
// TREE-NEXT: {{^    [0-9.]+ \( *[0-9.]+%\)  'func.func' Pipeline$}}
// TREE-NEXT: {{^    [0-9.]+ \( *[0-9.]+%\)    CSE$}}
// TREE-NEXT: {{^    [0-9.]+ \( *[0-9.]+%\)      \(A\) DominanceInfo$}}
// TREE-NEXT: {{^    [0-9.]+ \( *[0-9.]+%\)    Canonicalizer$}}
// TREE-NEXT: {{^    [0-9.]+ \( *[0-9.]+%\)  SymbolDCE$}}
// TREE-NEXT: {{^    [0-9.]+ \( *[0-9.]+%\)  Output$}}
// TREE-NEXT: {{^ +-?[0-9.]+ \( *-?[0-9.]+%\)  Rest$}}
// TREE-NEXT: {{^    [0-9.]+ \(100.0%\)  Total$}}

// LIST:   ----Wall Time----  ----Name----
// LIST-NOT: root
// LIST-DAG: Parser
// LIST-DAG: 'func.func' Pipeline
// LIST-DAG: CSE
// LIST-DAG: (A) DominanceInfo
// LIST-DAG: Canonicalizer
// LIST-DAG: SymbolDCE
// LIST: Rest
// LIST-NEXT: Total

// JSON: ['Parser', "Pipeline Collection : ['builtin.module', 'func.func']", 'Output', 'Rest', 'Total']

// BAD: passflow-opt: for the --mlir-timing-display option: Cannot find option named 'bogus'!

func.func @foo() {
  func.return
}
