"""Dominance: MLIR's `DominanceInfo` on the xDSL IR.

CSE and LICM (and anything else that moves or reuses values) must know whether a
definition dominates a use; they ask for `DominanceInfo` through the analysis
manager (`am.get_analysis(DominanceInfo)`), so one instance is shared by every pass
that preserves it and is dropped when a pass changes the CFG.

As in MLIR the analysis is region aware and lazy: constructing it costs nothing, and
a region's dominator tree is built (Cooper, Harvey and Kennedy's iterative
algorithm over the reverse post-order from the entry block) the first time a query
needs it, then cached until `invalidate`. Queries may name any block or op, not only
those under the op the analysis was constructed on. Like MLIR's, the cache is not
updated when the IR changes: a pass that edits a region's CFG and keeps querying must
call `invalidate(region)`.

Semantics follow `mlir/lib/IR/Dominance.cpp` and LLVM's `GenericDomTree`:

- A block unreachable from its region's entry is dominated by every block of its
  region (vacuously: no path from the entry reaches it) and dominates no block but
  itself. `immediate_dominator` and `get_node` give None for it.
- Blocks and ops in different regions are compared by walking `b` up to its
  ancestor in `a`'s region; a block or op (properly) dominates what is nested in it,
  except that a value does not dominate ops nested in its own defining op.
- In a graph region (no SSA dominance) every op of the block dominates every op of
  it, itself included, properly.

Graph regions: xDSL has no `RegionKindInterface`, so `has_ssa_dominance`
approximates MLIR's rule. Regions with several blocks always have SSA dominance.
A single-block region is a graph region when its parent op is unregistered (MLIR's
rule exactly) or is named in `GRAPH_REGION_OPS` (the ops that are
`GraphRegionNoTerminator` in MLIR and exist in xDSL: `builtin.module`,
`gpu.module`). The `NoTerminator` trait is deliberately not used as the signal:
in xDSL it is also carried by ops whose bodies are ordinary SSA code
(`pdl.rewrite`, `memref_stream.streaming_region`, ...), and calling those graph
regions would make later definitions dominate earlier uses.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import overload

from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue

from passflow.ir import operation_name

__all__ = [
    "GRAPH_REGION_OPS",
    "DomTreeNode",
    "DominanceInfo",
    "region_has_ssa_dominance",
]

GRAPH_REGION_OPS: set[str] = {"builtin.module", "gpu.module"}
"""Names of registered ops whose single-block regions are graph regions.

Stands in for MLIR's `RegionKindInterface`; add a name here to declare another
op's regions graph regions.
"""


def region_has_ssa_dominance(region: Region) -> bool:
    """Whether ops in `region` obey SSA dominance (False for graph regions).

    See the module docstring for how this approximates MLIR's `hasSSADominance`.
    """
    first = region.first_block
    if first is None or first.next_block is not None:
        return True  # only single-block regions may be graph regions
    parent = region.parent
    if parent is None:
        return True
    name = operation_name(parent)
    if not name.is_registered:
        return False
    return name.name not in GRAPH_REGION_OPS


class DomTreeNode:
    """A node of a region's dominator tree (MLIR's `DominanceInfoNode`)."""

    __slots__ = ("block", "children", "dfs_in", "dfs_out", "idom", "level")

    def __init__(self, block: Block, idom: DomTreeNode | None, level: int) -> None:
        self.block = block
        self.idom = idom
        """The immediate dominator's node; None for the entry block."""
        self.children: list[DomTreeNode] = []
        """Nodes immediately dominated by this one, in reverse post-order."""
        self.level = level
        """Depth in the tree; the entry block is at level 0."""
        self.dfs_in = 0
        self.dfs_out = 0
        """Entry and exit times of a depth-first walk of the tree: a node
        dominates exactly the nodes whose interval nests in its own."""

    def dominates(self, other: DomTreeNode) -> bool:
        """Whether this node is `other` or one of its ancestors (O(1))."""
        return self.dfs_in <= other.dfs_in and other.dfs_out <= self.dfs_out

    def __repr__(self) -> str:
        return f"DomTreeNode(level={self.level}, children={len(self.children)})"


