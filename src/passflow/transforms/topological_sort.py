"""`topological-sort`: order graph regions so that definitions come before uses
(MLIR's TopologicalSort pass and `sortTopologically`)."""

from __future__ import annotations

from xdsl.ir import Block, Operation, OpResult
from xdsl.traits import IsTerminator

from passflow.analyses.dominance import region_has_ssa_dominance
from passflow.ir import operation_name
from passflow.pass_base import OperationPass

__all__ = ["TopologicalSort", "sort_topologically"]


class TopologicalSort(OperationPass):
    """Reorder the ops of every graph region so that each op comes after the ops
    whose results it (or an op nested in it) uses, as far as cycles allow.

    Graph regions are those of registered ops without SSA dominance
    (`builtin.module`, `gpu.module`: see `passflow.analyses.dominance`); as in
    MLIR, an unregistered op's regions are left alone, because it has no
    `RegionKindInterface`. The sort is stable: a block that is already sorted is
    not changed, and ops on a cycle keep their order at the end of the block.
    """

    name = "TopologicalSort"
    argument = "topological-sort"
    summary = "Sort regions without SSA dominance in topological order"
    description = """\
Recursively sorts all nested regions without SSA dominance in topological
order. The main purpose is readability, as well as potentially processing of
certain transformations and analyses. The function sorts the operations in
all nested regions such that, as much as possible, all users appear after
their producers.

This sort is stable. If the block is already topologically sorted, the IR
is not changed. Operations that form a cycle are moved to the end of the
regions in a stable order.
"""

    def run_on_operation(self) -> None:
        changed = False
        for op in list(self.get_operation().walk()):
            if not operation_name(op).is_registered:
                continue
            for region in op.regions:
                if region_has_ssa_dominance(region):
                    continue
                for block in region.blocks:
                    changed = _reorder(block, _sorted_order(block)) or changed
        if not changed:
            self.mark_all_analyses_preserved()


def sort_topologically(block: Block) -> bool:
    """Sort the ops of `block` (its terminator stays last) so that, as far as
    possible, every op comes after the ops defining the values it and its nested
    ops use; True if every op could be placed so (no cycle)."""
    order = _sorted_order(block)
    _reorder(block, order)
    return order.acyclic


class _Order(list[Operation]):
    acyclic = True


def _sorted_order(block: Block) -> _Order:
    """The stable topological order of `block`'s ops (MLIR's algorithm): repeatedly
    scan the unplaced ops in order and place each one that is ready; when a scan
    places none, the first unplaced op is placed as it is (it is on a cycle)."""
    ops = list(block.ops)
    terminator = ops[-1] if ops and _is_terminator(ops[-1]) else None
    if terminator is not None:
        ops.pop()
    order = _Order()
    unplaced = set(ops)
    remaining = ops
    while remaining:
        waiting: list[Operation] = []
        for op in remaining:
            if _is_ready(op, unplaced):
                unplaced.discard(op)
                order.append(op)
            else:
                waiting.append(op)
        if len(waiting) == len(remaining):
            order.acyclic = False
            first = waiting.pop(0)
            unplaced.discard(first)
            order.append(first)
        remaining = waiting
    if terminator is not None:
        order.append(terminator)
    return order


def _is_terminator(op: Operation) -> bool:
    """MLIR's `hasTrait<IsTerminator>`: never true of an unregistered op."""
    return operation_name(op).is_registered and op.has_trait(IsTerminator)


def _is_ready(op: Operation, unplaced: set[Operation]) -> bool:
    """Whether no operand of `op` or of an op nested in it is defined by (or
    inside) an unplaced op other than `op` itself."""
    for nested in op.walk():
        for operand in nested.operands:
            if not isinstance(operand, OpResult):
                continue
            owner: Operation | None = operand.op
            while owner is not None:
                if owner is op:
                    break
                if owner in unplaced:
                    return False
                owner = owner.parent_op()
    return True


def _reorder(block: Block, order: list[Operation]) -> bool:
    """Put `block`'s ops in `order` (a permutation of them); True if any moved."""
    if all(a is b for a, b in zip(block.ops, order, strict=True)):
        return False
    for op in order:
        op.detach()
        block.add_op(op)
    return True
