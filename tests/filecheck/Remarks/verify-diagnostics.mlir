// Remarks are diagnostics: --verify-diagnostics checks them, also those the
// final policy reports after a pass failed. Each input chunk has its own remark
// engine, so ids restart: the dropped remark is 1 in each chunk.
// RUN: passflow-opt %s --split-input-file --verify-diagnostics --remarks-filter-passed=category-1-passed --remark-policy=final -p 'builtin.module(test-remark,test-pass-failure)' -o %t.out

// expected-remark@below {{[Passed] test-remark | Category:category-1-passed | Reason="because we are testing the remark pipeline", Remark="This is a test passed remark", RemarkId=2, Suggestion="try using the remark pipeline feature"}}
"test.op"() : () -> ()

// -----

module {
  // expected-remark-re@below {{{{^}}[Passed] {{.*}} Remark="This is a test passed remark", RemarkId=2,}}
  "test.op"() : () -> ()
}
