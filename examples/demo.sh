#!/bin/sh
# `make demo`: passflow-opt on examples/, then a pass written in Python.
set -eu
BIN=${BIN:-.venv/bin}
out=$(mktemp)
work=$(mktemp -d)
trap 'rm -rf "$out" "$work"' EXIT

echo "== passflow-opt: inline calls, canonicalize+cse every function, drop dead symbols"
"$BIN/passflow-opt" examples/functions.mlir --dump-pass-pipeline \
  --pass-pipeline='builtin.module(inline,func.func(canonicalize,cse),symbol-dce)'

echo
echo "== the same run, with mlir-opt's statistics and timing reports"
"$BIN/passflow-opt" examples/functions.mlir -o "$out" --mlir-pass-statistics --mlir-timing \
  --pass-pipeline='builtin.module(inline,func.func(canonicalize,cse),symbol-dce)'

echo
echo "== a pipeline error is located with a caret, as in mlir-opt, and a note says how to fix it"
if "$BIN/passflow-opt" examples/functions.mlir --pass-pipeline='builtin.module(func.func(cse),canonicalise)'; then
  exit 1
fi

echo
echo "== a pass written in Python, using a cached analysis (fails on purpose on @square_plus_one)"
status=0
"$BIN/python" examples/first_pass.py examples/functions.mlir || status=$?
[ "$status" -eq 1 ]
echo "(exit status 1, as expected)"

echo
echo "== a crash, reduced: passflow-opt writes a reproducer, passflow-reduce shrinks it"
if "$BIN/passflow-opt" examples/crashing.mlir -o "$out" \
  --pass-pipeline='builtin.module(canonicalize,func.func(cse,test-pass-crash-on-op{op=arith.remui}))' \
  --mlir-pass-pipeline-crash-reproducer="$work/crash.mlir" 2>/dev/null; then
  exit 1
fi
"$BIN/passflow-reduce" "$work/crash.mlir" -o "$work/reduced.mlir"
cat "$work/reduced.mlir"
