"""`mem2reg`: promote memory slots to SSA values (MLIR's Mem2Reg pass, as in
mlir-opt 22).

A slot is promoted when every use of its pointer is a load or store that can
give it up (`passflow.transforms.memory_slots` says which ops can, and how) and
sits in the slot's own region, and the region is not a graph region. Loads
then read the value stored last on every path: within a block by following the
stores, across blocks through a new block argument in each merge point (the
iterated dominance frontier of the storing blocks, pruned to blocks where the
slot is live on entry), fed by the branches leading there. A load before any
store reads the allocation's default value (`ub.poison`, `llvm.mlir.undef`).
Loads, stores and the allocation are then erased. A merge point whose
predecessor ends in an op that cannot forward operands (not a known branch)
stops the promotion of that slot, which is left as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.rewriter import Rewriter

from passflow.analyses.dominance import (
    DominanceInfo,
    DomTreeNode,
    region_has_ssa_dominance,
)
from passflow.options import Option
from passflow.pass_base import OperationPass
from passflow.statistics import Statistic
from passflow.transforms._branches import (
    branch_operands,
    forwarded_operands,
    set_forwarded_operands,
)
from passflow.transforms.memory_slot_models import register_builtin_models
from passflow.transforms.memory_slots import (
    MemorySlot,
    PromotableAllocation,
    PromotableMemOp,
    allocators_by_region,
    in_rounds,
    promotable_allocation,
    promotable_mem_op,
)

__all__ = ["Mem2Reg", "PromotionCounts", "try_to_promote_memory_slots"]

register_builtin_models()


@dataclass
class PromotionCounts:
    """What a promotion did, for the pass's statistics."""

    promoted: int = 0
    new_block_arguments: int = 0


class Mem2Reg(OperationPass):
    """Turn the loads and stores of allocations whose address does not escape
    into SSA values, so that later passes see the data flow directly."""

    name = "Mem2Reg"
    argument = "mem2reg"
    summary = "Promotes memory slots into values."
    description = """\
This pass removes loads out of and stores into a memory slot, and turns
them into direct uses of SSA values. This is done generically using the
`PromotableAllocationOpInterface`, `PromotableOpInterface` and
`PromotableMemOpInterface` interfaces.

This pass will attempt to compute which definitions of the content of
the memory slot reach operations that use the memory slot pointer. It
will rewire or remove operations that use the slot pointer so they no
longer use it. If any of this is not possible, the IR will be left
without mutation.

This pass only supports unstructured control-flow. Promotion of operations
within subregions will not happen.
"""

    region_simplify = Option(
        True, help="Perform control flow optimizations to the region tree"
    )
    promoted_amount = Statistic(
        "promoted slots", "Total amount of memory slot promoted"
    )
    new_block_argument_amount = Statistic(
        "new block args", "Total amount of new block argument inserted in blocks"
    )

    def run_on_operation(self) -> None:
        dominance = self.get_analysis(DominanceInfo)
        counts = PromotionCounts()
        changed = False
        for allocators in allocators_by_region(
            self.get_operation(), promotable_allocation
        ):
            changed = (
                try_to_promote_memory_slots(allocators, dominance, counts) or changed
            )
        self.promoted_amount += counts.promoted
        self.new_block_argument_amount += counts.new_block_arguments
        if not changed:
            self.mark_all_analyses_preserved()


def try_to_promote_memory_slots(
    allocators: Iterable[Operation],
    dominance: DominanceInfo,
    counts: PromotionCounts | None = None,
) -> bool:
    """Promote every slot of `allocators` that can be, in rounds until none more
    can (promoting one slot may free another); True if any was promoted."""
    found = counts if counts is not None else PromotionCounts()

    def attempt(allocator: Operation) -> bool:
        model = promotable_allocation(allocator)
        return model is not None and _promote_one(allocator, model, dominance, found)

    return in_rounds(allocators, attempt)


def _promote_one(
    allocator: Operation,
    model: PromotableAllocation,
    dominance: DominanceInfo,
    counts: PromotionCounts,
) -> bool:
    """Promote the first slot of `allocator` that can be; True if one was."""
    for slot in model.promotable_slots(allocator):
        if not slot.ptr.uses:
            continue
        info = _analyze(slot, dominance)
        if info is not None:
            _Promoter(slot, allocator, model, dominance, info, counts).promote()
            return True
    return False