def _successors(block: Block) -> Sequence[Block]:
    last = block.last_op
    return () if last is None else last.successors


class _RegionTree:
    """The dominator tree of the blocks of one region reachable from its entry."""

    __slots__ = ("nodes", "root")

    def __init__(self, region: Region, entry: Block) -> None:
        # Post-order by an iterative depth-first search (no recursion limit).
        visited: set[Block] = {entry}
        post: list[Block] = []
        stack: list[tuple[Block, Iterator[Block]]] = [(entry, iter(_successors(entry)))]
        while stack:
            block, succs = stack[-1]
            for succ in succs:
                if succ not in visited and succ.parent is region:
                    visited.add(succ)
                    stack.append((succ, iter(_successors(succ))))
                    break
            else:
                stack.pop()
                post.append(block)
        rpo = post[::-1]
        number = {block: i for i, block in enumerate(rpo)}
        preds: list[list[int]] = [[] for _ in rpo]
        for i, block in enumerate(rpo):
            for succ in _successors(block):
                j = number.get(succ)
                if j is not None:
                    preds[j].append(i)

        # Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm". With
        # reverse post-order numbers a dominator always has the smaller number.
        idom = [-1] * len(rpo)
        idom[0] = 0
        changed = True
        while changed:
            changed = False
            for i in range(1, len(rpo)):
                new = -1
                for p in preds[i]:
                    if idom[p] < 0:
                        continue
                    if new < 0:
                        new = p
                        continue
                    f1, f2 = p, new
                    while f1 != f2:
                        while f1 > f2:
                            f1 = idom[f1]
                        while f2 > f1:
                            f2 = idom[f2]
                    new = f1
                if idom[i] != new:
                    idom[i] = new
                    changed = True

        root = DomTreeNode(entry, None, 0)
        nodes: list[DomTreeNode] = [root]
        for i in range(1, len(rpo)):
            parent = nodes[idom[i]]  # idom[i] < i: its node exists already
            node = DomTreeNode(rpo[i], parent, parent.level + 1)
            parent.children.append(node)
            nodes.append(node)

        # Pre/post numbers of the tree for constant-time ancestor checks.
        clock = 0
        walk: list[tuple[DomTreeNode, Iterator[DomTreeNode]]] = [
            (root, iter(root.children))
        ]
        root.dfs_in = clock
        while walk:
            node, kids = walk[-1]
            child = next(kids, None)
            if child is None:
                clock += 1
                node.dfs_out = clock
                walk.pop()
            else:
                clock += 1
                child.dfs_in = clock
                walk.append((child, iter(child.children)))

        self.root = root
        self.nodes: dict[Block, DomTreeNode] = {n.block: n for n in nodes}


def _ancestor_op_in_region(region: Region, op: Operation) -> Operation | None:
    """`op` or its ancestor whose block lies in `region`, or None."""
    current: Operation | None = op
    while current is not None:
        block = current.parent
        if block is None:
            return None
        parent_region = block.parent
        if parent_region is region:
            return current
        if parent_region is None:
            return None
        current = parent_region.parent
    return None


