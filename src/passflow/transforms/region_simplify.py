"""MLIR's region simplification (`mlir::simplifyRegions`, RegionUtils.cpp) on xDSL IR.

The canonicalizer runs it after each round of patterns, because patterns see one
op at a time and cannot see that a block is never reached, that a loop-carried
value is never read, or that two blocks do the same thing. Its steps are MLIR's:

1. erase unreachable blocks, in every region nested in the given ones;
2. region DCE (`runRegionDCE`): an optimistic liveness analysis (everything is
   dead until proved live) over ops and the arguments of non-entry blocks, so
   that dead cycles through block arguments go too. An operand a known branch
   forwards to a successor keeps its value live only if the block argument it
   feeds is live. Dead ops are erased, dead block arguments are dropped together
   with the operands that feed them. Entry block arguments are never touched:
   their contract is with the parent op (MLIR's rule);
3. with `mode="aggressive"` only, merge identical blocks: non-entry blocks with
   the same successors and the same ops are merged into the first of them;
   operands defined outside the blocks may differ, and become new arguments of
   the merged block fed by each predecessor;
4. with `mode="aggressive"` only, drop redundant arguments: an argument to which
   every predecessor passes the same value is replaced by that value.

What counts as a change is also MLIR's: an erased block or op, a merge, a dropped
redundant argument; dropping dead block arguments alone is not one (MLIR's
`runRegionDCE` reports erased ops only), so a greedy driver iterates and
converges as mlir-opt's does. Which ops are branches, and how their operands map
to block arguments, is `passflow.transforms._branches`; an op with successors
that is not a known branch is opaque, as an op without `BranchOpInterface` is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from xdsl.dialects.builtin import UnregisteredOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.traits import IsTerminator

from passflow.transforms._branches import (
    BranchOperands,
    branch_operands,
    forwarded_operands,
    set_forwarded_operands,
)
from passflow.transforms._effects import would_be_trivially_dead

__all__ = [
    "SimplifyMode",
    "erase_unreachable_blocks",
    "simplify_regions",
]

SimplifyMode = Literal["normal", "aggressive"]
"""MLIR's `GreedySimplifyRegionLevel` without `disabled`: `aggressive` also
merges identical blocks and drops redundant block arguments."""


def simplify_regions(
    target: Operation | Region | Iterable[Region],
    mode: SimplifyMode = "normal",
    listener: PatternRewriterListener | None = None,
) -> bool:
    """Simplify the regions of `target` (an op's regions, one region, or several)
    and every region nested in them; True if anything changed as MLIR counts it.

    `listener` hears about every op erased (a greedy driver drops them from its
    worklist); block arguments and operands are edited silently, as in MLIR.
    """
    if mode not in ("normal", "aggressive"):
        raise ValueError(f"unknown region simplification mode '{mode}'")
    regions = _as_regions(target)
    notify = _NO_LISTENER if listener is None else listener
    erased_blocks = erase_unreachable_blocks(regions, notify)
    erased_ops = _run_region_dce(regions, notify)
    merged_blocks = dropped_arguments = False
    if mode == "aggressive":
        merged_blocks = _merge_identical_blocks(regions, notify)
        dropped_arguments = _drop_redundant_arguments(regions)
    return erased_blocks or erased_ops or merged_blocks or dropped_arguments


_NO_LISTENER = PatternRewriterListener()


def _as_regions(target: Operation | Region | Iterable[Region]) -> list[Region]:
    if isinstance(target, Operation):
        return list(target.regions)
    if isinstance(target, Region):
        return [target]
    return list(target)


# --- control-flow graph -----------------------------------------------------------


def _successors(block: Block) -> Sequence[Block]:
    last = block.last_op
    return () if last is None else last.successors


def _reachable(entry: Block) -> set[Block]:
    seen = {entry}
    stack = [entry]
    while stack:
        for successor in _successors(stack.pop()):
            if successor not in seen:
                seen.add(successor)
                stack.append(successor)
    return seen


def _post_order(entry: Block) -> list[Block]:
    """The blocks reachable from `entry` in depth-first post-order, successors
    in order (llvm::post_order): in acyclic code, users come before definitions."""
    if entry.next_block is None:
        return [entry]
    order: list[Block] = []
    seen = {entry}
    stack = [(entry, iter(_successors(entry)))]
    while stack:
        block, successors = stack[-1]
        for successor in successors:
            if successor not in seen:
                seen.add(successor)
                stack.append((successor, iter(_successors(successor))))
                break
        else:
            stack.pop()
            order.append(block)
    return order


def _parent_block(value: SSAValue) -> Block | None:
    if isinstance(value, BlockArgument):
        return value.block
    if isinstance(value, OpResult):
        return value.op.parent
    return None


_terminator_classes: dict[type[Operation], bool] = {}


def _is_terminator(op: Operation) -> bool:
    """MLIR's `hasTrait<IsTerminator>`: false for unregistered ops."""
    cls = type(op)
    found = _terminator_classes.get(cls)
    if found is None:
        found = op.has_trait(IsTerminator, value_if_unregistered=False)
        if not isinstance(op, UnregisteredOp):  # a class per op: do not keep them
            _terminator_classes[cls] = found
    return found


# --- unreachable blocks -------------------------------------------------------------


def erase_unreachable_blocks(
    target: Operation | Region | Iterable[Region],
    listener: PatternRewriterListener | None = None,
) -> bool:
    """Erase the blocks no path from their region's entry reaches, in the regions
    of `target` and every region nested in a reachable block (MLIR's
    `eraseUnreachableBlocks`); True if any was erased. Patterns and the liveness
    analysis are not safe on unreachable code, where an op may use its own result.
    """
    notify = _NO_LISTENER if listener is None else listener
    erased = False
    worklist = _as_regions(target)
    while worklist:
        region = worklist.pop()
        entry = region.first_block
        if entry is None:
            continue
        if entry.next_block is None:
            for op in entry.ops:
                worklist.extend(op.regions)
            continue
        reachable = _reachable(entry)
        for block in list(region.blocks):
            if block not in reachable:
                for op in reversed(list(block.ops)):
                    notify.handle_operation_removal(op)
                region.erase_block(block, safe_erase=False)
                erased = True
                continue
            for op in block.ops:
                worklist.extend(op.regions)
    return erased


# --- region DCE -----------------------------------------------------------------------


class _Branch:
    """A branch terminator's forwarded operands: their positions per successor
    and, per operand, the block argument it feeds (None if not forwarded)."""

    __slots__ = ("fed", "ranges")

    def __init__(self, op: Operation, layout: BranchOperands) -> None:
        self.ranges = layout.ranges(op)
        fed: list[BlockArgument | None] = [None] * len(op.operands)
        for successor, positions in zip(op.successors, self.ranges, strict=False):
            args = successor.args
            for position, index in enumerate(positions[: len(args)]):
                fed[index] = args[position]
        self.fed = fed


class _Liveness:
    """MLIR's LiveMap and its propagation: ops and non-entry block arguments
    proved live, grown to a fixed point by sweeps that visit users before
    definitions (blocks in post-order, ops in reverse).

    MLIR sweeps until a sweep proves nothing new (two sweeps at least); here a
    sweep is repeated only if something became live after an element that
    depends on it was found dead in the same sweep, which reaches the same
    (least) fixed point, usually in one sweep.
    """

    def __init__(self) -> None:
        self.ops: set[Operation] = set()
        self.args: set[BlockArgument] = set()
        self._swept: set[Operation | BlockArgument] = set()
        self._again = False
        self._branches: dict[Operation, _Branch | None] = {}
        self._orders: dict[Region, list[Block]] = {}

    def run(self, regions: Sequence[Region]) -> None:
        while True:
            self._again = False
            self._swept.clear()
            for region in regions:
                self._sweep_region(region)
            if not self._again:
                return

    def branch(self, op: Operation) -> _Branch | None:
        """The forwarded operands of a terminator that is a known branch (ops are
        not edited until the analysis is over, so this is cached)."""
        if not _is_terminator(op):
            return None
        branches = self._branches
        if op in branches:
            return branches[op]
        layout = branch_operands(op)
        found = branches[op] = None if layout is None else _Branch(op, layout)
        return found

    # --- evaluation ---

    def _is_value_live(self, value: SSAValue) -> bool:
        """MLIR's processValue: used by a live op, other than as an operand
        forwarded to a block argument not proved live."""
        ops = self.ops
        for use in value.uses:
            user = use.operation
            if user not in ops:
                continue
            branch = self.branch(user)
            argument = None if branch is None else branch.fed[use.index]
            if argument is None or argument in self.args:
                return True
        return False

    def _sweep_region(self, region: Region) -> None:
        entry = region.first_block
        if entry is None:
            return
        order = self._orders.get(region)
        if order is None:
            order = self._orders[region] = _post_order(entry)
        for block in order:
            for op in reversed(block.ops):
                self._sweep_op(op)
            if block is entry:  # entry arguments belong to the parent op
                continue
            for argument in block.args:
                if argument not in self.args and self._is_value_live(argument):
                    self._set_argument_live(argument)
                self._swept.add(argument)

    def _sweep_op(self, op: Operation) -> None:
        regions = op.regions
        if regions:
            for region in regions:
                self._sweep_region(region)
        if _is_terminator(op):
            self._set_terminator_live(op)
            return
        if op not in self.ops and (
            not would_be_trivially_dead(op) or self._is_any_result_live(op)
        ):
            self.ops.add(op)
            if not self._again:
                for operand in op.operands:
                    self._recheck(operand)
        self._swept.add(op)

    def _is_any_result_live(self, op: Operation) -> bool:
        return any(self._is_value_live(result) for result in op.results)

    # --- proving live ---

    def _set_terminator_live(self, op: Operation) -> None:
        """Terminators are always live; those that are not known branches keep
        every argument of their successors live too."""
        branch = self.branch(op)
        if branch is None:
            for successor in op.successors:
                for argument in successor.args:
                    self._set_argument_live(argument)
        if op in self.ops:
            return
        self.ops.add(op)
        for index, operand in enumerate(op.operands):
            if branch is None or branch.fed[index] is None:
                self._recheck(operand)

    def _set_argument_live(self, argument: BlockArgument) -> None:
        if argument in self.args:
            return
        self.args.add(argument)
        for use in argument.block.uses:
            branch = self.branch(use.operation)
            if branch is None or use.index >= len(branch.ranges):
                continue
            positions = branch.ranges[use.index]
            if argument.index < len(positions):
                self._recheck(use.operation.operands[positions[argument.index]])

    def _recheck(self, value: SSAValue) -> None:
        """`value` just gained a live use: sweep again if its definition was
        already found dead in this sweep."""
        if self._again:
            return
        if isinstance(value, OpResult):
            definition = value.op
            if definition in self._swept and definition not in self.ops:
                self._again = True
        elif (
            isinstance(value, BlockArgument)
            and value in self._swept
            and value not in self.args
        ):
            self._again = True


def _run_region_dce(
    regions: Sequence[Region], listener: PatternRewriterListener
) -> bool:
    """MLIR's runRegionDCE; True if an op was erased. Expects no unreachable
    block (their values were never analysed)."""
    liveness = _Liveness()
    liveness.run(regions)
    return _delete_dead(regions, liveness, listener)


def _delete_dead(
    regions: Iterable[Region], liveness: _Liveness, listener: PatternRewriterListener
) -> bool:
    erased = False
    for region in regions:
        entry = region.first_block
        if entry is None:
            continue
        single_block = entry.next_block is None
        for block in _post_order(entry):
            if not single_block:
                _erase_dead_successor_operands(block.last_op, liveness)
            for op in reversed(list(block.ops)):
                if op in liveness.ops:
                    if op.regions:
                        erased = _delete_dead(op.regions, liveness, listener) or erased
                    continue
                listener.handle_operation_removal(op)
                block.erase_op(op, safe_erase=False)
                erased = True
        block = entry.next_block
        while block is not None:
            for argument in reversed(block.args):
                if argument not in liveness.args:
                    block.erase_arg(argument)
            block = block.next_block
    return erased


def _erase_dead_successor_operands(op: Operation | None, liveness: _Liveness) -> None:
    """Drop the operands a branch forwards to block arguments not proved live
    (its layout is still the one the analysis cached: the op is not edited yet)."""
    branch = None if op is None else liveness.branch(op)
    if op is None or branch is None:
        return
    live = liveness.args
    if all(argument is None or argument in live for argument in branch.fed):
        return
    layout = branch_operands(op)
    assert layout is not None
    operands, fed = op.operands, branch.fed
    layout.rebuild(
        op,
        [
            [
                operands[index]
                for index in positions
                if fed[index] is None or fed[index] in live
            ]
            for positions in branch.ranges
        ],
    )


# --- identical blocks ---------------------------------------------------------------


class _BlockData:
    """A block's ops and the position of each value it defines (arguments first,
    then results in order), for comparing uses of values inside two blocks."""

    def __init__(self, block: Block) -> None:
        self.block = block
        self.ops = list(block.ops)
        self._order: dict[Operation, int] = {}
        position = len(block.args)
        for op in self.ops:
            if op.results:
                self._order[op] = position
                position += len(op.results)

    def order_of(self, value: SSAValue) -> int:
        if isinstance(value, OpResult):
            return self._order[value.op] + value.index
        assert isinstance(value, BlockArgument)
        return value.index


def _equivalent_ignoring_operands(lhs: Operation, rhs: Operation) -> bool:
    """MLIR's OperationEquivalence::isEquivalentTo with locations ignored and
    every operand pair accepted (the caller compares operands)."""
    return (
        lhs.name == rhs.name
        and len(lhs.operands) == len(rhs.operands)
        and len(lhs.results) == len(rhs.results)
        and len(lhs.regions) == len(rhs.regions)
        and len(lhs.successors) == len(rhs.successors)
        and lhs.attributes == rhs.attributes
        and lhs.properties == rhs.properties
        and lhs.result_types == rhs.result_types
    )


def _used_outside(op: Operation, block: Block) -> bool:
    return any(
        use.operation.parent is not block
        for result in op.results
        for use in result.uses
    )


def _valid_successor_operand(block: Block, value: SSAValue) -> bool:
    """A value computed by the terminator of a predecessor of `block` cannot be
    passed to `block` by that terminator (it does not dominate its own use)."""
    if not isinstance(value, OpResult):
        return True
    defining_block = value.op.parent
    if defining_block is None or defining_block.last_op is not value.op:
        return True
    return all(use.operation.parent is not defining_block for use in block.uses)


def _can_update_predecessors(block: Block) -> bool:
    return all(branch_operands(use.operation) is not None for use in block.uses)


class _Cluster:
    """Blocks equivalent to a leader block, to be merged into it (MLIR's
    BlockMergeCluster), and the operand positions (op index, operand index) at
    which some of them differ from the leader."""

    def __init__(self, leader: _BlockData) -> None:
        self.leader = leader
        self.blocks: list[_BlockData] = []
        self.operands: set[tuple[int, int]] = set()

    def add(self, data: _BlockData) -> bool:
        leader, block = self.leader.block, data.block
        if leader.arg_types != block.arg_types:
            return False
        if len(self.leader.ops) != len(data.ops):
            return False
        mismatched: list[tuple[int, int]] = []
        for op_index, (lhs, rhs) in enumerate(
            zip(self.leader.ops, data.ops, strict=True)
        ):
            if not _equivalent_ignoring_operands(lhs, rhs):
                return False
            for index, (left, right) in enumerate(
                zip(lhs.operands, rhs.operands, strict=True)
            ):
                if left is right:
                    continue
                if left.type != right.type:
                    return False
                left_inside = _parent_block(left) is leader
                if left_inside != (_parent_block(right) is block):
                    return False
                if not left_inside:
                    if not _valid_successor_operand(
                        leader, left
                    ) or not _valid_successor_operand(block, right):
                        return False
                    mismatched.append((op_index, index))
                elif self.leader.order_of(left) != data.order_of(right):
                    return False
            if _used_outside(rhs, block) or _used_outside(lhs, leader):
                return False
        self.operands.update(mismatched)
        self.blocks.append(data)
        return True

    def merge(self, listener: PatternRewriterListener) -> bool:
        if not self.blocks:
            return False
        leader = self.leader.block
        members = [self.leader, *self.blocks]
        if self.operands:
            if not all(_can_update_predecessors(data.block) for data in members):
                return False
            old_count = len(leader.args)
            new_operands: list[list[SSAValue]] = [[] for _ in members]
            for op_index, index in sorted(self.operands):
                for member, data in enumerate(members):
                    op = data.ops[op_index]
                    value = op.operands[index]
                    new_operands[member].append(value)
                    if member == 0:
                        op.operands[index] = leader.insert_arg(
                            value.type, len(leader.args)
                        )
            new_operands = _prune_redundant_arguments(new_operands, old_count, leader)
            for data, values in zip(members, new_operands, strict=True):
                for use in list(data.block.uses):
                    branch, successor = use.operation, use.index
                    current = forwarded_operands(branch, successor)
                    set_forwarded_operands(branch, successor, [*current, *values])
        region = leader.parent
        assert region is not None
        for data in self.blocks:
            for use in list(data.block.uses):
                use.operation.successors[use.index] = leader
            for op in reversed(data.ops):
                listener.handle_operation_removal(op)
            region.erase_block(data.block)
        return True


def _prune_redundant_arguments(
    new_operands: list[list[SSAValue]], old_count: int, block: Block
) -> list[list[SSAValue]]:
    """Drop new arguments of `block` that every predecessor list fills with the
    same value as an earlier new argument (MLIR's pruneRedundantArguments: only
    duplicates within the leader's list are candidates)."""
    first = new_operands[0]
    first_position: dict[SSAValue, int] = {}
    for position, value in enumerate(first):
        first_position.setdefault(value, position)
    replacement: dict[int, int] = {}
    for position, value in enumerate(first):
        earlier = first_position[value]
        if earlier != position and all(
            values[earlier] is values[position] for values in new_operands[1:]
        ):
            replacement[position] = earlier
    if not replacement:
        return new_operands
    args = block.args
    for position, earlier in replacement.items():
        args[old_count + position].replace_all_uses_with(args[old_count + earlier])
    for position in sorted(replacement, reverse=True):
        block.erase_arg(block.args[old_count + position])
    return [
        [value for position, value in enumerate(values) if position not in replacement]
        for values in new_operands
    ]


def _merge_identical_blocks_in(
    region: Region, listener: PatternRewriterListener
) -> bool:
    entry = region.first_block
    if entry is None or entry.next_block is None:
        return False
    by_successors: dict[tuple[Block, ...], list[Block]] = {}
    block = entry.next_block
    while block is not None:
        by_successors.setdefault(tuple(_successors(block)), []).append(block)
        block = block.next_block
    merged = False
    for blocks in by_successors.values():
        if len(blocks) == 1:
            continue
        clusters: list[_Cluster] = []
        for block in blocks:
            if any(
                nested.first_block is not None
                for op in block.ops
                for nested in op.regions
            ):
                continue
            if any(
                use.operation.parent is not block
                for argument in block.args
                for use in argument.uses
            ):
                continue
            data = _BlockData(block)
            if not any(cluster.add(data) for cluster in clusters):
                clusters.append(_Cluster(data))
        for cluster in clusters:
            merged = cluster.merge(listener) or merged
    return merged


def _merge_identical_blocks(
    regions: Iterable[Region], listener: PatternRewriterListener
) -> bool:
    """Merge identical blocks in `regions` and their nested regions, a region
    again after each change (MLIR's mergeIdenticalBlocks)."""
    worklist = dict.fromkeys(regions)  # an ordered set, popped from the back
    changed = False
    while worklist:
        region, _ = worklist.popitem()
        if _merge_identical_blocks_in(region, listener):
            worklist[region] = None
            changed = True
        for block in region.blocks:
            for op in block.ops:
                for nested in op.regions:
                    worklist.setdefault(nested)
    return changed


# --- redundant arguments ---------------------------------------------------------------


def _drop_redundant_arguments_of(block: Block) -> bool:
    """Replace each argument that every predecessor (all known branches) passes
    the same value to by that value, and drop it."""
    dropped: list[int] = []
    for argument in block.args:
        common: SSAValue | None = None
        same = True
        for use in block.uses:
            if branch_operands(use.operation) is None:
                same = False
                break
            operands = forwarded_operands(use.operation, use.index)
            if argument.index >= len(operands):
                same = False
                break
            value = operands[argument.index]
            if common is None:
                common = value
            elif value is not common:
                same = False
                break
        if same and common is not None and common is not argument:
            dropped.append(argument.index)
            argument.replace_all_uses_with(common)
    for index in reversed(dropped):
        block.erase_arg(block.args[index])
        for use in list(block.uses):
            operands = list(forwarded_operands(use.operation, use.index))
            del operands[index]
            set_forwarded_operands(use.operation, use.index, operands)
    return bool(dropped)


def _drop_redundant_arguments(regions: Iterable[Region]) -> bool:
    """MLIR's dropRedundantArguments over `regions` and their nested regions."""
    worklist = dict.fromkeys(regions)
    changed = False
    while worklist:
        region, _ = worklist.popitem()
        for block in region.blocks:
            changed = _drop_redundant_arguments_of(block) or changed
            for op in block.ops:
                for nested in op.regions:
                    worklist.setdefault(nested)
    return changed
