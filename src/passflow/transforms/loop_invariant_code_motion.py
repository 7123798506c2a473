"""`loop-invariant-code-motion`: hoist invariant ops out of loops (MLIR's LICM)."""

from __future__ import annotations

from collections import deque

from xdsl.dialects import affine, scf
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue
from xdsl.traits import IsTerminator

from passflow.pass_base import OperationPass
from passflow.transforms._effects import defines_allocated_register
from passflow.transforms._speculation import is_memory_effect_free, is_speculatable

__all__ = ["LOOP_OPS", "LoopInvariantCodeMotion", "move_loop_invariant_code"]

LOOP_OPS: tuple[type[Operation], ...] = (
    scf.ForOp,
    scf.ParallelOp,
    scf.WhileOp,
    affine.ForOp,
    affine.ParallelOp,
)
"""The xDSL ops treated as MLIR's `LoopLikeOpInterface`: every region of each is
a loop region (both of `scf.while`)."""


def _defining_op(value: SSAValue) -> Operation | None:
    """The op whose region defines `value` (MLIR's `getParentRegion()->getParentOp()`)."""
    owner = value.owner
    if isinstance(value, BlockArgument) and isinstance(owner, Block):
        return owner.parent_op()
    return owner.parent_op() if isinstance(owner, Operation) else None


def _defined_outside(loop: Operation, value: SSAValue) -> bool:
    parent = _defining_op(value)
    return parent is None or not loop.is_ancestor(parent)


def _can_be_hoisted(op: Operation, loop: Operation) -> bool:
    """Not a terminator, and every value `op` (or anything in it) uses comes from
    outside the loop or from inside `op` itself."""
    if op.has_trait(IsTerminator):
        return False
    for child in op.walk():
        for operand in child.operands:
            parent = _defining_op(operand)
            if parent is not None and op.is_ancestor(parent):
                continue
            if not _defined_outside(loop, operand):
                return False
    return True


def _should_move(op: Operation) -> bool:
    """MLIR's rule: no memory effect and speculatable, both looking into the op's
    regions when it has recursive effects or speculatability, so an invariant
    loop with a unit step or an `if` moves as a whole. An op defining an
    allocated register (`rv32.get_register : !riscv.reg<a0>`) stands for the
    register where it is, whatever xDSL declares, so it never moves
    (`_effects.defines_allocated_register`, the rule canonicalize and cse follow)."""
    if defines_allocated_register(op):
        return False
    return is_memory_effect_free(op) and is_speculatable(op)


def _hoist_from_region(loop: Operation, block: Block, region: Region) -> int:
    """Move the invariant ops of one loop region before `loop` (in `block`); revisit the users
    of each moved op, which may have become invariant."""
    worklist = deque(op for block in region.blocks for op in block.ops)
    moved = 0
    while worklist:
        op = worklist.popleft()
        if op.parent_region() is not region:
            continue
        if not _should_move(op) or not _can_be_hoisted(op, loop):
            continue
        op.detach()
        block.insert_op_before(op, loop)
        moved += 1
        for result in op.results:
            worklist.extend(
                use.operation
                for use in result.uses
                if use.operation.parent_region() is region
            )
    return moved


def move_loop_invariant_code(loop: Operation) -> int:
    """MLIR's `moveLoopInvariantCode` for one loop; the number of ops moved."""
    block = loop.parent
    if block is None:
        return 0
    return sum(_hoist_from_region(loop, block, region) for region in loop.regions)


class LoopInvariantCodeMotion(OperationPass):
    """Move side-effect-free, speculatable ops whose operands are all defined
    outside a loop to just before the loop, so they run once.

    Loops are visited innermost first, so an op hoisted out of an inner loop may
    then leave the outer one too. Ops with regions move as a whole when nothing
    in them has a memory effect or may trap and every value they use comes from
    outside the loop: an invariant inner loop with a unit step, an `scf.if`.
    The loops are those of `LOOP_OPS`.
    """

    name = "LoopInvariantCodeMotion"
    argument = "loop-invariant-code-motion"
    summary = "Hoist loop invariant instructions outside of the loop"

    def run_on_operation(self) -> None:
        loops = [
            op
            for op in self.get_operation().walk(region_first=True)
            if isinstance(op, LOOP_OPS)
        ]
        moved = sum(move_loop_invariant_code(loop) for loop in loops)
        if not moved:
            self.mark_all_analyses_preserved()
