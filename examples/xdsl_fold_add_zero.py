"""An xDSL pass as xDSL users write it, used by passflow as it is:
`passflow-opt --load-pass-plugin=examples/xdsl_fold_add_zero.py -p 'builtin.module(fold-add-zero)'`.

Nothing here imports passflow: the file defines an xDSL `ModulePass` (a frozen
dataclass with a `name` and options as fields with defaults), and passflow
registers it under its `name` when it loads the file.
"""

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import arith, builtin
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import PassFailedException


@dataclass
class FoldAddZero(RewritePattern):
    """`x + 0` is `x`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddiOp, rewriter: PatternRewriter) -> None:
        zero = op.rhs.owner
        if (
            isinstance(zero, arith.ConstantOp)
            and isinstance(zero.value, builtin.IntegerAttr)
            and zero.value.value.data == 0
        ):
            rewriter.replace(op, (), (op.lhs,))


@dataclass(frozen=True)
class FoldAddZeroPass(ModulePass):
    """Replace `arith.addi %x, %zero` by `%x` when `%zero` is a constant 0.

    `fail_on` makes the pass fail on a function of that name, and `crash` makes
    it raise: the examples use them to show passflow's error reports.
    """

    name: ClassVar[str] = "fold-add-zero"

    fail_on: str | None = None
    crash: bool = False
    max_iterations: int = 10

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        if self.crash:
            raise RuntimeError("fold-add-zero crashed, as asked")
        for func in op.walk():
            name = func.properties.get("sym_name")
            if self.fail_on is not None and name == builtin.StringAttr(self.fail_on):
                raise PassFailedException(f"fold-add-zero: refusing '{self.fail_on}'")
        PatternRewriteWalker(FoldAddZero()).rewrite_module(op)
