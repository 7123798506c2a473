"""An xDSL project's `-opt` tool, written as xDSL projects write theirs: a
subclass of xdsl-opt's `xDSLOptMain` that adds a dialect and passes.

passflow-opt takes its registrations as they are:
`passflow-opt --load-xdsl-opt-main=examples/xdsl_project_opt.py:ToyOptMain`
(or `module:ToyOptMain` for an installed module). Run as a script, it is the
project's own tool on xdsl-opt's driver: `python examples/xdsl_project_opt.py`.
"""

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.xdsl_opt_main import xDSLOptMain


@irdl_op_definition
class DoubleOp(IRDLOperation):
    """`toy.double %x : i32`: twice its operand."""

    name = "toy.double"
    value = operand_def(builtin.i32)
    result = result_def(builtin.i32)


@irdl_op_definition
class QuadOp(IRDLOperation):
    name = "toy.quad"
    value = operand_def(builtin.i32)
    result = result_def(builtin.i32)


Toy = Dialect("toy", [DoubleOp, QuadOp])


class DoubleDouble(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DoubleOp, rewriter: PatternRewriter) -> None:
        inner = op.value.owner
        if isinstance(inner, DoubleOp):
            rewriter.replace(
                op, QuadOp.create(operands=[inner.value], result_types=[builtin.i32])
            )


@dataclass(frozen=True)
class FuseDoublesPass(ModulePass):
    """Fuse `toy.double(toy.double(x))` into `toy.quad(x)`."""

    name: ClassVar[str] = "toy-fuse-doubles"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(DoubleDouble()).rewrite_module(op)


class ToyOptMain(xDSLOptMain):
    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        self.ctx.load_dialect(Toy)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        self.register_pass(FuseDoublesPass.name, lambda: FuseDoublesPass)


if __name__ == "__main__":
    ToyOptMain().run()
