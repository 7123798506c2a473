// --mlir-pass-statistics: the pipeline view mirrors the pass manager tree, the list
// view sums passes of the same name; statistics are sorted by name (test-stats-pass
// declares num-ops2 before num-ops) and values right-aligned.
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-stats-pass),test-stats-pass)' --mlir-pass-statistics --mlir-disable-threading -o %t.out 2>&1 | filecheck --check-prefix=PIPELINE %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-stats-pass),test-stats-pass)' --mlir-pass-statistics --mlir-pass-statistics-display=list --mlir-disable-threading -o %t.out 2>&1 | filecheck --check-prefix=LIST %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-stats-pass,test-pass-failure))' --mlir-pass-statistics 2>&1 | filecheck --check-prefix=FAILED %s

// PIPELINE:      ===-------------------------------------------------------------------------===
// PIPELINE-NEXT:                          ... Pass statistics report ...
// PIPELINE-NEXT: ===-------------------------------------------------------------------------===
// PIPELINE-NEXT: 'func.func' Pipeline
// PIPELINE-NEXT:   TestStatisticPass
// PIPELINE-NEXT:     (S) 4 num-ops  - Number of operations counted
// PIPELINE-NEXT:     (S) 4 num-ops2 - Number of operations counted one more time
// PIPELINE-NEXT: TestStatisticPass
// PIPELINE-NEXT:   (S) 5 num-ops  - Number of operations counted
// PIPELINE-NEXT:   (S) 5 num-ops2 - Number of operations counted one more time
// PIPELINE-EMPTY:

// LIST:      ... Pass statistics report ...
// LIST:      TestStatisticPass
// LIST-NEXT:     (S) 9 num-ops  - Number of operations counted
// LIST-NEXT:     (S) 9 num-ops2 - Number of operations counted one more time

// The report is printed after a failed run too.
// FAILED: ... Pass statistics report ...
// FAILED: TestStatisticPass

func.func @foo() {
  func.return
}

func.func @bar() {
  func.return
}
