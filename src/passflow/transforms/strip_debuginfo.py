"""`strip-debuginfo`: replace every location with `loc(unknown)` (MLIR's StripDebugInfo)."""

from __future__ import annotations

from xdsl.dialects.builtin import UnknownLoc
from xdsl.ir import Operation

from passflow import ir
from passflow.pass_base import OperationPass

__all__ = ["StripDebugInfo", "strip_debuginfo"]


class StripDebugInfo(OperationPass):
    """Forget where every op and block argument came from.

    Every op nested in the op the pass runs on (itself included) and every
    argument of their blocks gets `loc(unknown)`, as in MLIR. passflow also
    locates an op that wrote no `loc(...)` by where it was parsed; that is
    forgotten too, so a later diagnostic about a stripped op says `<unknown>:0`,
    as mlir-opt's does. Attributes that hold locations are left alone.
    """

    name = "StripDebugInfo"
    argument = "strip-debuginfo"
    summary = "Strip debug info from all operations"
    description = """\
This pass strips the IR of any location information, by replacing all
operation locations with [`unknown`](https://mlir.llvm.org/docs/Dialects/Builtin/#unknownloc).
"""

    def run_on_operation(self) -> None:
        strip_debuginfo(self.get_operation())
        # Locations are no analysis's input: every analysis stays valid.
        self.mark_all_analyses_preserved()


def strip_debuginfo(root: Operation) -> None:
    """Give `root`, every op nested in it and every block argument `loc(unknown)`."""
    unknown = UnknownLoc()
    ops = list(root.walk())
    for op in ops:
        op.location = unknown
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.location = unknown
    ir.forget_parse_positions(ops)