# --- analysis ---------------------------------------------------------------------


@dataclass
class _Info:
    """What promotion needs: the users of the slot and the blocks that need an
    argument (MLIR's MemorySlotPromotionInfo)."""

    region: Region
    users: dict[Operation, PromotableMemOp]
    merge_points: set[Block] = field(default_factory=set[Block])


def _parent_block(value: SSAValue) -> Block | None:
    if isinstance(value, OpResult):
        return value.op.parent_block()
    if isinstance(value, BlockArgument):
        return value.block
    return None


def _analyze(slot: MemorySlot, dominance: DominanceInfo) -> _Info | None:
    """The promotion info of `slot`, or None if it cannot be promoted."""
    block = _parent_block(slot.ptr)
    region = None if block is None else block.parent
    if region is None or not region_has_ssa_dominance(region):
        return None
    operand_indices: dict[Operation, set[int]] = {}
    for use in slot.ptr.uses:
        operand_indices.setdefault(use.operation, set()).add(use.index)
    users: dict[Operation, PromotableMemOp] = {}
    for user, indices in operand_indices.items():
        model = promotable_mem_op(user)
        if (
            model is None
            or user.parent_region() is not region
            or not model.can_uses_be_removed(user, slot, frozenset(indices))
        ):
            return None
        users[user] = model
    info = _Info(region, users)
    if region.first_block is not region.last_block:
        info.merge_points = _merge_points(slot, info, dominance)
        for merge_point in info.merge_points:
            for predecessor in merge_point.predecessors():
                terminator = predecessor.last_op
                if terminator is None or branch_operands(terminator) is None:
                    return None
    return info


def _merge_points(
    slot: MemorySlot, info: _Info, dominance: DominanceInfo
) -> set[Block]:
    """The iterated dominance frontier of the storing blocks, pruned to the
    blocks where the slot's content is live on entry (LLVM's IDFCalculator with
    live-in blocks, as MLIR 22 sets it up)."""
    defining: set[Block] = set()
    for user, model in info.users.items():
        user_block = user.parent_block()
        if user_block is not None and model.stores_to(user, slot):
            defining.add(user_block)
    live_in = _live_in_blocks(slot, info, defining)
    frontier = _dominance_frontiers(info.region, dominance)
    merge_points: set[Block] = set()
    worklist = [block for block in defining if block in frontier]
    while worklist:
        block = worklist.pop()
        for candidate in frontier[block]:
            if candidate in merge_points or candidate not in live_in:
                continue
            merge_points.add(candidate)
            if candidate not in defining:
                worklist.append(candidate)
    return merge_points


def _live_in_blocks(slot: MemorySlot, info: _Info, defining: set[Block]) -> set[Block]:
    """Blocks entered with the slot's content still to be read: those that load
    before they store, and their predecessors back to a storing block."""
    worklist: list[Block] = []
    for user in info.users:
        block = user.parent_block()
        if block is None:
            continue
        for op in block.ops:
            model = info.users.get(op)
            if model is None:
                continue
            if model.loads_from(op, slot):
                worklist.append(block)
                break
            if model.stores_to(op, slot):
                break
    live_in: set[Block] = set()
    while worklist:
        block = worklist.pop()
        if block in live_in:
            continue
        live_in.add(block)
        worklist.extend(p for p in block.predecessors() if p not in defining)
    return live_in


def _dominance_frontiers(
    region: Region, dominance: DominanceInfo
) -> dict[Block, set[Block]]:
    """The dominance frontier of each block of `region` reachable from its entry."""
    frontier: dict[Block, set[Block]] = {}
    for block in region.blocks:
        node = dominance.get_node(block)
        if node is None:
            continue
        frontier.setdefault(block, set())
        if node.idom is None:
            continue
        for predecessor in block.predecessors():
            runner = dominance.get_node(predecessor)
            while runner is not None and runner is not node.idom:
                frontier.setdefault(runner.block, set()).add(block)
                runner = runner.idom
    return frontier


# --- transformation -----------------------------------------------------------


