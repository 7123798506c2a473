// --profile-actions-to writes a begin and an end event per pass execution, in
// mlir-opt's Chrome trace layout (one event per line, a JSON array once closed).
// RUN: passflow-opt %s --profile-actions-to=%t.json -p 'builtin.module(func.func(test-stats-pass),test-module-pass)' -o %t.out
// RUN: filecheck %s < %t.json
// RUN: python -c "import json, sys; events = json.load(open(sys.argv[1])); assert [e['ph'] for e in events] == list('BBEBEEBE'), events" %t.json
// To stdout, with the log on the same stream (as mlir-opt interleaves them):
// RUN: passflow-opt %s --profile-actions-to=- --log-actions-to=- -test-module-pass -o %t.out | filecheck --check-prefix=BOTH %s

// CHECK: [{"name": "pass-execution", "cat": "PERF", "ph": "B", "pid": 0, "tid": {{[0-9]+}}, "ts": {{[0-9]+}}, "args": {"desc": "`pass-execution` running `mlir::detail::OpToOpPassAdaptor` on Operation `builtin.module`"}},
// CHECK-NEXT: {"name": "pass-execution", "cat": "PERF", "ph": "B", "pid": 0, "tid": {{[0-9]+}}, "ts": {{[0-9]+}}, "args": {"desc": "`pass-execution` running `TestStatisticPass` on Operation `func.func`"}},
// CHECK-NEXT: {"name": "pass-execution", "cat": "PERF", "ph": "E", "pid": 0, "tid": {{[0-9]+}}, "ts": {{[0-9]+}}},
// CHECK-NEXT: {"name": "pass-execution", "cat": "PERF", "ph": "B", "pid": 0, "tid": {{[0-9]+}}, "ts": {{[0-9]+}}, "args": {"desc": "`pass-execution` running `TestStatisticPass` on Operation `func.func`"}},
// CHECK-NEXT: {"name": "pass-execution", "cat": "PERF", "ph": "E", "pid": 0, "tid": {{[0-9]+}}, "ts": {{[0-9]+}}},
// CHECK-NEXT: {"name": "pass-execution", "cat": "PERF", "ph": "E", "pid": 0, "tid": {{[0-9]+}}, "ts": {{[0-9]+}}},
// CHECK-NEXT: {"name": "pass-execution", "cat": "PERF", "ph": "B", "pid": 0, "tid": {{[0-9]+}}, "ts": {{[0-9]+}}, "args": {"desc": "`pass-execution` running `TestModulePass` on Operation `builtin.module`"}},
// CHECK-NEXT: {"name": "pass-execution", "cat": "PERF", "ph": "E", "pid": 0, "tid": {{[0-9]+}}, "ts": {{[0-9]+}}}]{{$}}

// BOTH: {{^\[\[}}thread {{.*}}] begins (no breakpoint) Action `pass-execution` running `TestModulePass` on Operation `builtin.module` (module {...})`
// BOTH-NEXT: {{^}}{"name": "pass-execution", "cat": "PERF", "ph": "B", {{.*}}}[thread {{.*}}] completed `pass-execution`
// BOTH-NEXT: {{^}},{{$}}
// BOTH-NEXT: {{^}}{"name": "pass-execution", "cat": "PERF", "ph": "E", {{.*}}}]{{$}}

func.func @a() {
  func.return
}

func.func @b() {
  func.return
}
