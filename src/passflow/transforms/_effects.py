"""Dead-code facts and region DCE, fast on the common case.

xDSL answers "is this op dead?" by collecting memory-effect traits for every
query. Most ops are `Pure`: their answer is a property of the class, cached
here; everything else goes to xDSL's own functions. `erase_dead_code` is
MLIR's `runRegionDCE` (ops only): liveness flows from ops with effects to the
ops computing their operands, in one sweep (users before definitions: blocks
in post-order, ops in reverse) that is repeated only when a definition was
swept before a user that turned out live (graph regions, loops).
"""

from __future__ import annotations

from typing import NamedTuple

from xdsl.dialects.builtin import UnregisteredOp
from xdsl.ir import Block, Operation, Region
from xdsl.ir.post_order import PostOrderIterator
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.traits import (
    IsTerminator,
    MemoryEffect,
    NoMemoryEffect,
    SymbolOpInterface,
)
from xdsl.traits import is_side_effect_free as _xdsl_is_side_effect_free
from xdsl.transforms.dead_code_elimination import result_only_effects

__all__ = [
    "erase_dead_code",
    "is_side_effect_free",
    "is_trivially_dead",
    "would_be_trivially_dead",
]


class _ClassFacts(NamedTuple):
    never_dead: bool
    """Terminators and symbols are never erased as dead."""
    pure: bool
    """Every memory-effect trait is `NoMemoryEffect`: no effect, whatever the op."""


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
        )
        if not isinstance(op, UnregisteredOp):  # a class per op: do not keep them
            _facts[cls] = found
    return found


def would_be_trivially_dead(op: Operation) -> bool:
    """Whether `op` could be erased if its results were unused (MLIR's
    `wouldOpBeTriviallyDead`)."""
    facts = _class_facts(op)
    return not facts.never_dead and (facts.pure or result_only_effects(op))


def is_trivially_dead(op: Operation) -> bool:
    """Unused results and nothing else observable (MLIR's `isOpTriviallyDead`)."""
    return all(result.first_use is None for result in op.results) and (
        would_be_trivially_dead(op)
    )


def is_side_effect_free(op: Operation) -> bool:
    """Known to have no memory effect at all (MLIR's `isMemoryEffectFree`)."""
    return _class_facts(op).pure or _xdsl_is_side_effect_free(op)


class _Liveness:
    def __init__(self) -> None:
        self.live: set[Operation] = set()
        self.swept: set[Operation] = set()
        self.again = False

    def sweep_region(self, region: Region) -> None:
        entry = region.first_block
        if entry is None:
            return
        for block in PostOrderIterator(entry):
            for op in reversed(block.ops):
                self.sweep_op(op)

    def sweep_op(self, op: Operation) -> None:
        for region in op.regions:
            self.sweep_region(region)
        self.swept.add(op)
        live = self.live
        if op in live:
            return
        if not would_be_trivially_dead(op) or any(
            use.operation in live for result in op.results for use in result.uses
        ):
            live.add(op)
            self._check_operands(op)

    def _check_operands(self, op: Operation) -> None:
        """A definition swept before this (now live) user must be swept again."""
        for operand in op.operands:
            owner = operand.owner
            if owner in self.swept and owner not in self.live:
                self.again = True
                return


def erase_dead_code(region: Region, listener: PatternRewriterListener) -> bool:
    """Erase the ops of `region` (and nested regions) whose results only feed dead
    ops and that have no other effect; True if any was erased."""
    liveness = _Liveness()
    liveness.sweep_region(region)
    while liveness.again:
        liveness.again = False
        liveness.swept.clear()
        liveness.sweep_region(region)
    return _erase_dead(region, liveness.live, listener)


def _erase_dead(
    region: Region, live: set[Operation], listener: PatternRewriterListener
) -> bool:
    entry = region.first_block
    if entry is None:
        return False
    erased = False
    for block in PostOrderIterator(entry):
        erased = _erase_dead_in_block(block, live, listener) or erased
    return erased


def _erase_dead_in_block(
    block: Block, live: set[Operation], listener: PatternRewriterListener
) -> bool:
    erased = False
    for op in reversed(block.ops):
        if op in live:
            for region in op.regions:
                erased = _erase_dead(region, live, listener) or erased
            continue
        listener.handle_operation_removal(op)
        block.erase_op(op, safe_erase=False)
        erased = True
    return erased
