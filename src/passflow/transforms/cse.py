"""`cse`: common sub-expression elimination (MLIR's CSE) on any op.

The algorithm is MLIR's `CSEDriver`: a scoped table of known ops keyed by name,
operands, result types, attributes and properties (and, for ops with regions,
structural equality of the regions); blocks are visited down the dominator tree,
so an op is only replaced by an equivalent op that dominates it. Ops that write
memory are never merged; ops that only read are merged within one block when
nothing in between may write. Which is which is `_effects.reuse_of`, the rule
the greedy driver's constant uniquing follows too: an op defining an allocated
register (`!riscv.reg<a0>`) is never merged, even when declared `Pure`.
Trivially dead ops are erased on the way.
"""

from __future__ import annotations

from collections.abc import Hashable

from xdsl.dialects.builtin import UnknownLoc
from xdsl.ir import Block, Operation, Region
from xdsl.rewriter import Rewriter
from xdsl.traits import IsolatedFromAbove, IsTerminator

from passflow.analyses.dominance import DominanceInfo
from passflow.ir import operation_name
from passflow.pass_base import OperationPass
from passflow.statistics import Statistic
from passflow.transforms._effects import Reuse, is_trivially_dead, reuse_of
from passflow.xdsl_internals import may_write_between

__all__ = ["CSE", "CSEDriver"]


class _WithRegions:
    """The key of an op with regions: its plain key plus structural region equality."""

    __slots__ = ("key", "op")

    def __init__(self, key: tuple[Hashable, ...], op: Operation) -> None:
        self.key = key
        self.op = op

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, _WithRegions)
            and self.key == other.key
            and len(self.op.regions) == len(other.op.regions)
            and all(
                mine.is_structurally_equivalent(theirs)
                for mine, theirs in zip(self.op.regions, other.op.regions, strict=True)
            )
        )


def _op_key(op: Operation) -> Hashable | None:
    """What two ops must share to be interchangeable (locations ignored), or None
    when an attribute cannot be hashed."""
    attributes = op.attributes
    properties = op.properties
    key = (
        operation_name(op),
        tuple(op.operands),
        op.result_types,
        frozenset(attributes.items()) if attributes else None,
        frozenset(properties.items()) if properties else None,
    )
    try:
        hash(key)
    except TypeError:
        return None
    return _WithRegions(key, op) if op.regions else key


class _ScopedTable:
    """MLIR's ScopedHashTable: entries added in a scope vanish when it is popped."""

    def __init__(self) -> None:
        self.known: dict[Hashable, Operation] = {}
        self._undo: list[list[tuple[Hashable, Operation | None]]] = []

    def push(self) -> None:
        self._undo.append([])

    def pop(self) -> None:
        known = self.known
        for key, previous in reversed(self._undo.pop()):
            if previous is None:
                del known[key]
            else:
                known[key] = previous

    def insert(self, key: Hashable, op: Operation) -> None:
        self._undo[-1].append((key, self.known.get(key)))
        self.known[key] = op


