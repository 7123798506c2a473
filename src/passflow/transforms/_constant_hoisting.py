"""xDSL's `RehoistConstInLoops`, run only where every op it would hoist may move.

The pattern hoists each op of an `scf.for` body that `has_trait(ConstantLike)`
calls a constant to just before the loop. xDSL answers that question with True for
an unregistered op (it might have any trait), so canonicalize hoisted
`"test.use"(%r)` out of its loop, above the op defining `%r`, and the loop, then
empty, was erased: a use left without its definition. MLIR's constants are what
the greedy driver's `is_uniquable_constant` allows (registered, `ConstantLike`,
effect free, no allocated register), and only those may move; a loop holding an
op that xDSL's question would wrongly move is left to the greedy driver, which
hoists its real constants anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.traits import ConstantLike

from passflow.transforms._effects import is_uniquable_constant

__all__ = ["guard_constant_hoisting"]

_SCF_PATTERNS = "xdsl.transforms.canonicalization_patterns.scf"
_HOISTING = "RehoistConstInLoops"


@dataclass(frozen=True)
class _MovableOnly(RewritePattern):
    pattern: RewritePattern

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    if child.has_trait(ConstantLike) and not is_uniquable_constant(
                        child
                    ):
                        return
        self.pattern.match_and_rewrite(op, rewriter)


def guard_constant_hoisting(pattern: RewritePattern) -> RewritePattern:
    """`pattern`, made to leave loops alone that hold an op xDSL would wrongly
    take for a movable constant, if it is xDSL's `RehoistConstInLoops`."""
    cls = type(pattern)
    if cls.__name__ == _HOISTING and cls.__module__ == _SCF_PATTERNS:
        return _MovableOnly(pattern)
    return pattern
