"""`control-flow-sink`: move ops into the conditional regions that alone use them
(MLIR's ControlFlowSink and `controlFlowSink` from ControlFlowSinkUtils)."""

from __future__ import annotations

from xdsl.dialects import scf
from xdsl.ir import Operation, Region
from xdsl.rewriter import InsertPoint, Rewriter

from passflow.analyses.dominance import DominanceInfo
from passflow.pass_base import OperationPass
from passflow.statistics import Statistic
from passflow.transforms._speculation import is_memory_effect_free
from passflow.transforms.constant_propagation import REGION_BRANCH_OPS

__all__ = ["SINGLY_EXECUTED", "ControlFlowSink", "control_flow_sink"]

SINGLY_EXECUTED: tuple[type[Operation], ...] = (scf.IfOp, scf.IndexSwitchOp)
"""The xDSL region branch ops whose every region runs at most once per execution
of the op (MLIR's `getRegionInvocationBounds` with an upper bound of 1). In MLIR
22, `scf.execute_region`, `affine.if` and the loops give no such bound, so
nothing is sunk into them."""


class _Sinker:
    """One `controlFlowSink` call: the regions of one op, sunk in order."""

    def __init__(self, dominance: DominanceInfo) -> None:
        self.dominance = dominance
        self.sunk = 0

    def _users_dominated(self, op: Operation, region: Region) -> bool:
        entry = region.first_block
        assert entry is not None
        for result in op.results:
            for use in result.uses:
                user = use.operation
                block = user.parent
                if block is None:
                    return False
                if not (
                    self.dominance.dominates(entry, block) or region.is_ancestor(user)
                ):
                    return False
        return True

    def _sink_operands_of(
        self, user: Operation, region: Region, stack: list[Operation]
    ) -> None:
        for value in user.operands:
            op = value.owner
            if not isinstance(op, Operation) or region.is_ancestor(op):
                continue
            if self._users_dominated(op, region) and is_memory_effect_free(op):
                entry = region.first_block
                assert entry is not None
                op.detach()
                Rewriter.insert_op(op, InsertPoint.at_start(entry))
                self.sunk += 1
                stack.append(op)

    def sink_region(self, region: Region) -> None:
        if region.first_block is None:
            return
        stack = list(region.walk())
        while stack:
            self._sink_operands_of(stack.pop(), region, stack)


def control_flow_sink(op: Operation, dominance: DominanceInfo) -> int:
    """Sink into each region of `op` the ops defined outside it whose users are
    all dominated by its entry block and that have no memory effect; the number
    of ops moved (each moves to the front of the region's entry block)."""
    sinker = _Sinker(dominance)
    for region in op.regions:
        sinker.sink_region(region)
    return sinker.sunk


class ControlFlowSink(OperationPass):
    """Move side-effect free ops whose results are only used inside one region of
    an `scf.if` or `scf.index_switch` into that region, so paths that do not
    need them do not compute them.

    The opposite of `loop-invariant-code-motion`: ops are never duplicated, and
    only go into regions that run at most once (`SINGLY_EXECUTED`). A whole chain
    of ops feeding the region moves with it, and ops with regions move as a whole.
    Ops that may trap but have no memory effect (a division) move too, as in
    MLIR: they then run only when the region does. `num-sunk` counts, as MLIR's
    statistic does, the ops sunk into the last region op visited (the walk is
    post-order), not the whole run.
    """

    name = "ControlFlowSink"
    argument = "control-flow-sink"
    summary = "Sink operations into conditional blocks"
    description = """\
This pass implements control-flow sink on operations that implement
`RegionBranchOpInterface` by moving dominating operations whose only uses
are in a conditionally-executed regions into those regions so that
executions paths where their results are not needed do not perform
unnecessary computations.

This is similar (but opposite) to loop-invariant code motion, which hoists
operations out of regions executed more than once. The implementation of
control-flow sink uses a simple and conversative cost model: operations are
never duplicated and are only moved into singly-executed regions.

It is recommended to run canonicalization first to remove unreachable
blocks: ops in unreachable blocks may prevent other operations from being
sunk as they may contain uses of their results
"""

    num_sunk = Statistic("num-sunk", "Number of operations sunk")

    def run_on_operation(self) -> None:
        dominance = self.get_analysis(DominanceInfo)
        branches = [
            op
            for op in self.get_operation().walk(region_first=True)
            if isinstance(op, REGION_BRANCH_OPS)
        ]
        moved = False
        for op in branches:
            sunk = (
                control_flow_sink(op, dominance)
                if isinstance(op, SINGLY_EXECUTED)
                else 0
            )
            self.num_sunk = sunk
            moved = moved or sunk > 0
        if not moved:
            self.mark_all_analyses_preserved()
