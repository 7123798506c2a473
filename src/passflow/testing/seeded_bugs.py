"""Seeded bugs, for testing and measuring `passflow-reduce`: modules of
functions of arith ops, one of which holds the op that `test-pass-crash-on-op`
crashes on."""

from __future__ import annotations

__all__ = ["CRASHING_OP", "PIPELINE", "seeded_module"]

CRASHING_OP = "arith.remui"
PIPELINE = (
    "builtin.module(canonicalize,func.func(cse,"
    f"test-pass-crash-on-op{{op={CRASHING_OP}}}),canonicalize)"
)
"""A pipeline that crashes on a seeded module, with passes around the culprit."""


def seeded_module(functions: int, culprit: int, ops: int = 18) -> str:
    """`functions` functions of `ops` chained arith ops; function `culprit`
    has `CRASHING_OP` in the middle of its chain."""
    lines = ["builtin.module {"]
    for index in range(functions):
        lines.append(f"  func.func @f{index}(%a: i32, %b: i32) -> i32 {{")
        lines.append("    %c = arith.constant 3 : i32")
        previous = "%a"
        for position in range(ops):
            name = ("arith.addi", "arith.muli", "arith.subi")[position % 3]
            if index == culprit and position == ops // 2:
                name = CRASHING_OP
            lines.append(f"    %v{position} = {name} {previous}, %c : i32")
            previous = f"%v{position}"
        lines.append(f"    func.return {previous} : i32")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"