class CSEDriver:
    """One CSE run: simplify `op`'s regions, then erase what became redundant."""

    def __init__(self, dominance: DominanceInfo) -> None:
        self.dominance = dominance
        self.num_cse = 0
        self.num_dce = 0
        self._to_erase: list[Operation] = []

    def simplify(self, op: Operation) -> bool:
        """Run on the regions of `op`; True if any op was erased."""
        table = _ScopedTable()
        for region in op.regions:
            self._simplify_region(table, region)
        for dead in self._to_erase:
            Rewriter.erase_op(dead, safe_erase=False)
        return bool(self._to_erase)

    def _simplify_region(self, table: _ScopedTable, region: Region) -> None:
        first = region.first_block
        if first is None:
            return
        ssa = self.dominance.has_ssa_dominance(region)
        if first.next_block is None:
            table.push()
            self._simplify_block(table, first, ssa)
            table.pop()
        elif ssa:
            self._simplify_dominator_tree(table, region)

    def _simplify_dominator_tree(self, table: _ScopedTable, region: Region) -> None:
        """Visit the reachable blocks depth-first down the dominator tree, each in
        a scope nested in its immediate dominator's (MLIR's CFGStackNode walk)."""
        root = self.dominance.get_root_node(region)
        table.push()
        self._simplify_block(table, root.block, True)
        stack = [iter(root.children)]
        while stack:
            child = next(stack[-1], None)
            if child is None:
                stack.pop()
                table.pop()
                continue
            table.push()
            self._simplify_block(table, child.block, True)
            stack.append(iter(child.children))

    def _simplify_block(self, table: _ScopedTable, block: Block, ssa: bool) -> None:
        for op in block.ops:
            if op.regions:
                if op.has_trait(IsolatedFromAbove, value_if_unregistered=True):
                    nested = _ScopedTable()
                    for region in op.regions:
                        self._simplify_region(nested, region)
                else:
                    for region in op.regions:
                        self._simplify_region(table, region)
            self._simplify_operation(table, op, ssa)

    def _simplify_operation(
        self, table: _ScopedTable, op: Operation, ssa: bool
    ) -> None:
        if op.has_trait(IsTerminator):
            return
        if is_trivially_dead(op):
            self._to_erase.append(op)
            self.num_dce += 1
            return
        if any(len(region.blocks) > 1 for region in op.regions):
            return
        reuse = reuse_of(op)
        if reuse is Reuse.NEVER:
            return
        key = _op_key(op)
        if key is None:
            return
        if reuse is Reuse.ANYWHERE:
            existing = table.known.get(key)
            if existing is None:
                table.insert(key, op)
                return
            self._replace(table, op, existing, ssa)
            # MLIR counts a side-effect-free CSE twice (once in the replacement,
            # once in the caller); the statistic matches mlir-opt's.
            self.num_cse += 1
            return
        self._simplify_reading_op(table, op, key, ssa)

    def _simplify_reading_op(
        self, table: _ScopedTable, op: Operation, key: Hashable, ssa: bool
    ) -> None:
        """Merge an op that only reads with an earlier one in the same block, when
        nothing in between may write."""
        existing = table.known.get(key)
        if (
            existing is not None
            and existing.parent is op.parent
            and not may_write_between(existing, op)
        ):
            self._replace(table, op, existing, ssa)
            return
        table.insert(key, op)

    def _replace(
        self, table: _ScopedTable, op: Operation, existing: Operation, ssa: bool
    ) -> None:
        """Use `existing`'s results for `op`'s and schedule `op` for erasure.

        In a graph region a use may come before the op; only uses by ops not yet
        visited are replaced there, and the op stays if some use remains.
        """
        if ssa:
            for old, new in zip(op.results, existing.results, strict=True):
                old.replace_all_uses_with(new)
            self._to_erase.append(op)
        else:
            known = table.known
            for old, new in zip(op.results, existing.results, strict=True):
                old.replace_uses_with_if(
                    new, lambda use: _visit_key(use.operation) not in known
                )
            if all(not result.uses for result in op.results):
                self._to_erase.append(op)
        if isinstance(existing.location, UnknownLoc) and not isinstance(
            op.location, UnknownLoc
        ):
            existing.location = op.location
        self.num_cse += 1


def _visit_key(op: Operation) -> Hashable:
    key = _op_key(op)
    return key if key is not None else op


class CSE(OperationPass):
    """Merge ops that compute the same value, and drop ops whose results are unused.

    A cleanup pass: run it after passes that duplicate work (inlining, unrolling,
    lowering) so later passes see each value computed once. It works on any op,
    using the `DominanceInfo` analysis (kept when the pass erases nothing, and
    also otherwise since CSE never changes the CFG).
    """

    name = "CSE"
    argument = "cse"
    summary = "Eliminate common sub-expressions"
    description = """\
This pass implements a generalized algorithm for common sub-expression
elimination. This pass relies on information provided by the
`Memory SideEffect` interface to identify when it is safe to eliminate
operations. See [Common subexpression elimination](https://en.wikipedia.org/wiki/Common_subexpression_elimination)
for more general details on this optimization.
"""
    kinds = ("Cleanup",)

    num_cse = Statistic("num-cse'd", "Number of operations CSE'd")
    num_dce = Statistic("num-dce'd", "Number of operations DCE'd")

    def run_on_operation(self) -> None:
        driver = CSEDriver(self.get_analysis(DominanceInfo))
        changed = driver.simplify(self.get_operation())
        # As in MLIR, the statistics are assigned: they hold the counts of the
        # last op processed. Parallel executors apply each child's assignment in
        # child order, so that is the last op in program order on any executor
        # (mlir-opt --mlir-disable-threading's figure).
        self.num_cse = driver.num_cse
        self.num_dce = driver.num_dce
        if not changed:
            self.mark_all_analyses_preserved()
            return
        self.mark_analyses_preserved(DominanceInfo)
