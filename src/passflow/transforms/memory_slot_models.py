"""The memory slot models of `memref` and `llvm` ops (MLIR's MemRefMemorySlot.cpp
and LLVMMemorySlot.cpp), registered in `passflow.transforms.memory_slots`.

- `memref.alloca` of a static shape with one element is a promotable slot; of a
  static shape with 2 to 16 elements, a destructurable one whose elements are
  named by `[i, j, ...]` index arrays. Its default value is `ub.poison`.
- `memref.load` and `memref.store` read and write it; for `sroa` their indices
  must all be constants (`arith.constant` or another constant op) within bounds.
- `llvm.alloca` in an entry block is a promotable slot of its element type; its
  default value is `llvm.mlir.undef`. `llvm.load` (not volatile) and `llvm.store`
  (not volatile, not storing the slot's own pointer) read and write it when their
  type is the slot's. MLIR also promotes loads and stores of another type through
  casts, and intrinsics and GEPs: those uses leave the slot alone here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from xdsl.dialects import memref, ub
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute, Operation, OpResult, SSAValue
from xdsl.traits import ConstantLike

from passflow.ir import operation_name
from passflow.transforms.memory_slots import (
    DestructurableAccessor,
    DestructurableAllocation,
    DestructurableSlot,
    MemorySlot,
    PromotableAllocation,
    PromotableMemOp,
    register_destructurable_accessor,
    register_destructurable_allocation,
    register_promotable_allocation,
    register_promotable_mem_op,
)

__all__ = [
    "MAX_LLVM_ARRAY_ELEMENTS_TO_DESTRUCTURE",
    "MAX_MEMREF_ELEMENTS_TO_DESTRUCTURE",
    "register_builtin_models",
]

MAX_MEMREF_ELEMENTS_TO_DESTRUCTURE = 16
"""MLIR's `maxMemrefSizeForDestructuring`."""


def _static_element_count(memref_type: MemRefType) -> int | None:
    shape = memref_type.get_shape()
    if any(dim < 0 for dim in shape):
        return None
    count = 1
    for dim in shape:
        count *= dim
    return count


def _is_volatile(op: Operation) -> bool:
    return op.get_attr_or_prop("volatile_") is not None


class _MemRefAlloca(PromotableAllocation, DestructurableAllocation):
    def promotable_slots(self, op: Operation) -> list[MemorySlot]:
        assert isinstance(op, memref.AllocaOp)
        memref_type = op.memref.type
        assert isinstance(memref_type, MemRefType)
        if _static_element_count(memref_type) != 1:
            return []
        return [MemorySlot(op.memref, memref_type.element_type)]

    def default_value(self, op: Operation, slot: MemorySlot) -> Operation:
        return ub.PoisonOp(slot.elem_type)

    def destructurable_slots(self, op: Operation) -> list[DestructurableSlot]:
        assert isinstance(op, memref.AllocaOp)
        memref_type = op.memref.type
        assert isinstance(memref_type, MemRefType)
        count = _static_element_count(memref_type)
        if count is None or count == 1 or count > MAX_MEMREF_ELEMENTS_TO_DESTRUCTURE:
            return []
        indices = _all_indices(memref_type.get_shape())
        element = memref_type.element_type
        return [
            DestructurableSlot(
                op.memref, memref_type, {index: element for index in indices}
            )
        ]

    def destructure(
        self, op: Operation, slot: DestructurableSlot, used: list[Attribute]
    ) -> dict[Attribute, MemorySlot]:
        subslots: dict[Attribute, MemorySlot] = {}
        after = op
        for index in used:
            element = slot.subelement_types[index]
            sub = memref.AllocaOp.get(element, shape=[])
            block = op.parent_block()
            assert block is not None
            block.insert_op_after(sub, after)
            after = sub
            subslots[index] = MemorySlot(sub.memref, element)
        return subslots


def _all_indices(shape: tuple[int, ...]) -> list[Attribute]:
    """Every coordinate of `shape` as an array of index attributes, the first
    dimension varying fastest (MLIR's walkIndicesAsAttr)."""
    indices: list[Attribute] = []
    current = [0] * len(shape)
    while True:
        indices.append(ArrayAttr([IntegerAttr(i, IndexType()) for i in current]))
        for dim, size in enumerate(shape):
            current[dim] += 1
            if current[dim] < size:
                break
            current[dim] = 0
        else:
            return indices


