// Which remarks exist: per kind, a regex that must match the whole category;
// --remarks-filter applies to every kind. Each remark is a `remark:` diagnostic
// at its op, arguments sorted by key, numbered in the order they were made.
// RUN: passflow-opt %s --test-remark --remarks-filter-missed=a-category-1-missed -o %t.out 2>&1 | filecheck --check-prefix=MISSED %s
// RUN: passflow-opt %s --test-remark --remarks-filter-failed='category-2.*' --remarks-filter-analyse=category-2-analysis -o %t.out 2>&1 | filecheck --check-prefix=TWO %s
// RUN: passflow-opt %s --test-remark --remarks-filter=category -o %t.out 2>&1 | filecheck --check-prefix=NONE --allow-empty %s
// RUN: passflow-opt %s --test-remark --remarks-filter='^category-1.*$' --remarks-filter-missed='a-.*' -o %t.out 2>&1 | filecheck --check-prefix=ALL %s
// An invalid regex turns its kind off, as in mlir-opt.
// RUN: passflow-opt %s --test-remark --remarks-filter-passed='category-1-passed(' -o %t.out 2>&1 | filecheck --check-prefix=NONE --allow-empty %s

"test.op"() : () -> ()

// MISSED:      filters.mlir:[[# @LINE - 2]]:1: remark: [Missed] test-remark | Category:a-category-1-missed | Reason="because we are testing the remark pipeline", Remark="This is a test missed remark", RemarkId=1, Suggestion="try using the remark pipeline feature"
// MISSED-NEXT: "test.op"() : () -> ()
// MISSED-NEXT: ^
// MISSED-NOT:  remark:

// TWO:     remark: [Failure] test-remark | Category:category-2-failed | {{.*}}RemarkId=1,
// TWO:     remark: [Analysis] test-remark | Category:category-2-analysis | Remark="This is a test analysis remark", RemarkId=2{{$}}
// TWO-NOT: remark:

// NONE-NOT: remark:

// ALL:     remark: [Missed] {{.*}} RemarkId=1,
// ALL:     remark: [Passed] {{.*}} Remark="This is a test passed remark (should be dropped)", RemarkId=2,
// ALL:     remark: [Passed] {{.*}} Remark="This is a test passed remark", RemarkId=3,
// ALL-NOT: remark:
