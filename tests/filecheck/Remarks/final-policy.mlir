// --remark-policy=final reports at the end of the run the last remark of each
// (location, name, category, kind), ordered by file, line and column (unknown
// locations last), each followed by the remarks linked to it. The report, ids
// included, is the same whichever executor ran the functions.
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-remark))' --remarks-filter='category.*' --remark-policy=final --mlir-disable-threading -o %t.out 2> %t.serial
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-remark))' --remarks-filter='category.*' --remark-policy=final --executor=thread --jobs=3 -o %t.out 2> %t.thread
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-remark))' --remarks-filter='category.*' --remark-policy=final --executor=process --jobs=3 -o %t.out 2> %t.process
// RUN: diff %t.serial %t.thread
// RUN: diff %t.serial %t.process
// RUN: filecheck %s < %t.serial

func.func @late() {
  return loc("z.c":1:1)
} loc("a.c":9:1)
func.func @early() {
  return loc(callsite("a.c":2:7 at "z.c":5:5))
} loc("a.c":2:1)

// CHECK:      a.c:2:1: remark: [Passed] test-remark | Category:category-1-passed | {{.*}} Remark="This is a test passed remark", RemarkId=20,
// CHECK-NEXT: a.c:2:1: remark: [Failure]
// CHECK-NEXT: a.c:2:1: remark: [Analysis] test-remark | Category:category-2-analysis |
// CHECK-NEXT: a.c:2:1: remark: [Passed] test-remark | Category:category-link | RelatedTo=23, Remark="Optimization enabled by analysis", RemarkId=24{{$}}
// CHECK-NEXT: a.c:2:1: remark: [Analysis] test-remark | Category:category-link | Remark="Analysis that enables optimization", RemarkId=23{{$}}
// CHECK-NEXT: a.c:2:7: remark: [Passed] {{.*}} RemarkId=14,
// CHECK-NEXT: a.c:2:7: remark: [Failure]
// CHECK-NEXT: a.c:2:7: remark: [Analysis] test-remark | Category:category-2-analysis |
// CHECK-NEXT: a.c:2:7: remark: [Passed] {{.*}} RelatedTo=17,
// CHECK-NEXT: a.c:2:7: remark: [Analysis] {{.*}} RemarkId=17{{$}}
// CHECK-NEXT: a.c:9:1: remark: [Passed]
// CHECK-NEXT: a.c:9:1: remark: [Failure]
// CHECK-NEXT: a.c:9:1: remark: [Analysis]
// CHECK-NEXT: a.c:9:1: remark: [Passed]
// CHECK-NEXT: a.c:9:1: remark: [Analysis]
// CHECK-NEXT: z.c:1:1: remark: [Passed] {{.*}} RemarkId=2,
// CHECK-NEXT: z.c:1:1: remark: [Failure]
// CHECK-NEXT: z.c:1:1: remark: [Analysis]
// CHECK-NEXT: z.c:1:1: remark: [Passed] {{.*}} RelatedTo=5,
// CHECK-NEXT: z.c:1:1: remark: [Analysis] {{.*}} RemarkId=5{{$}}
// CHECK-NOT:  remark:
