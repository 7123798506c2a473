"""MLIR's `isMemoryEffectFree` and `isSpeculatable`, for hoisting code.

Moving an op out of a loop (or anywhere it might run when it would not have)
is only safe if the op has no memory effect and cannot trap. MLIR answers both
recursively: an op with recursive memory effects (a loop, an `if`) is as free
as the ops in its regions, a recursively speculatable op as speculatable as
they are. xDSL has the same traits but not on every op that has them in MLIR,
and a few xDSL ops claim more than MLIR allows. `_MEMORY_EFFECTS` and
`_SPECULATABILITY` hold MLIR 22's answer for those ops, so loops and regions
are hoisted as mlir-opt hoists them and nothing that may trap is.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum

from xdsl.dialects import affine, arith, memref, scf, tensor, vector
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    TensorType,
)
from xdsl.dialects.linalg.ops import FillOp as LinalgFillOp
from xdsl.dialects.linalg.ops import GenericOp as LinalgGenericOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Operation, SSAValue
from xdsl.traits import (
    ConditionallySpeculatable,
    ConstantLike,
    MemoryEffect,
    RecursivelySpeculatable,
    RecursiveMemoryEffect,
)
from xdsl.utils.hints import isa

__all__ = ["is_memory_effect_free", "is_speculatable"]


class _Effects(Enum):
    """How an op's memory effects are known (MLIR's MemoryEffectOpInterface and
    HasRecursiveMemoryEffects)."""

    NONE = "none"
    """Declares no effect of its own, and has no recursive effects."""
    RECURSIVE = "recursive"
    """Declares no effect of its own; has the effects of the ops it holds."""
    SOME = "some"
    """Has effects, or they are unknown."""


class _Speculatability(Enum):
    """MLIR's `Speculation::Speculatability`."""

    NOT = "not"
    SPECULATABLE = "speculatable"
    RECURSIVE = "recursive"
    """Speculatable if every op in its regions is."""


def _constant_int(value: SSAValue) -> tuple[int, int] | None:
    """The (value, bit width) of a constant integer or index, if `value` is one."""
    attr = ConstantLike.get_constant_value(value)
    if not isa(attr, IntegerAttr[IntegerType | IndexType]):
        return None
    attr_type = attr.type
    if isinstance(attr_type, IntegerType):
        return attr.value.data, attr_type.width.data
    return attr.value.data, 64  # index


def _unsigned_division(op: Operation) -> _Speculatability:
    """`arith.divui`, `arith.ceildivui`: division by zero is undefined behaviour,
    so only a constant non-zero divisor makes them speculatable."""
    assert isinstance(op, arith.DivUIOp | arith.CeilDivUIOp)
    rhs = _constant_int(op.rhs)
    if rhs is None or rhs[0] % (1 << rhs[1]) == 0:
        return _Speculatability.NOT
    return _Speculatability.SPECULATABLE


def _signed_division(op: Operation) -> _Speculatability:
    """`arith.divsi`, `arith.ceildivsi`: division by zero and `MIN / -1` are
    undefined behaviour: the divisor must be a constant neither 0 nor all ones.
    (xDSL marks `ceildivsi` `Pure`, which would let it be hoisted.)"""
    assert isinstance(op, arith.DivSIOp | arith.CeilDivSIOp)
    rhs = _constant_int(op.rhs)
    if rhs is None:
        return _Speculatability.NOT
    bits = rhs[0] % (1 << rhs[1])
    if bits in (0, (1 << rhs[1]) - 1):
        return _Speculatability.NOT
    return _Speculatability.SPECULATABLE


def _dim(op: Operation) -> _Speculatability:
    """`tensor.dim`, `memref.dim`: an index out of the (known) rank is undefined
    behaviour, so only a constant index below the rank is speculatable."""
    assert isinstance(op, tensor.DimOp | memref.DimOp)
    source_type = op.source.type
    index = _constant_int(op.index)
    if index is None or not isinstance(source_type, TensorType | MemRefType):
        return _Speculatability.NOT
    rank = source_type.get_num_dims()
    return _Speculatability.SPECULATABLE if index[0] < rank else _Speculatability.NOT


def _scf_for(op: Operation) -> _Speculatability:
    """A step of 1 terminates whatever the bounds; another step may not."""
    assert isinstance(op, scf.ForOp)
    step = _constant_int(op.step)
    if step is not None and step[0] == 1:
        return _Speculatability.RECURSIVE
    return _Speculatability.NOT


def _affine_for(op: Operation) -> _Speculatability:
    assert isinstance(op, affine.ForOp)
    if op.step.value.data == 1:
        return _Speculatability.RECURSIVE
    return _Speculatability.NOT


def _tensor_only(op: Operation) -> bool:
    return not any(isinstance(v.type, MemRefType) for v in op.operands)


