"""MLIR's memory slot interfaces as passflow-side tables, for `mem2reg` and `sroa`.

MLIR attaches `PromotableAllocationOpInterface`, `PromotableMemOpInterface`,
`DestructurableAllocationOpInterface` and `DestructurableAccessorOpInterface` to
ops; xDSL has no such interfaces, and passflow does not touch xDSL's classes.
Instead each interface is a small abstract class here, and a table maps an op
name to the object that implements it for that op. The models of
`passflow.transforms.memory_slot_models` fill the tables for `memref` and `llvm`;
a plugin adds an op with `register_promotable_allocation` and its friends.

An op whose name is in no table is opaque: a slot used by it is neither promoted
nor destructured, as in MLIR when an op lacks the interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from xdsl.ir import Attribute, Operation, SSAValue

from passflow.ir import operation_name

__all__ = [
    "DestructurableAccessor",
    "DestructurableAllocation",
    "DestructurableSlot",
    "MemorySlot",
    "PromotableAllocation",
    "PromotableMemOp",
    "allocators_by_region",
    "destructurable_accessor",
    "destructurable_allocation",
    "in_rounds",
    "promotable_allocation",
    "promotable_mem_op",
    "register_destructurable_accessor",
    "register_destructurable_allocation",
    "register_promotable_allocation",
    "register_promotable_mem_op",
]


@dataclass(frozen=True)
class MemorySlot:
    """A pointer to memory holding one value of `elem_type` (MLIR's MemorySlot)."""

    ptr: SSAValue
    elem_type: Attribute


@dataclass(frozen=True)
class DestructurableSlot:
    """A slot holding an aggregate whose elements, named by index attributes,
    can live in slots of their own (MLIR's DestructurableMemorySlot)."""

    ptr: SSAValue
    elem_type: Attribute
    subelement_types: Mapping[Attribute, Attribute] = field(
        default_factory=dict[Attribute, Attribute]
    )


class PromotableAllocation(ABC):
    """How an allocating op offers its slots to `mem2reg`."""

    @abstractmethod
    def promotable_slots(self, op: Operation) -> list[MemorySlot]:
        """The slots of `op` that may be promoted, if their uses allow it."""

    @abstractmethod
    def default_value(self, op: Operation, slot: MemorySlot) -> Operation:
        """A new op (not yet inserted) giving the content of the slot before any
        store: MLIR's `getDefaultValue`."""


class PromotableMemOp(ABC):
    """How an op reading or writing a slot is rewritten when the slot is promoted."""

    @abstractmethod
    def loads_from(self, op: Operation, slot: MemorySlot) -> bool:
        """Whether `op` reads the content of `slot`."""

    @abstractmethod
    def stores_to(self, op: Operation, slot: MemorySlot) -> bool:
        """Whether `op` writes the content of `slot`."""

    @abstractmethod
    def can_uses_be_removed(
        self, op: Operation, slot: MemorySlot, operand_indices: frozenset[int]
    ) -> bool:
        """Whether `op` can stop using `slot.ptr` at these operand positions."""

    @abstractmethod
    def stored_value(self, op: Operation, slot: MemorySlot) -> SSAValue:
        """The value `op` writes into the slot (only asked if it stores)."""

    @abstractmethod
    def remove_blocking_uses(
        self, op: Operation, slot: MemorySlot, reaching: SSAValue
    ) -> bool:
        """Stop using the slot, `reaching` being its content just before `op`;
        True if `op` must then be erased (the caller erases it)."""


class DestructurableAllocation(ABC):
    """How an allocating op offers aggregate slots to `sroa`."""

    @abstractmethod
    def destructurable_slots(self, op: Operation) -> list[DestructurableSlot]:
        """The slots of `op` that could be split into one slot per element."""

    @abstractmethod
    def destructure(
        self, op: Operation, slot: DestructurableSlot, used: list[Attribute]
    ) -> dict[Attribute, MemorySlot]:
        """Insert one new allocation per used index after `op`; the new slots."""


class DestructurableAccessor(ABC):
    """How an op accessing an aggregate slot is moved onto its element slots."""

    @abstractmethod
    def used_index(self, op: Operation, slot: DestructurableSlot) -> Attribute | None:
        """The element `op` accesses, or None if it cannot be rewired (MLIR's
        `canRewire`)."""

    @abstractmethod
    def rewire(
        self,
        op: Operation,
        slot: DestructurableSlot,
        subslots: dict[Attribute, MemorySlot],
    ) -> bool:
        """Make `op` access its element's slot instead of the aggregate; True if
        `op` is then to be erased (the caller erases it)."""


_Model = TypeVar("_Model")

_ALLOCATIONS: dict[str, PromotableAllocation] = {}
_MEM_OPS: dict[str, PromotableMemOp] = {}
_DESTRUCTURABLE: dict[str, DestructurableAllocation] = {}
_ACCESSORS: dict[str, DestructurableAccessor] = {}


def register_promotable_allocation(name: str, model: PromotableAllocation) -> None:
    """Let `mem2reg` promote the slots of ops called `name`."""
    _ALLOCATIONS[name] = model


def register_promotable_mem_op(name: str, model: PromotableMemOp) -> None:
    """Let `mem2reg` rewrite ops called `name` that read or write a slot."""
    _MEM_OPS[name] = model


def register_destructurable_allocation(
    name: str, model: DestructurableAllocation
) -> None:
    """Let `sroa` split the slots of ops called `name`."""
    _DESTRUCTURABLE[name] = model


def register_destructurable_accessor(name: str, model: DestructurableAccessor) -> None:
    """Let `sroa` move ops called `name` onto element slots."""
    _ACCESSORS[name] = model


def _lookup(table: Mapping[str, _Model], op: Operation) -> _Model | None:
    """The model of `op`; never one for an unregistered op spelt like a known one."""
    model = table.get(op.name)
    if model is None or not operation_name(op).is_registered:
        return None
    return model


def promotable_allocation(op: Operation) -> PromotableAllocation | None:
    return _lookup(_ALLOCATIONS, op)


def promotable_mem_op(op: Operation) -> PromotableMemOp | None:
    return _lookup(_MEM_OPS, op)


def destructurable_allocation(op: Operation) -> DestructurableAllocation | None:
    return _lookup(_DESTRUCTURABLE, op)


def destructurable_accessor(op: Operation) -> DestructurableAccessor | None:
    return _lookup(_ACCESSORS, op)


def allocators_by_region(
    op: Operation, is_allocator: Callable[[Operation], object]
) -> list[list[Operation]]:
    """For each non-empty region of `op`, the allocating ops nested in it, in
    program order (the lists MLIR's mem2reg and sroa build region by region)."""
    return [
        [nested for nested in region.walk() if is_allocator(nested)]
        for region in op.regions
        if region.first_block is not None
    ]


def in_rounds(
    allocators: Iterable[Operation], attempt: Callable[[Operation], bool]
) -> bool:
    """Call `attempt` on each allocator, then again on those it failed on, until a
    round succeeds on none (changing one slot may free another, as MLIR's
    `tryToPromoteMemorySlots` and `tryToDestructureMemorySlots` do); True if any
    attempt succeeded."""
    worklist = list(allocators)
    changed = False
    while True:
        kept = [allocator for allocator in worklist if not attempt(allocator)]
        if len(kept) == len(worklist):
            return changed
        changed = True
        worklist = kept