_CONSTANTS_WITHOUT_TRAIT = frozenset({"llvm.mlir.constant"})
"""Constant ops whose xDSL class lacks `ConstantLike` (MLIR's has it)."""


def _constant_index(value: SSAValue) -> int | None:
    """The integer a constant op defines `value` as (MLIR's `m_Constant`)."""
    if not isinstance(value, OpResult):
        return None
    op = value.op
    if not op.has_trait(ConstantLike, value_if_unregistered=False) and not (
        op.name in _CONSTANTS_WITHOUT_TRAIT and operation_name(op).is_registered
    ):
        return None
    attr = value.op.get_attr_or_prop("value")
    if not isinstance(attr, IntegerAttr):
        return None
    return attr.value.data


def _memref_index(
    memref_value: SSAValue, indices: tuple[SSAValue, ...]
) -> Attribute | None:
    """The constant in-bounds coordinate given by `indices`, as an index array."""
    memref_type = memref_value.type
    if not isinstance(memref_type, MemRefType):
        return None
    coordinates: list[IntegerAttr] = []
    for value, size in zip(indices, memref_type.get_shape(), strict=False):
        coordinate = _constant_index(value)
        if coordinate is None or not 0 <= coordinate < size:
            return None
        coordinates.append(IntegerAttr(coordinate, IndexType()))
    return ArrayAttr(coordinates)


def _element_slot(
    memref_value: SSAValue,
    indices: Sequence[SSAValue],
    subslots: dict[Attribute, MemorySlot],
) -> SSAValue:
    """The pointer of the element slot an access with these indices moves to."""
    index = _memref_index(memref_value, tuple(indices))
    assert index is not None
    return subslots[index].ptr


class _MemRefLoad(PromotableMemOp, DestructurableAccessor):
    def loads_from(self, op: Operation, slot: MemorySlot) -> bool:
        assert isinstance(op, memref.LoadOp)
        return op.memref is slot.ptr

    def stores_to(self, op: Operation, slot: MemorySlot) -> bool:
        return False

    def can_uses_be_removed(
        self, op: Operation, slot: MemorySlot, operand_indices: frozenset[int]
    ) -> bool:
        assert isinstance(op, memref.LoadOp)
        return operand_indices == frozenset({0}) and op.res.type == slot.elem_type

    def stored_value(self, op: Operation, slot: MemorySlot) -> SSAValue:
        raise AssertionError("a load stores nothing")

    def remove_blocking_uses(
        self, op: Operation, slot: MemorySlot, reaching: SSAValue
    ) -> bool:
        assert isinstance(op, memref.LoadOp)
        op.res.replace_all_uses_with(reaching)
        return True

    def used_index(self, op: Operation, slot: DestructurableSlot) -> Attribute | None:
        assert isinstance(op, memref.LoadOp)
        if op.memref is not slot.ptr:
            return None
        return _memref_index(op.memref, tuple(op.indices))

    def rewire(
        self,
        op: Operation,
        slot: DestructurableSlot,
        subslots: dict[Attribute, MemorySlot],
    ) -> bool:
        assert isinstance(op, memref.LoadOp)
        op.operands = (_element_slot(op.memref, op.indices, subslots),)
        return False


class _MemRefStore(PromotableMemOp, DestructurableAccessor):
    def loads_from(self, op: Operation, slot: MemorySlot) -> bool:
        return False

    def stores_to(self, op: Operation, slot: MemorySlot) -> bool:
        assert isinstance(op, memref.StoreOp)
        return op.memref is slot.ptr

    def can_uses_be_removed(
        self, op: Operation, slot: MemorySlot, operand_indices: frozenset[int]
    ) -> bool:
        assert isinstance(op, memref.StoreOp)
        return (
            operand_indices == frozenset({1})
            and op.value is not slot.ptr
            and op.value.type == slot.elem_type
        )

    def stored_value(self, op: Operation, slot: MemorySlot) -> SSAValue:
        assert isinstance(op, memref.StoreOp)
        return op.value

    def remove_blocking_uses(
        self, op: Operation, slot: MemorySlot, reaching: SSAValue
    ) -> bool:
        return True

    def used_index(self, op: Operation, slot: DestructurableSlot) -> Attribute | None:
        assert isinstance(op, memref.StoreOp)
        if op.memref is not slot.ptr or op.value is slot.ptr:
            return None
        index = _memref_index(op.memref, tuple(op.indices))
        return index if index in slot.subelement_types else None

    def rewire(
        self,
        op: Operation,
        slot: DestructurableSlot,
        subslots: dict[Attribute, MemorySlot],
    ) -> bool:
        assert isinstance(op, memref.StoreOp)
        op.operands = (op.value, _element_slot(op.memref, op.indices, subslots))
        return False


