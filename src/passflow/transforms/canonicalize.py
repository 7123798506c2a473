"""`canonicalize`: fold and apply every canonicalization pattern (MLIR's Canonicalizer)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation
from xdsl.pattern_rewriter import RewritePattern
from xdsl.traits import HasCanonicalizationPatternsTrait

from passflow.options import ListOption, Option
from passflow.pass_base import OperationPass
from passflow.transforms._constant_hoisting import guard_constant_hoisting
from passflow.transforms._pass_through_cycles import guard_pass_through
from passflow.transforms.greedy import (
    GreedyRewriteConfig,
    PatternSet,
    RegionSimplify,
    apply_patterns_greedily,
)

__all__ = ["Canonicalizer", "RegionSimplify"]


class Canonicalizer(OperationPass):
    """Bring the IR to canonical form: fold ops, unique constants, apply the
    canonicalization patterns xDSL ops declare, drop dead code and blocks.

    The standard cleanup between transformations, and the inliner's default
    simplification pipeline. Patterns are named by their xDSL class name in
    `enable-patterns` / `disable-patterns`; folding is not a pattern and cannot
    be disabled, as in MLIR. It runs on any op, rewriting the ops nested in it.
    """

    name = "Canonicalizer"
    argument = "canonicalize"
    summary = "Canonicalize operations"
    description = """\
This pass performs various types of canonicalizations over a set of
operations by iteratively applying the canonicalization patterns of all
loaded dialects until either a fixpoint is reached or the maximum number of
iterations/rewrites is exhausted. Canonicalization is best-effort and does
not guarantee that the entire IR is in a canonical form after running this
pass. See [Operation Canonicalization](Canonicalization.md) for more
details.
"""
    kinds = ("Cleanup",)

    top_down = Option(True, help="Seed the worklist in general top-down order")
    region_simplify = Option(
        RegionSimplify.NORMAL,
        help="Perform control flow optimizations to the region tree",
    )
    max_iterations = Option(
        10, help="Max. iterations between applying patterns / simplifying regions"
    )
    max_num_rewrites = Option(
        -1, help="Max. number of pattern rewrites within an iteration"
    )
    test_convergence = Option(
        False, help="Test only: Fail pass on non-convergence to detect cyclic pattern"
    )
    disable_patterns = ListOption(
        str, help="Labels of patterns that should be filtered out during application"
    )
    enable_patterns = ListOption(
        str,
        help="Labels of patterns that should be used during application, all other "
        "patterns are filtered out",
    )

    _patterns: _PatternFilter | None = None

    def run_on_operation(self) -> None:
        config = GreedyRewriteConfig(
            max_iterations=self.max_iterations,
            max_num_rewrites=self.max_num_rewrites,
            region_simplify=self.region_simplify,
            top_down=self.top_down,
        )
        result = apply_patterns_greedily(
            self.get_operation(), self._pattern_set(), config, self.get_context()
        )
        if self.test_convergence and not result.converged:
            self.signal_pass_failure()
        # As MLIR's Canonicalizer, no analysis is kept, even when nothing changed.

    def _pattern_set(self) -> PatternSet:
        """The per-class pattern cache, rebuilt when the pattern options change."""
        enabled = frozenset(self.enable_patterns)
        disabled = frozenset(self.disable_patterns)
        found = self._patterns
        if found is None or (found.enabled, found.disabled) != (enabled, disabled):
            found = self._patterns = _PatternFilter(enabled, disabled)
        return found.patterns


class _PatternFilter:
    """The canonicalization patterns of each op class, filtered by class name as
    MLIR filters by pattern label (a `PatternSet` caches them per class)."""

    def __init__(self, enabled: frozenset[str], disabled: frozenset[str]) -> None:
        self.enabled = enabled
        self.disabled = disabled
        self.patterns = PatternSet(self._patterns_of)

    def _patterns_of(self, op: Operation) -> Sequence[RewritePattern]:
        return [
            guard_constant_hoisting(guard_pass_through(pattern))
            for trait in op.get_traits_of_type(HasCanonicalizationPatternsTrait)
            for pattern in trait.get_patterns(type(op))
            if self._allowed(type(pattern).__name__)
        ]

    def _allowed(self, label: str) -> bool:
        if label in self.disabled:
            return False
        return not self.enabled or label in self.enabled