class DominanceInfo:
    """MLIR's `mlir::DominanceInfo`: dominance of blocks, ops and values.

    Constructed on an op (`DominanceInfo(op)`, normally by the analysis manager);
    computes nothing until queried. See the module docstring for the semantics.
    """

    def __init__(self, op: Operation) -> None:
        self.operation = op
        self._trees: dict[Region, _RegionTree] = {}
        self._ssa: dict[Region, bool] = {}

    # --- cache ----------------------------------------------------------------

    def invalidate(self, region: Region | None = None) -> None:
        """Forget what was computed for `region`, or for every region."""
        if region is None:
            self._trees.clear()
            self._ssa.clear()
        else:
            self._trees.pop(region, None)
            self._ssa.pop(region, None)

    def is_computed(self, region: Region) -> bool:
        """Whether `region`'s dominator tree is built and cached (for tests)."""
        return region in self._trees

    def _tree(self, region: Region) -> _RegionTree:
        tree = self._trees.get(region)
        if tree is None:
            entry = region.first_block
            if entry is None:
                raise ValueError("an empty region has no dominator tree")
            tree = self._trees[region] = _RegionTree(region, entry)
        return tree

    # --- region kinds -----------------------------------------------------------

    def has_ssa_dominance(self, region: Region | Block) -> bool:
        """False if `region` (or the block's region) is a graph region."""
        if isinstance(region, Block):
            parent = region.parent
            if parent is None:
                return True
            region = parent
        found = self._ssa.get(region)
        if found is None:
            found = self._ssa[region] = region_has_ssa_dominance(region)
        return found

    # --- the dominator tree ----------------------------------------------------

    def get_node(self, block: Block) -> DomTreeNode | None:
        """`block`'s node in its region's dominator tree; None if unreachable."""
        region = block.parent
        if region is None:
            raise ValueError("the block is not in a region")
        return self._tree(region).nodes.get(block)

    def get_root_node(self, region: Region) -> DomTreeNode:
        """The node of `region`'s entry block (ValueError for an empty region)."""
        return self._tree(region).root

    def immediate_dominator(self, block: Block) -> Block | None:
        """The idom of `block`; None for entry, unreachable and detached blocks."""
        region = block.parent
        if region is None or region.first_block is block:
            return None
        node = self._tree(region).nodes.get(block)
        if node is None or node.idom is None:
            return None
        return node.idom.block

    def is_reachable_from_entry(self, block: Block) -> bool:
        """Whether a path of successor edges leads from the region's entry to `block`."""
        region = block.parent
        if region is None or region.first_block is block:
            return True
        return block in self._tree(region).nodes

    def find_nearest_common_dominator(self, a: Block, b: Block) -> Block | None:
        """The deepest block dominating both, after bringing them to a common
        region as MLIR does; None if they share no region or one is unreachable.
        """
        if a is b:
            return a
        chain: dict[Region, Block] = {}
        current: Block | None = a
        while current is not None:
            region = current.parent
            if region is None:
                break
            chain.setdefault(region, current)
            current = region.parent.parent if region.parent is not None else None
        current = b
        while current is not None:
            region = current.parent
            if region is None:
                return None
            found = chain.get(region)
            if found is not None:
                a, b = found, current
                break
            current = region.parent.parent if region.parent is not None else None
        else:
            return None
        if a is b:
            return a
        nodes = self._tree(region).nodes
        na, nb = nodes.get(a), nodes.get(b)
        if na is None or nb is None:
            return None
        while na.level > nb.level:
            na = na.idom
            assert na is not None
        while nb.level > na.level:
            nb = nb.idom
            assert nb is not None
        while na is not nb:
            assert na.idom is not None and nb.idom is not None
            na, nb = na.idom, nb.idom
        return na.block

    # --- queries ----------------------------------------------------------------

    @overload
    def dominates(self, a: Block, b: Block) -> bool: ...
    @overload
    def dominates(self, a: Operation, b: Operation) -> bool: ...
    @overload
    def dominates(self, a: SSAValue, b: Operation) -> bool: ...
    def dominates(self, a: Block | Operation | SSAValue, b: Block | Operation) -> bool:
        """`a` is `b` (for a value: `b` defines it) or `a` properly dominates `b`."""
        if isinstance(a, Block):
            if not isinstance(b, Block):
                raise TypeError("a block's dominance is asked of a block")
            return a is b or self._block_properly_dominates(a, b)
        if not isinstance(b, Operation):
            raise TypeError("op and value dominance is asked of an op")
        if isinstance(a, Operation):
            return a is b or self._op_properly_dominates(a, b, True)
        if isinstance(a, OpResult) and a.op is b:
            return True
        return self._value_properly_dominates(a, b)

    @overload
    def properly_dominates(self, a: Block, b: Block) -> bool: ...
    @overload
    def properly_dominates(
        self, a: Operation, b: Operation, *, enclosing_op_ok: bool = True
    ) -> bool: ...
    @overload
    def properly_dominates(self, a: SSAValue, b: Operation) -> bool: ...
    def properly_dominates(
        self,
        a: Block | Operation | SSAValue,
        b: Block | Operation,
        *,
        enclosing_op_ok: bool = True,
    ) -> bool:
        """Dominance excluding `a` itself (except in graph regions).

        Blocks: `a` contains `b`, or `a` properly dominates the ancestor of `b` in
        `a`'s region. Ops: `a` is before `b` (or its ancestor) in one block, or
        `a`'s block properly dominates the other's; when `b` is nested in `a` the
        answer is `enclosing_op_ok`. Values: a block argument dominates its block
        and what that block dominates; an op result is properly dominated where
        its op properly dominates, but never inside its own op.
        """
        if isinstance(a, Block):
            if not isinstance(b, Block):
                raise TypeError("a block's dominance is asked of a block")
            return self._block_properly_dominates(a, b)
        if not isinstance(b, Operation):
            raise TypeError("op and value dominance is asked of an op")
        if isinstance(a, Operation):
            return self._op_properly_dominates(a, b, enclosing_op_ok)
        return self._value_properly_dominates(a, b)

    def _cfg_properly_dominates(self, region: Region, a: Block, b: Block) -> bool:
        """Distinct blocks `a`, `b` of `region` (LLVM's rules for unreachable ones)."""
        nodes = self._tree(region).nodes
        nb = nodes.get(b)
        if nb is None:
            return True  # an unreachable block is dominated by anything
        na = nodes.get(a)
        if na is None:
            return False  # and dominates nothing
        return na.dominates(nb)

    def _block_properly_dominates(self, a: Block, b: Block) -> bool:
        if a is b:
            return not self.has_ssa_dominance(a)
        region = a.parent
        if region is None:
            return False
        if b.parent is not region:
            parent = b.parent_op()
            ancestor = (
                None if parent is None else _ancestor_op_in_region(region, parent)
            )
            if ancestor is None:
                return False
            enclosing = ancestor.parent
            assert enclosing is not None
            if enclosing is a:
                return True  # b is nested in a
            b = enclosing
        return self._cfg_properly_dominates(region, a, b)

    def _op_properly_dominates(
        self, a: Operation, b: Operation, enclosing_op_ok: bool
    ) -> bool:
        a_block = a.parent
        b_block = b.parent
        if a_block is None or b_block is None:
            return False
        if a is b:
            return not self.has_ssa_dominance(a_block)
        region = a_block.parent
        if b_block.parent is not region:
            if region is None:
                return False
            ancestor = _ancestor_op_in_region(region, b)
            if ancestor is None:
                return False
            if ancestor is a and enclosing_op_ok:
                return True
            b = ancestor
            b_block = ancestor.parent
            assert b_block is not None
        if a_block is b_block:
            if not self.has_ssa_dominance(a_block):
                return True
            return a.is_before_in_block(b)
        if region is None:
            return False
        return self._cfg_properly_dominates(region, a_block, b_block)

    def _value_properly_dominates(self, value: SSAValue, op: Operation) -> bool:
        if isinstance(value, BlockArgument):
            block = op.parent
            if block is None:
                return False
            owner = value.block
            return owner is block or self._block_properly_dominates(owner, block)
        if isinstance(value, OpResult):
            return self._op_properly_dominates(value.op, op, False)
        return False  # an erased value dominates nothing
