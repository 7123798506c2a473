"""Unregistered ops have unknown effects in every pass that removes, moves or
folds ops, as in MLIR: none of them is erased when its results are unused,
hoisted out of a loop, taken for a constant, sunk or merged (issue 40: xDSL's
`RehoistConstInLoops` took `"test.value"() {value = 4}` for a constant and hoisted
it, and canonicalize then erased the empty loop)."""

from __future__ import annotations

import pytest
from transforms_support import run_pipeline

from passflow import ir, verifier

INPUT = """\
func.func @f(%a: i32, %lb: index, %ub: index, %s: index) -> i32 {
  %x = "test.unknown"(%a) : (i32) -> i32
  %u = "test.unknown"(%a) : (i32) -> i32
  scf.for %i = %lb to %ub step %s {
    %y = "test.value"() {value = 4 : i32} : () -> i32
    "test.sink"(%y) : (i32) -> ()
  }
  %z = "test.k"() {value = 5 : index} : () -> index
  return %a : i32
}
"""

PIPELINES = ["builtin.module(inline)", "builtin.module(sccp)"] + [
    f"builtin.module(func.func({pass_}))"
    for pass_ in [
        "canonicalize",
        "canonicalize{region-simplify=aggressive}",
        "cse",
        "sccp",
        "remove-dead-values",
        "loop-invariant-code-motion",
        "control-flow-sink",
        "mem2reg",
        "sroa",
        "topological-sort",
        "composite-fixed-point-pass{pipeline=canonicalize,cse}",
    ]
]


def names_in(op: ir.Operation) -> list[str]:
    return [ir.operation_name(nested).name for nested in op.walk() if nested is not op]


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_unregistered_ops_stay_where_they_are(pipeline: str) -> None:
    module = run_pipeline(INPUT, pipeline)
    assert verifier.verify(module) is None
    unknown = [name for name in names_in(module) if name.startswith("test.")]
    assert sorted(unknown) == [
        "test.k",
        "test.sink",
        "test.unknown",
        "test.unknown",
        "test.value",
    ]
    (loop,) = [op for op in module.walk() if op.name == "scf.for"]
    assert names_in(loop) == ["test.value", "test.sink", "scf.yield"]
