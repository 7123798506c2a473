"""`DeadValues`: which SSA values a program needs (MLIR's `LivenessAnalysis` of
the dataflow framework, as `remove-dead-values` uses it), computed backwards
from what has to run.

A value is live when something that must stay reads it:

- an op with a memory effect (or unknown effects), and so any op with regions
  whose body has one; then every operand of the op and of the terminators in its
  regions is live, as is every operand of an op one of whose results is live;
- a return of a function whose callers are not all known (public, or named by
  something other than `func.call`); for a *tracked* function (private, with a
  body whose blocks end in `func.return` or branches, named only by `func.call`s
  inside the analysed op) return operand i is live when result i of some call is;
- a call's operand i when the tracked callee's argument i is live (every operand
  of a call to anything else);
- the operands of a branch that are not forwarded (a condition), and a
  forwarded operand when the successor's argument is. A block that an unknown
  terminator reaches keeps all its arguments live.

Unlike MLIR's analysis, a condition is always live, and a live op with regions
(an `scf.if`, an `scf.for`) keeps all its operands and the operands of its
regions' terminators: a region branch op is removed whole or kept whole. That
keeps more than MLIR does, never less.
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects import func
from xdsl.ir import Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.traits import IsTerminator

from passflow.transforms._branches import branch_operands, forwarded_operands
from passflow.transforms._speculation import is_memory_effect_free
from passflow.transforms._symbols import (
    SymbolTables,
    is_private,
    is_unknown_symbol_table,
    nearest_symbol_table,
    own_symbol_uses,
)
from passflow.transforms.call_graph import callable_region

__all__ = ["DeadValues"]


class DeadValues:
    """The live values under `top`, the tracked functions and their calls."""

    def __init__(self, top: Operation) -> None:
        self.top = top
        self.live: set[SSAValue] = set()
        self.live_ops: set[Operation] = set()
        self.calls: dict[func.FuncOp, list[func.CallOp]] = {}
        """Each tracked function's calls, in walk order."""
        self._callee: dict[func.CallOp, func.FuncOp] = {}
        self._worklist: list[SSAValue] = []
        self._find_tracked()
        self._seed()
        while self._worklist:
            self._propagate(self._worklist.pop())

    def is_live(self, value: SSAValue) -> bool:
        return value in self.live

    def callee(self, call: func.CallOp) -> func.FuncOp | None:
        """The tracked function `call` calls, if it calls one."""
        return self._callee.get(call)

    # --- tracked functions -----------------------------------------------------------

    def _find_tracked(self) -> None:
        if any(is_unknown_symbol_table(op) for op in self.top.walk()):
            return  # an unregistered op with a region may use any symbol
        candidates: dict[func.FuncOp, list[func.CallOp]] = {}
        for op in self.top.walk():
            if (
                isinstance(op, func.FuncOp)
                and op is not self.top
                and is_private(op)
                and callable_region(op) is not None
                and _returns_are_known(op)
            ):
                candidates[op] = []
        tables = SymbolTables()
        untracked: set[Operation] = set()
        for op in self.top.walk():
            refs = own_symbol_uses(op)
            scope = nearest_symbol_table(op) if refs else None
            for ref in refs:
                path = [] if scope is None else tables.resolve_path(scope, ref)
                target = path[-1] if path else None
                if (
                    isinstance(op, func.CallOp)
                    and ref is op.callee
                    and isinstance(target, func.FuncOp)
                    and target in candidates
                ):
                    candidates[target].append(op)
                    self._callee[op] = target
                else:
                    untracked.update(path)
        for function, calls in candidates.items():
            if function in untracked:
                for call in calls:
                    del self._callee[call]
            else:
                self.calls[function] = calls

    # --- roots -----------------------------------------------------------------

    def _seed(self) -> None:
        for op in self.top.walk():
            if op is self.top:
                continue
            if isinstance(op, func.CallOp):
                if op not in self._callee:
                    self._mark_op(op)
            elif op.successors:
                self._seed_branch(op)
            elif isinstance(op, func.ReturnOp):
                function = op.parent_op()
                if function not in self.calls:
                    self._mark_all(op.operands)
            elif op.has_trait(IsTerminator, value_if_unregistered=False):
                continue  # kept with its parent, live when the parent is
            elif op in self.calls:
                continue  # a tracked function's returns are live per call
            elif not _erasable(op):
                self._mark_op(op)
        for block in self._blocks():
            if any(branch_operands(pred) is None for pred in _predecessor_ops(block)):
                self._mark_all(block.args)

    def _seed_branch(self, op: Operation) -> None:
        layout = branch_operands(op)
        if layout is None:
            self._mark_all(op.operands)
            return
        forwarded = {i for r in layout.ranges(op) for i in r}
        self._mark_all(
            operand for i, operand in enumerate(op.operands) if i not in forwarded
        )

    def _blocks(self) -> Iterable[Block]:
        for op in self.top.walk():
            for region in op.regions:
                yield from region.blocks

    # --- propagation -----------------------------------------------------------------

    def _mark(self, value: SSAValue) -> None:
        if value not in self.live:
            self.live.add(value)
            self._worklist.append(value)

    def _mark_all(self, values: Iterable[SSAValue]) -> None:
        for value in values:
            self._mark(value)

    def _mark_op(self, op: Operation) -> None:
        """`op` stays: what it and its regions' terminators read is live."""
        if op in self.live_ops:
            return
        self.live_ops.add(op)
        if isinstance(op, func.CallOp) and op in self._callee:
            return
        self._mark_all(op.operands)
        for region in op.regions:
            for block in region.blocks:
                last = block.last_op
                if last is not None and last.regions:
                    self._mark_op(last)  # a terminator with regions: `scf.reduce`
                elif last is not None and not last.successors:
                    self._mark_all(last.operands)

    def _propagate(self, value: SSAValue) -> None:
        if isinstance(value, OpResult):
            op = value.op
            callee = self._callee.get(op) if isinstance(op, func.CallOp) else None
            if callee is not None:
                self.live_ops.add(op)
                for ret in _returns(callee):
                    self._mark(ret.operands[value.index])
            else:
                self._mark_op(op)
            return
        assert isinstance(value, BlockArgument)
        block = value.block
        parent = block.parent_op()
        calls = self.calls.get(parent) if isinstance(parent, func.FuncOp) else None
        if (
            calls is not None
            and block.parent is not None
            and block is block.parent.first_block
        ):
            for call in calls:
                self._mark(call.arguments[value.index])
            return
        region = block.parent
        if region is not None and block is region.first_block:
            if parent is not None and parent is not self.top:
                self._mark_op(parent)
            return
        for pred in _predecessor_ops(block):
            if branch_operands(pred) is None:
                continue  # its block's arguments are all live from the start
            for index, successor in enumerate(pred.successors):
                if successor is block:
                    self._mark(forwarded_operands(pred, index)[value.index])


def _predecessor_ops(block: Block) -> list[Operation]:
    """The terminators that branch to `block`."""
    found: list[Operation] = []
    for use in block.uses:
        if use.operation not in found:
            found.append(use.operation)
    return found


def _returns(function: func.FuncOp) -> list[func.ReturnOp]:
    return [
        block.last_op
        for block in function.body.blocks
        if isinstance(block.last_op, func.ReturnOp)
    ]


def _returns_are_known(function: func.FuncOp) -> bool:
    """Every block ends in `func.return` (with the function's result count) or a
    known branch, so results can be dropped from every return."""
    outputs = len(function.function_type.outputs.data)
    for block in function.body.blocks:
        last = block.last_op
        if isinstance(last, func.ReturnOp):
            if len(last.operands) != outputs:
                return False
        elif last is None or branch_operands(last) is None:
            return False
    return True


def _erasable(op: Operation) -> bool:
    """An op that may go when none of its results is needed: no memory effect,
    recursively (MLIR's `isMemoryEffectFree`)."""
    return is_memory_effect_free(op)
