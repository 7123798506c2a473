// A remark file that can't be opened fails the run before any pass runs, with
// LLVM's message; a bad flag value is llvm::cl's error; bitstream is not
// implemented.
// RUN: rm -rf %t
// RUN: not passflow-opt %s --test-remark --remarks-filter='.*' --remark-format=yaml --remarks-output-file=%t/missing/out.yaml -o %t.out 2>&1 | filecheck --check-prefix=OPEN %s
// RUN: not passflow-opt %s --remark-policy=everything 2>&1 | filecheck --check-prefix=POLICY %s
// RUN: not passflow-opt %s --remark-format=text 2>&1 | filecheck --check-prefix=FORMAT %s
// RUN: not passflow-opt %s --remark-format=bitstream -o %t.out 2>&1 | filecheck --check-prefix=BITSTREAM %s

"test.op"() : () -> ()

// OPEN:      <unknown>:0: error: cannot open output file '{{.*}}missing/out.yaml': No such file or directory
// OPEN-NOT:  remark
// POLICY:    passflow-opt: for the --remark-policy option: Cannot find option named 'everything'!
// FORMAT:    passflow-opt: for the --remark-format option: Cannot find option named 'text'!
// BITSTREAM: <unknown>:0: error: the bitstream remark format is not supported by passflow-opt (use --remark-format=yaml)
