"""Effect facts (dead code, and when an op may be merged or moved), fast on the
common case.

xDSL answers "is this op dead?" by collecting memory-effect traits for every
query. Most ops are `Pure`: their answer is a property of the class, cached
here; everything else goes to xDSL's own functions. Region DCE (MLIR's
`runRegionDCE`) is in `region_simplify.py`.

`reuse_of` and `is_uniquable_constant` are the one rule deciding when an op's
results may stand in for an equal op's (CSE) and when a constant may be merged
with an equal one and hoisted (the greedy driver's constant uniquing).
"""

from __future__ import annotations

from enum import Enum
from typing import NamedTuple

from xdsl.backend.register_type import RegisterType
from xdsl.dialects.builtin import UnregisteredOp
from xdsl.ir import Operation
from xdsl.traits import (
    ConstantLike,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    NoMemoryEffect,
    SymbolOpInterface,
    only_has_effect,
)
from xdsl.traits import is_side_effect_free as _xdsl_is_side_effect_free

from passflow.xdsl_internals import only_affects_own_results

__all__ = [
    "Reuse",
    "defines_allocated_register",
    "is_side_effect_free",
    "is_trivially_dead",
    "is_uniquable_constant",
    "reuse_of",
    "would_be_trivially_dead",
]


class _ClassFacts(NamedTuple):
    never_dead: bool
    """Terminators and symbols are never erased as dead."""
    pure: bool
    """Every memory-effect trait is `NoMemoryEffect`: no effect, whatever the op."""
    constant_like: bool
    """The class has xDSL's `ConstantLike` trait."""


_facts: dict[type[Operation], _ClassFacts] = {}


def _class_facts(op: Operation) -> _ClassFacts:
    cls = type(op)
    found = _facts.get(cls)
    if found is None:
        effects = op.get_traits_of_type(MemoryEffect)
        found = _ClassFacts(
            op.has_trait(IsTerminator, value_if_unregistered=False)
            or op.has_trait(SymbolOpInterface, value_if_unregistered=False),
            bool(effects) and all(isinstance(t, NoMemoryEffect) for t in effects),
            op.has_trait(ConstantLike, value_if_unregistered=False),
        )
        if not isinstance(op, UnregisteredOp):  # a class per op: do not keep them
            _facts[cls] = found
    return found


def would_be_trivially_dead(op: Operation) -> bool:
    """Whether `op` could be erased if its results were unused (MLIR's
    `wouldOpBeTriviallyDead`)."""
    facts = _class_facts(op)
    return not facts.never_dead and (facts.pure or only_affects_own_results(op))


def is_trivially_dead(op: Operation) -> bool:
    """Unused results and nothing else observable (MLIR's `isOpTriviallyDead`)."""
    return all(result.first_use is None for result in op.results) and (
        would_be_trivially_dead(op)
    )


def is_side_effect_free(op: Operation) -> bool:
    """Known to have no memory effect at all (MLIR's `isMemoryEffectFree`)."""
    return _class_facts(op).pure or _xdsl_is_side_effect_free(op)


# --- when results may be reused, merged or moved --------------------------------


class Reuse(Enum):
    """Where an equal earlier op's results may replace an op's (see `reuse_of`)."""

    ANYWHERE = "anywhere"
    """A plain value: any equal op that dominates it will do, and a constant may
    be merged with an equal constant and hoisted to its region's entry."""
    SAME_BLOCK = "same-block"
    """Only reads: an equal op earlier in the same block, with no op in between
    that may write, will do (MLIR's CSE of read-only ops)."""
    NEVER = "never"
    """Writes, has unknown effects, or defines an allocated register: never
    merged, never moved."""


def defines_allocated_register(op: Operation) -> bool:
    """Whether a result of `op` has an allocated register type (`!riscv.reg<a0>`,
    `!x86.reg64<rax>`, `!riscv.reg<j_0>`: any xDSL `RegisterType` whose register is
    set; every backend's register types derive from it).

    Such a value names a machine location, not a value: `rv32.li 5 :
    !riscv.reg<a0>` means "a0 := 5 here", and a later `rv32.li 7 : !riscv.reg<a0>`
    overwrites it, so two equal ops do not hold the same thing at their uses. xDSL
    says so for most backend instructions with `RegisterAllocatedMemoryEffect` (a
    write of the register), but not for the `get_register` ops, which are `Pure`
    yet stand for whatever the register holds where they are (the RISC-V
    interpreter reads the register file there, and `x86-regalloc-verify-liveness`
    rejects a value kept live across a write of its register). The type, not the
    declared effect, is therefore what pins the op. Unallocated registers
    (`!riscv.reg`) are plain SSA values until allocation and do not pin it.
    """
    for result in op.results:
        found = result.type
        if isinstance(found, RegisterType) and found.is_allocated:
            return True
    return False


def reuse_of(op: Operation) -> Reuse:
    """The one rule for CSE and the greedy driver's constant uniquing and hoisting:
    where an equal earlier op's results may replace `op`'s.

    `ANYWHERE` needs what MLIR needs (no memory effect at all) and, for xDSL's
    backend dialects, no result in an allocated register (see
    `defines_allocated_register`). `SAME_BLOCK` is MLIR's rule for ops that only
    read. Anything else is `NEVER`. MLIR's OperationFolder hoists and merges every
    `ConstantLike` op because MLIR's constants are effect free; xDSL's are not
    always (`rv32.li` writes its register once allocated, `wasmssa.global_get`
    declares no effect at all), and xDSL's own canonicalizer never moves or merges
    a constant, so it never needed the assumption. passflow does move and merge
    them, as MLIR does, so it asks this instead of trusting the trait.
    """
    if defines_allocated_register(op):
        return Reuse.NEVER
    if is_side_effect_free(op):
        return Reuse.ANYWHERE
    if only_has_effect(op, MemoryEffectKind.READ):
        return Reuse.SAME_BLOCK
    return Reuse.NEVER


def is_uniquable_constant(op: Operation) -> bool:
    """Whether `op` is a constant the greedy driver may merge with an equal one
    (same dialect, folded value and type) and hoist to the entry of its region,
    as MLIR's OperationFolder does.

    It must be `ConstantLike` with one result and `reuse_of` it `ANYWHERE`, and
    have no operands and no regions: MLIR's constants have none, but xDSL's
    `equivalence.const_class` takes the values of its e-class as operands, and
    hoisting it above their definitions would break dominance (merging two by
    value would drop one's e-class members).
    """
    return (
        _class_facts(op).constant_like
        and len(op.results) == 1
        and not op.operands
        and not op.regions
        and reuse_of(op) is Reuse.ANYWHERE
    )


# --- region DCE ---------------------------------------------------------------------
