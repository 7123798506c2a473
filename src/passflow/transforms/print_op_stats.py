"""`print-op-stats`: count the ops by name and print the table (MLIR's PrintOpStats)."""

from __future__ import annotations

import sys
from collections import Counter

from passflow.ir import operation_name
from passflow.options import Option
from passflow.pass_base import OperationPass

__all__ = ["PrintOpStats", "format_op_stats", "format_op_stats_json"]


class PrintOpStats(OperationPass):
    """Print how many ops of each name the op holds (itself included) to stderr.

    A quick census of the IR between passes: the text table mlir-opt prints
    (names split at the dialect and aligned), or JSON with `json=true`. It never
    changes the IR, so every analysis is kept.
    """

    name = "PrintOpStats"
    argument = "print-op-stats"
    summary = "Print statistics of operations"

    json = Option(False, help="print the stats as JSON")

    def run_on_operation(self) -> None:
        counts = Counter(operation_name(op).name for op in self.get_operation().walk())
        text = format_op_stats_json(counts) if self.json else format_op_stats(counts)
        sys.stderr.write(text)
        self.mark_all_analyses_preserved()


def _split_name(name: str) -> tuple[str, str]:
    dialect, dot, op = name.partition(".")
    return (dialect, op) if dot else ("", dialect)


def format_op_stats(counts: Counter[str]) -> str:
    """The table: `Operations encountered:`, dashes, one aligned line per op name."""
    names = sorted(counts)
    split = [_split_name(name) for name in names]
    dialect_width = max((len(d) for d, _ in split), default=0)
    op_width = max((len(o) for _, o in split), default=0)
    lines = ["Operations encountered:", "-----------------------"]
    for name, (dialect, op) in zip(names, split, strict=True):
        prefix = (
            dialect.rjust(dialect_width + 2) + "."
            if dialect
            else " " * (dialect_width + 3)
        )
        lines.append(f"{prefix}{op.ljust(op_width)} , {counts[name]}")
    return "\n".join(lines) + "\n"


def format_op_stats_json(counts: Counter[str]) -> str:
    """The JSON form: one `"name" : count` line per op name, sorted."""
    entries = [f'  "{name}" : {counts[name]}' for name in sorted(counts)]
    return "{\n" + ",\n".join(entries) + ("\n" if entries else "") + "}\n"