class _Promoter:
    """One slot's promotion (MLIR's MemorySlotPromoter)."""

    def __init__(
        self,
        slot: MemorySlot,
        allocator: Operation,
        model: PromotableAllocation,
        dominance: DominanceInfo,
        info: _Info,
        counts: PromotionCounts,
    ) -> None:
        self.slot = slot
        self.allocator = allocator
        self.model = model
        self.dominance = dominance
        self.info = info
        self.counts = counts
        self.default: SSAValue | None = None
        self.reaching: dict[Operation, SSAValue | None] = {}

    def promote(self) -> None:
        self._compute_reaching_definitions()
        self._remove_blocking_uses()
        if self.default is not None and not self.default.uses:
            default_op = self.default.owner
            assert isinstance(default_op, Operation)
            Rewriter.erase_op(default_op)
        Rewriter.erase_op(self.allocator)
        self.counts.promoted += 1

    def _default_value(self) -> SSAValue:
        """The content before any store, created at the start of the slot's block
        the first time it is needed."""
        if self.default is None:
            op = self.model.default_value(self.allocator, self.slot)
            block = _parent_block(self.slot.ptr)
            assert block is not None
            first = block.first_op
            if first is None:
                block.add_op(op)
            else:
                block.insert_op_before(op, first)
            self.default = op.results[0]
        return self.default

    def _compute_reaching_definitions(self) -> None:
        """Walk the dominator tree depth first, carrying the slot's content."""
        region = self.info.region
        entry = region.first_block
        assert entry is not None
        if entry is region.last_block:
            self._promote_in_block(entry, None)
            return
        stack: list[tuple[DomTreeNode, SSAValue | None]] = [
            (self.dominance.get_root_node(region), None)
        ]
        while stack:
            node, reaching = stack.pop()
            block = node.block
            if block in self.info.merge_points:
                reaching = block.insert_arg(self.slot.elem_type, len(block.args))
                self.counts.new_block_arguments += 1
            reaching = self._promote_in_block(block, reaching)
            self._forward_to_merge_points(block, reaching)
            stack.extend((child, reaching) for child in node.children)
        # A block no path reaches passes the default value on.
        for block in region.blocks:
            if self.dominance.get_node(block) is None:
                self._forward_to_merge_points(block, None)

    def _promote_in_block(
        self, block: Block, reaching: SSAValue | None
    ) -> SSAValue | None:
        for op in block.ops:
            model = self.info.users.get(op)
            if model is None:
                continue
            self.reaching[op] = reaching
            if model.stores_to(op, self.slot):
                reaching = model.stored_value(op, self.slot)
        return reaching

    def _forward_to_merge_points(self, block: Block, reaching: SSAValue | None) -> None:
        terminator = block.last_op
        if terminator is None or branch_operands(terminator) is None:
            return
        for index, successor in enumerate(terminator.successors):
            if successor in self.info.merge_points:
                value = reaching if reaching is not None else self._default_value()
                forwarded = [*forwarded_operands(terminator, index), value]
                set_forwarded_operands(terminator, index, forwarded)

    def _remove_blocking_uses(self) -> None:
        """Rewrite the users, last first in dominance order, so a load whose
        result another load forwards is replaced after that one; erase them."""
        to_erase: list[Operation] = []
        for user in reversed(self._users_in_dominance_order()):
            reaching = self.reaching.get(user)
            if reaching is None:
                reaching = self._default_value()
            if self.info.users[user].remove_blocking_uses(user, self.slot, reaching):
                to_erase.append(user)
        for op in to_erase:
            Rewriter.erase_op(op)

    def _users_in_dominance_order(self) -> list[Operation]:
        rank: dict[Block | None, int] = {
            block: index for index, block in enumerate(self._blocks_by_dominance())
        }
        users = list(self.info.users)
        position = {
            op: index
            for block in {user.parent_block() for user in users}
            if block is not None
            for index, op in enumerate(block.ops)
        }
        return sorted(
            users,
            key=lambda op: (rank.get(op.parent_block(), len(rank)), position[op]),
        )

    def _blocks_by_dominance(self) -> list[Block]:
        """Reachable blocks in dominator-tree preorder, then unreachable ones."""
        region = self.info.region
        ordered: list[Block] = []
        stack = [self.dominance.get_root_node(region)]
        while stack:
            node = stack.pop()
            ordered.append(node.block)
            stack.extend(reversed(node.children))
        seen = set(ordered)
        ordered.extend(block for block in region.blocks if block not in seen)
        return ordered
