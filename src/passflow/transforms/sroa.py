"""`sroa`: scalar replacement of aggregates (MLIR's SROA pass, as in mlir-opt 22).

An aggregate slot (`memref.alloca` of a static shape with 2 to 16 elements,
`llvm.alloca` of one struct or of an array of at most 16 elements) whose every use
accesses one element known at compile time (`memref.load` and `memref.store` with
constant, in-bounds indices; `llvm.getelementptr %slot[0, i]` read and written
with the field's type, `llvm.load` and `llvm.store` of the first field) is split:
one new slot per element used, inserted after the allocation, each access moved
onto its element's slot, and the aggregate erased. Elements never used get no slot, which is the
memory benefit the statistics count. Which ops allocate and access aggregates is
`passflow.transforms.memory_slots`; `mem2reg` can then promote the new slots.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.ir import Attribute, Operation, Region
from xdsl.rewriter import Rewriter

from passflow.pass_base import OperationPass
from passflow.statistics import Statistic
from passflow.transforms.memory_slot_models import register_builtin_models
from passflow.transforms.memory_slots import (
    DestructurableAccessor,
    DestructurableAllocation,
    DestructurableSlot,
    allocators_by_region,
    destructurable_accessor,
    destructurable_allocation,
    in_rounds,
)

__all__ = ["SROA", "DestructuringCounts", "try_to_destructure_memory_slots"]

register_builtin_models()


@dataclass
class DestructuringCounts:
    """What destructuring did, for the pass's statistics."""

    destructured: int = 0
    with_memory_benefit: int = 0
    max_subelements: int = 0


class SROA(OperationPass):
    """Split aggregate allocations accessed element by element into one
    allocation per element, so that each can be promoted to SSA values."""

    name = "SROA"
    argument = "sroa"
    summary = "Scalar Replacement of Aggregates"
    description = """\
Scalar Replacement of Aggregates. Replaces allocations of aggregates into
independant allocations of its elements.

Allocators must implement `DestructurableAllocationOpInterface` to provide
the list of memory slots for which destructuring should be attempted.

This pass will only be applied if all accessors of the aggregate implement
the `DestructurableAccessorOpInterface`. If the accessors provide a view
into the struct, users of the view must ensure it is used in a type-safe
manner and within bounds by implementing `TypeSafeOpInterface`.
"""

    destructured_amount = Statistic(
        "destructured slots", "Total amount of memory slots destructured"
    )
    slots_with_memory_benefit = Statistic(
        "slots with memory benefit",
        "Total amount of memory slots in which the destructured size was smaller "
        "than the total size after eliminating unused fields",
    )
    max_subelement_amount = Statistic(
        "max subelement number",
        "Maximal number of sub-elements a successfully destructured slot initially had",
        maximum=True,
    )

    def run_on_operation(self) -> None:
        counts = DestructuringCounts()
        changed = False
        for allocators in allocators_by_region(
            self.get_operation(), destructurable_allocation
        ):
            changed = try_to_destructure_memory_slots(allocators, counts) or changed
        self.destructured_amount += counts.destructured
        self.slots_with_memory_benefit += counts.with_memory_benefit
        if counts.max_subelements > self.max_subelement_amount:
            self.max_subelement_amount = counts.max_subelements
        if not changed:
            self.mark_all_analyses_preserved()


def try_to_destructure_memory_slots(
    allocators: Iterable[Operation], counts: DestructuringCounts | None = None
) -> bool:
    """Destructure every slot of `allocators` that can be, in rounds until none
    more can; True if any was."""
    found = counts if counts is not None else DestructuringCounts()

    def attempt(allocator: Operation) -> bool:
        model = destructurable_allocation(allocator)
        return model is not None and _destructure_one(allocator, model, found)

    return in_rounds(allocators, attempt)


def _destructure_one(
    allocator: Operation, model: DestructurableAllocation, counts: DestructuringCounts
) -> bool:
    for slot in model.destructurable_slots(allocator):
        accessors = _accessors(slot, allocator.parent_region())
        if accessors is None:
            continue
        used: list[Attribute] = []
        for _, index in accessors:
            if index not in used:
                used.append(index)
        subslots = model.destructure(allocator, slot, used)
        if len(used) != len(slot.subelement_types):
            counts.with_memory_benefit += 1
        counts.max_subelements = max(counts.max_subelements, len(slot.subelement_types))
        to_erase: list[Operation] = []
        for op, _ in accessors:
            accessor = destructurable_accessor(op)
            assert accessor is not None
            if accessor.rewire(op, slot, subslots):
                to_erase.append(op)
        for op in to_erase:
            Rewriter.erase_op(op)
        Rewriter.erase_op(allocator)
        counts.destructured += 1
        return True
    return False


def _accessors(
    slot: DestructurableSlot, region: Region | None
) -> list[tuple[Operation, Attribute]] | None:
    """Each user of the slot with the element it accesses, the users in MLIR's
    use-list order after parsing (last in the program first), which fixes the
    order of the new slots; None if some use cannot be rewired."""
    found: list[tuple[Operation, Attribute]] = []
    users = {use.operation for use in slot.ptr.uses}
    if not users or region is None:
        return None
    for op in reversed([op for op in region.walk() if op in users]):
        accessor: DestructurableAccessor | None = destructurable_accessor(op)
        index = None if accessor is None else accessor.used_index(op, slot)
        if index is None:
            return None
        found.append((op, index))
    return found