class _LLVMAlloca(PromotableAllocation):
    """The llvm models read operands by position, so that `mem2reg` and `sroa`
    do not load the llvm dialect for IR without llvm ops."""

    def promotable_slots(self, op: Operation) -> list[MemorySlot]:
        block = op.parent_block()
        region = None if block is None else block.parent
        elem_type = op.get_attr_or_prop("elem_type")
        if region is None or region.first_block is not block or elem_type is None:
            return []
        return [MemorySlot(op.results[0], elem_type)]

    def default_value(self, op: Operation, slot: MemorySlot) -> Operation:
        from xdsl.dialects.llvm import UndefOp  # loaded: the IR holds llvm ops

        return UndefOp(slot.elem_type)


class _LLVMLoad(PromotableMemOp, DestructurableAccessor):
    def loads_from(self, op: Operation, slot: MemorySlot) -> bool:
        return op.operands[0] is slot.ptr

    def stores_to(self, op: Operation, slot: MemorySlot) -> bool:
        return False

    def can_uses_be_removed(
        self, op: Operation, slot: MemorySlot, operand_indices: frozenset[int]
    ) -> bool:
        return (
            operand_indices == frozenset({0})
            and op.results[0].type == slot.elem_type
            and not _is_volatile(op)
        )

    def stored_value(self, op: Operation, slot: MemorySlot) -> SSAValue:
        raise AssertionError("a load stores nothing")

    def remove_blocking_uses(
        self, op: Operation, slot: MemorySlot, reaching: SSAValue
    ) -> bool:
        op.results[0].replace_all_uses_with(reaching)
        return True

    def used_index(self, op: Operation, slot: DestructurableSlot) -> Attribute | None:
        if _is_volatile(op) or op.operands[0] is not slot.ptr:
            return None
        return _first_field_access(slot, op.results[0].type)

    def rewire(
        self,
        op: Operation,
        slot: DestructurableSlot,
        subslots: dict[Attribute, MemorySlot],
    ) -> bool:
        op.operands = (subslots[_FIRST_FIELD].ptr,)
        return False


class _LLVMStore(PromotableMemOp, DestructurableAccessor):
    def loads_from(self, op: Operation, slot: MemorySlot) -> bool:
        return False

    def stores_to(self, op: Operation, slot: MemorySlot) -> bool:
        return op.operands[1] is slot.ptr

    def can_uses_be_removed(
        self, op: Operation, slot: MemorySlot, operand_indices: frozenset[int]
    ) -> bool:
        value = op.operands[0]
        return (
            operand_indices == frozenset({1})
            and value is not slot.ptr
            and value.type == slot.elem_type
            and not _is_volatile(op)
        )

    def stored_value(self, op: Operation, slot: MemorySlot) -> SSAValue:
        return op.operands[0]

    def remove_blocking_uses(
        self, op: Operation, slot: MemorySlot, reaching: SSAValue
    ) -> bool:
        return True

    def used_index(self, op: Operation, slot: DestructurableSlot) -> Attribute | None:
        value, ptr = op.operands
        if _is_volatile(op) or ptr is not slot.ptr or value is slot.ptr:
            return None
        return _first_field_access(slot, value.type)

    def rewire(
        self,
        op: Operation,
        slot: DestructurableSlot,
        subslots: dict[Attribute, MemorySlot],
    ) -> bool:
        op.operands = (op.operands[0], subslots[_FIRST_FIELD].ptr)
        return False


MAX_LLVM_ARRAY_ELEMENTS_TO_DESTRUCTURE = 16
"""MLIR's `maxArraySizeForDestructuring`."""

_FIRST_FIELD = IntegerAttr(0, IntegerType(32))


def _field_index(index: int) -> Attribute:
    return IntegerAttr(index, IntegerType(32))


def _first_field_access(
    slot: DestructurableSlot, accessed: Attribute
) -> Attribute | None:
    """A load or store at the aggregate's address reads or writes its first
    field: passflow rewires it when the types match (MLIR also when the access is
    smaller than the field, by data layout)."""
    if slot.subelement_types.get(_FIRST_FIELD) != accessed:
        return None
    return _FIRST_FIELD


