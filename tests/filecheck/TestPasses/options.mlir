// test-options-pass and test-options-super-pass: enum options spelled by their
// cl::values names, `ListOption<int>` errors that say "integer", and a list whose
// elements are option structs (braced or not; each element prints all its options,
// and forgets that its text said `list={}`).
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-options-pass{enum=two list=1,2 string-list={""}}))' --dump-pass-pipeline -o %t.out 2>&1 | filecheck --check-prefix=ENUM %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-options-super-pass{list={{enum=one list={1} string=foo },{enum=two list={} string={a b}}}}))' --dump-pass-pipeline -o %t.out 2>&1 | filecheck --check-prefix=SUPER %s
// RUN: passflow-opt %s -p 'builtin.module(func.func(test-options-super-pass{list={enum=one list={1} string=foo },{enum=two list={} string={a b}}}))' --dump-pass-pipeline -o %t.out 2>&1 | filecheck --check-prefix=SUPER %s
// RUN: passflow-opt %s '--test-options-super-pass-pipeline=super-list={{enum=one list=1 string="foo"},{enum=two string={a b}}}' --dump-pass-pipeline -o %t.out 2>&1 | filecheck --check-prefix=SUPER %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-options-pass{enum=three}))' 2>&1 | filecheck --check-prefix=BAD-ENUM %s
// RUN: not passflow-opt %s --test-options-pass=enum 2>&1 | filecheck --check-prefix=BARE-ENUM %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-options-pass{list=1,2147483648}))' 2>&1 | filecheck --check-prefix=BAD-INT %s
// RUN: not passflow-opt %s -p 'builtin.module(func.func(test-options-super-pass{list={enum=one list=x}}))' 2>&1 | filecheck --check-prefix=BAD-ELEMENT %s

// ENUM:      test-options-pass{enum=two list={1,2} string= string-list={}}

// SUPER{LITERAL}: test-options-super-pass{list={{enum=one list={1} string=foo },{enum=two  string={a b} }}}

// BAD-ENUM:      passflow-opt: for the --enum option: Cannot find option named 'three'!
// BAD-ENUM-NEXT: <unknown>:0: error: {{$}}
// BAD-ENUM-NEXT: failed to add `test-options-pass` with options `enum=three`

// BARE-ENUM: passflow-opt: for the --enum option: requires a value!

// BAD-INT: passflow-opt: for the --list option: '2147483648' value invalid for integer argument!

// BAD-ELEMENT:      passflow-opt: for the --list option: 'x' value invalid for integer argument!
// BAD-ELEMENT-NEXT: <unknown>:0: error: {{$}}
// BAD-ELEMENT-NEXT: failed to add `test-options-super-pass` with options `list={enum=one list=x}`

func.func @f() {
  func.return
}
