// --remark-format=yaml writes LLVM's YAML remark documents to
// --remarks-output-file (default mlir-remarks.yaml) and prints no remark.
// RUN: passflow-opt %s --test-remark --remarks-filter='(a-)?category-1.*' --remark-format=yaml --remarks-output-file=%t.yaml -o %t.out 2>&1 | filecheck --allow-empty --check-prefix=QUIET %s
// RUN: filecheck --strict-whitespace --match-full-lines %s < %t.yaml
// The default file name, in the current directory; written even with no remark:
// RUN: rm -rf %t.dir && mkdir %t.dir && cd %t.dir && passflow-opt %s --remark-format=yaml -o %t.out
// RUN: test -f %t.dir/mlir-remarks.yaml && not test -s %t.dir/mlir-remarks.yaml

"test.op"() : () -> () loc("source.c":3:14)

// QUIET-NOT: remark

//      CHECK:--- !Missed
// CHECK-NEXT:Pass:            a-category-1-missed
// CHECK-NEXT:Name:            test-remark
// CHECK-NEXT:DebugLoc:        { File: source.c, Line: 3, Column: 14 }
// CHECK-NEXT:Function:        '<unknown function>'
// CHECK-NEXT:Args:
// CHECK-NEXT:  - RemarkId:        '1'
// CHECK-NEXT:  - Remark:          This is a test missed remark
// CHECK-NEXT:  - Reason:          because we are testing the remark pipeline
// CHECK-NEXT:  - Suggestion:      try using the remark pipeline feature
// CHECK-NEXT:...
// CHECK-NEXT:--- !Passed
// CHECK-NEXT:Pass:            category-1-passed
// CHECK-NEXT:Name:            test-remark
// CHECK-NEXT:DebugLoc:        { File: source.c, Line: 3, Column: 14 }
// CHECK-NEXT:Function:        '<unknown function>'
// CHECK-NEXT:Args:
// CHECK-NEXT:  - RemarkId:        '2'
// CHECK-NEXT:  - Remark:          'This is a test passed remark (should be dropped)'
// CHECK-NEXT:  - Reason:          because we are testing the remark pipeline
// CHECK-NEXT:  - Suggestion:      try using the remark pipeline feature
// CHECK-NEXT:...
// CHECK-NEXT:--- !Passed
// CHECK-NEXT:Pass:            category-1-passed
// CHECK-NEXT:Name:            test-remark
// CHECK-NEXT:DebugLoc:        { File: source.c, Line: 3, Column: 14 }
// CHECK-NEXT:Function:        '<unknown function>'
// CHECK-NEXT:Args:
// CHECK-NEXT:  - RemarkId:        '3'
// CHECK-NEXT:  - Remark:          This is a test passed remark
// CHECK-NEXT:  - Reason:          because we are testing the remark pipeline
// CHECK-NEXT:  - Suggestion:      try using the remark pipeline feature
// CHECK-NEXT:...
//  CHECK-NOT:{{.+}}
