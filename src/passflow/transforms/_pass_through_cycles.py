"""Branch collapsing that stops at cycles of pass-through blocks.

xDSL's `cf` canonicalization patterns (`SimplifyPassThroughBr`,
`SimplifyPassThroughCondBranch`, `SimplifyPassThroughSwitch`) redirect a branch
past a successor that holds nothing but a `cf.br`. On a cycle of such blocks
(`^bb1: cf.br ^bb2`, `^bb2: cf.br ^bb1`) each rewrite enables the next and
canonicalize never ends, in xdsl-opt as it did in MLIR before `collapseBranch`
learnt to refuse "branches which participate in a cycle". passflow applies
MLIR's check before xDSL's pattern runs. Where MLIR collapses the other
successors of a `cf.cond_br` or `cf.switch` and keeps the one in the cycle, the
guarded pattern leaves the whole op alone: less simplified, never looping.

Those patterns exist only once a `cf` op asked for its canonicalization
patterns, so the `cf` dialect and its patterns (with the `arith` dialect they
import: about 30 ms) load then, not with canonicalize: a file without `cf`
never loads them.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from xdsl.ir import Block, Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

__all__ = ["collapses_into_cycle", "guard_pass_through"]

_CF_PATTERNS = "xdsl.transforms.canonicalization_patterns.cf"
"""The module of xDSL's pass-through collapsing patterns."""


def collapses_into_cycle(successor: Block) -> bool:
    """Whether `successor` is a lone `cf.br` whose chain of unconditional
    branches comes back to a block already on it (MLIR's `collapseBranch` check)."""
    from xdsl.dialects import cf  # loaded: a cf pattern is running (see above)

    branch = successor.first_op
    if not isinstance(branch, cf.BranchOp) or branch is not successor.last_op:
        return False
    visited = {successor, branch.successor}
    following = branch.successor.last_op
    while isinstance(following, cf.BranchOp):
        dest = following.successor
        if dest in visited:
            return True
        visited.add(dest)
        following = dest.last_op
    return False


@dataclass(frozen=True)
class _CycleSafe(RewritePattern):
    pattern: RewritePattern

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if any(collapses_into_cycle(successor) for successor in op.successors):
            return
        self.pattern.match_and_rewrite(op, rewriter)


def guard_pass_through(pattern: RewritePattern) -> RewritePattern:
    """`pattern`, made to leave branches into pass-through cycles alone if it
    is one of xDSL's pass-through collapsing patterns (which it cannot be while
    their module is not loaded)."""
    patterns = sys.modules.get(_CF_PATTERNS)
    if patterns is None:
        return pattern
    passes_through: tuple[type[RewritePattern], ...] = (
        patterns.SimplifyPassThroughBr,
        patterns.SimplifyPassThroughCondBranch,
        patterns.SimplifyPassThroughSwitch,
    )
    return _CycleSafe(pattern) if isinstance(pattern, passes_through) else pattern