class _LLVMAggregateAlloca(DestructurableAllocation):
    """`llvm.alloca` of one struct, or of one array of at most 16 elements."""

    def destructurable_slots(self, op: Operation) -> list[DestructurableSlot]:
        from xdsl.dialects.llvm import LLVMArrayType, LLVMStructType

        if _constant_index(op.operands[0]) != 1:
            return []
        elem_type = op.get_attr_or_prop("elem_type")
        if isinstance(elem_type, LLVMStructType):
            fields = list(elem_type.types.data)
        elif isinstance(elem_type, LLVMArrayType):
            count = elem_type.size.data
            if count > MAX_LLVM_ARRAY_ELEMENTS_TO_DESTRUCTURE:
                return []
            fields = [elem_type.type] * count
        else:
            return []
        subelements = {_field_index(i): kind for i, kind in enumerate(fields)}
        return [DestructurableSlot(op.results[0], elem_type, subelements)]

    def destructure(
        self, op: Operation, slot: DestructurableSlot, used: list[Attribute]
    ) -> dict[Attribute, MemorySlot]:
        from xdsl.dialects.llvm import AllocaOp

        block = op.parent_block()
        assert block is not None
        subslots: dict[Attribute, MemorySlot] = {}
        after = op
        for index in used:
            element = slot.subelement_types[index]
            sub = AllocaOp(op.operands[0], element)
            del sub.properties["alignment"]
            block.insert_op_after(sub, after)
            after = sub
            subslots[index] = MemorySlot(sub.results[0], element)
        return subslots


class _LLVMGetElementPtr(DestructurableAccessor):
    """`llvm.getelementptr %slot[0, i]` on the slot's type, whose result is only
    loaded from and stored to with the type of field `i`."""

    def used_index(self, op: Operation, slot: DestructurableSlot) -> Attribute | None:
        if len(op.operands) != 1 or op.operands[0] is not slot.ptr:
            return None
        if op.get_attr_or_prop("elem_type") != slot.elem_type:
            return None
        raw = op.get_attr_or_prop("rawConstantIndices")
        if not isinstance(raw, DenseArrayBase):
            return None
        indices = [int(i) for i in cast("DenseArrayBase[Any]", raw).get_values()]
        if len(indices) != 2 or indices[0] != 0:
            return None
        index = _field_index(indices[1])
        field = slot.subelement_types.get(index)
        if field is None or not _only_accessed_as(op.results[0], field):
            return None
        return index

    def rewire(
        self,
        op: Operation,
        slot: DestructurableSlot,
        subslots: dict[Attribute, MemorySlot],
    ) -> bool:
        index = self.used_index(op, slot)
        assert index is not None
        op.results[0].replace_all_uses_with(subslots[index].ptr)
        return True


def _only_accessed_as(pointer: SSAValue, field: Attribute) -> bool:
    """Whether every use of `pointer` is a load from it or a store to it (not of
    it) of exactly `field`'s type: MLIR's `ensureOnlySafeAccesses`, with types
    compared instead of sizes."""
    for use in pointer.uses:
        user = use.operation
        if user.name == "llvm.load" and use.index == 0:
            if user.results[0].type != field:
                return False
        elif user.name == "llvm.store" and use.index == 1:
            if user.operands[0] is pointer or user.operands[0].type != field:
                return False
        else:
            return False
    return True


def register_builtin_models() -> None:
    """Fill the memory slot tables for the `memref` and `llvm` ops (idempotent:
    `mem2reg` and `sroa` both call it when their module is imported)."""
    memref_alloca = _MemRefAlloca()
    register_promotable_allocation("memref.alloca", memref_alloca)
    register_destructurable_allocation("memref.alloca", memref_alloca)
    memref_load = _MemRefLoad()
    register_promotable_mem_op("memref.load", memref_load)
    register_destructurable_accessor("memref.load", memref_load)
    memref_store = _MemRefStore()
    register_promotable_mem_op("memref.store", memref_store)
    register_destructurable_accessor("memref.store", memref_store)
    register_promotable_allocation("llvm.alloca", _LLVMAlloca())
    register_destructurable_allocation("llvm.alloca", _LLVMAggregateAlloca())
    llvm_load = _LLVMLoad()
    register_promotable_mem_op("llvm.load", llvm_load)
    register_destructurable_accessor("llvm.load", llvm_load)
    llvm_store = _LLVMStore()
    register_promotable_mem_op("llvm.store", llvm_store)
    register_destructurable_accessor("llvm.store", llvm_store)
    register_destructurable_accessor("llvm.getelementptr", _LLVMGetElementPtr())
