"""`sccp`: sparse conditional constant propagation (MLIR's SCCP pass)."""

from __future__ import annotations

from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator

from passflow.pass_base import OperationPass
from passflow.transforms._effects import would_be_trivially_dead
from passflow.transforms._simulated_fold import materialize
from passflow.transforms._speculation import is_memory_effect_free
from passflow.transforms._symbols import is_symbol
from passflow.transforms.constant_propagation import ConstantPropagation, ConstantValue
from passflow.transforms.greedy import insertion_region

__all__ = ["SCCP"]


class _ConstantFolder:
    """MLIR's `OperationFolder` as SCCP uses it: one constant per dialect, value
    and type in each insertion region, made at the front of its entry block."""

    def __init__(self, analysis: ConstantPropagation) -> None:
        self.analysis = analysis
        self.made: dict[tuple[Region, str, Attribute, Attribute], SSAValue] = {}

    def replace(self, value: SSAValue, block: Block) -> bool:
        """Replace every use of `value` by its constant, if it has one."""
        lattice = self.analysis.lattice(value)
        if not isinstance(lattice, ConstantValue):
            return False
        constant = self._constant(lattice, value.type, block)
        if constant is None:
            return False
        value.replace_all_uses_with(constant)
        return True

    def _constant(
        self, lattice: ConstantValue, type: Attribute, block: Block
    ) -> SSAValue | None:
        region = insertion_region(block)
        entry = None if region is None else region.first_block
        if region is None or entry is None:
            return None
        key = (region, lattice.dialect, lattice.value, type)
        found = self.made.get(key)
        if found is None:
            op = materialize(self.analysis.ctx, lattice.dialect, lattice.value, type)
            if op is None or len(op.results) != 1:
                return None
            Rewriter.insert_op(op, InsertPoint.at_start(entry))
            found = self.made[key] = op.results[0]
        return found


class SCCP(OperationPass):
    """Replace every value proven constant by a constant, and erase the ops left
    dead, following only the control flow that can execute.

    The analysis (`constant_propagation.ConstantPropagation`) is optimistic: a
    block argument fed 1 on every executable edge is 1 even when a never-taken
    edge would feed something else, and a private function called with 1
    everywhere has an argument of 1. New constants are made by the dialect of the
    op that produced the value, at the front of the nearest isolated region's
    entry block, one per value and type; an op is erased once all its results
    were replaced, if it is trivially dead. Branches are left as they are (their
    conditions become constants); `canonicalize` removes what can no longer run.
    """

    name = "SCCP"
    argument = "sccp"
    summary = "Sparse Conditional Constant Propagation"
    description = """\
This pass implements a general algorithm for sparse conditional constant
propagation. This algorithm detects values that are known to be constant and
optimistically propagates this throughout the IR. Any values proven to be
constant are replaced, and removed if possible.

This implementation is based on the algorithm described by Wegman and Zadeck
in [“Constant Propagation with Conditional Branches”](https://dl.acm.org/doi/10.1145/103135.103136) (1991).
"""

    def run_on_operation(self) -> None:
        top = self.get_operation()
        analysis = ConstantPropagation(top, self.get_context())
        if not _rewrite(top, _ConstantFolder(analysis)):
            self.mark_all_analyses_preserved()


def _rewrite(top: Operation, folder: _ConstantFolder) -> bool:
    """MLIR's rewrite step: replace results, then block arguments, region by region."""
    changed = False
    worklist: list[Region] = list(top.regions)
    while worklist:
        region = worklist.pop()
        for block in region.blocks:
            for op in list(block.ops):
                replaced_all = bool(op.results)
                for result in op.results:
                    replaced = folder.replace(result, block)
                    changed = changed or replaced
                    replaced_all = replaced_all and replaced
                if replaced_all and _dead_once_unused(op):
                    Rewriter.erase_op(op)
                    continue
                worklist.extend(op.regions)
            for arg in block.args:
                changed = folder.replace(arg, block) or changed
    return changed


def _dead_once_unused(op: Operation) -> bool:
    """MLIR's `wouldOpBeTriviallyDead`, with MLIR's effects for the xDSL ops that
    declare none (an `affine.for` is as free of effects as its body)."""
    if would_be_trivially_dead(op):
        return True
    return (
        bool(op.regions)
        and not op.has_trait(IsTerminator, value_if_unregistered=True)
        and not is_symbol(op)
        and is_memory_effect_free(op)
    )