def _linalg_generic_effects(op: Operation) -> _Effects:
    """Effects on its memref operands; on tensors only those of its body."""
    return _Effects.RECURSIVE if _tensor_only(op) else _Effects.SOME


def _linalg_generic(op: Operation) -> _Speculatability:
    """On tensors, as speculatable as its body; on buffers, not at all."""
    return _Speculatability.RECURSIVE if _tensor_only(op) else _Speculatability.NOT


def _on_tensors_effects(op: Operation) -> _Effects:
    """`vector.transfer_read`/`_write`: they touch memory only through a memref."""
    return _Effects.NONE if _tensor_only(op) else _Effects.SOME


def _on_tensors(op: Operation) -> _Speculatability:
    """Out-of-bounds elements of a tensor are padded or dropped: speculatable; a
    memref access is not."""
    return _Speculatability.SPECULATABLE if _tensor_only(op) else _Speculatability.NOT


def _always(_: Operation) -> _Speculatability:
    return _Speculatability.SPECULATABLE


def _no_effects(_: Operation) -> _Effects:
    return _Effects.NONE


def _recursive_effects(_: Operation) -> _Effects:
    return _Effects.RECURSIVE


_MEMORY_EFFECTS: dict[type[Operation], Callable[[Operation], _Effects]] = {
    affine.ForOp: _recursive_effects,
    affine.ParallelOp: _recursive_effects,
    affine.MinOp: _no_effects,
    arith.ExtSIOp: _no_effects,
    arith.RemUIOp: _no_effects,
    LinalgFillOp: _linalg_generic_effects,
    LinalgGenericOp: _linalg_generic_effects,
    LinalgYieldOp: _no_effects,
    vector.TransferReadOp: _on_tensors_effects,
    vector.TransferWriteOp: _on_tensors_effects,
}
"""MLIR 22's memory effects of xDSL ops that declare none or other ones."""

_SPECULATABILITY: dict[type[Operation], Callable[[Operation], _Speculatability]] = {
    affine.ForOp: _affine_for,
    affine.MinOp: _always,
    arith.CeilDivSIOp: _signed_division,
    arith.CeilDivUIOp: _unsigned_division,
    arith.DivSIOp: _signed_division,
    arith.DivUIOp: _unsigned_division,
    arith.ExtSIOp: _always,
    arith.RemUIOp: _always,
    LinalgGenericOp: _linalg_generic,
    LinalgYieldOp: _always,
    memref.DimOp: _dim,
    scf.ForOp: _scf_for,
    tensor.DimOp: _dim,
    tensor.EmptyOp: _always,
    vector.TransferReadOp: _on_tensors,
    vector.TransferWriteOp: _on_tensors,
}
"""MLIR 22's speculatability of xDSL ops that declare none or a wrong one."""


def _effects(op: Operation) -> _Effects:
    known = _MEMORY_EFFECTS.get(type(op))
    if known is not None:
        return known(op)
    traits = op.get_traits_of_type(MemoryEffect)
    recursive = any(isinstance(t, RecursiveMemoryEffect) for t in traits)
    own = [t for t in traits if not isinstance(t, RecursiveMemoryEffect)]
    if own and not all(t.get_effects(op) == set() for t in own):
        return _Effects.SOME
    if recursive:
        return _Effects.RECURSIVE
    return _Effects.NONE if own else _Effects.SOME


def is_memory_effect_free(op: Operation) -> bool:
    """No memory effect, its own or (for recursive ops) of any op it holds; an op
    whose effects are unknown is not free (MLIR's `isMemoryEffectFree`)."""
    effects = _effects(op)
    if effects is _Effects.NONE:
        return True
    if effects is _Effects.SOME:
        return False
    return all(
        is_memory_effect_free(child)
        for region in op.regions
        for block in region.blocks
        for child in block.ops
    )


def _speculatability(op: Operation) -> _Speculatability:
    """The op's own speculatability, before looking into its regions."""
    known = _SPECULATABILITY.get(type(op))
    if known is not None:
        return known(op)
    trait = op.get_trait(ConditionallySpeculatable)
    if trait is None:
        return _Speculatability.NOT
    if isinstance(trait, RecursivelySpeculatable):
        return _Speculatability.RECURSIVE
    if trait.is_speculatable(op):
        return _Speculatability.SPECULATABLE
    return _Speculatability.NOT


def is_speculatable(op: Operation) -> bool:
    """Whether running `op` where it would not have run cannot trap or loop
    forever (MLIR's `isSpeculatable`)."""
    kind = _speculatability(op)
    if kind is _Speculatability.RECURSIVE:
        return all(
            is_speculatable(child)
            for region in op.regions
            for block in region.blocks
            for child in block.ops
        )
    return kind is _Speculatability.SPECULATABLE
