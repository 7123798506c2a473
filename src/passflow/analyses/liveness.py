"""Liveness: MLIR's `mlir::Liveness` analysis on the xDSL IR.

Which SSA values are live where: per block, the values live on entry (live-in)
and on exit (live-out); per value, the ops during which it is live (its live
range); per op, whether a value is dead after it, and which values are live while
it runs. Register allocators, buffer reuse and schedulers ask these questions; a
pass requests the analysis with `self.get_analysis(Liveness)` so that passes which
preserve it share one computation.

Semantics follow `mlir/lib/Analysis/Liveness.cpp`:

- The analysis covers every block nested in the op it is constructed on (nested
  regions included), each with the classic backward data-flow over its region's
  CFG: `in = (use | out) - def`, `out = union of the successors' in`, iterated to
  a fixed point.
- A block's uses include the operands of ops nested in its ops' regions, and its
  definitions their results and nested block arguments: a value defined above and
  used inside a nested region is live-in to the block of the op holding the
  region (and to the nested blocks that use it), and live across that op.
- A value escapes (is live-out of) its defining block when a user lies in another
  block of the same region; a use in a nested region does not make it escape.
- `print` writes `Liveness::print`'s report byte for byte (block and value
  numbering by a pre-order walk, `val_N` / `argN@B` names, the literal `\\b`
  MLIR writes before a closing `]`), with ops printed by the xDSL printer.

Like MLIR's, the analysis is computed eagerly and never updated: a pass that
changes the IR and keeps asking must compute a new one.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import TextIO

from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue

from passflow.ir import print_op_in_scope

__all__ = ["Liveness", "LivenessBlockInfo"]


def _successors(block: Block) -> Sequence[Block]:
    last = block.last_op
    return () if last is None else last.successors


def _ancestor_block_in_region(
    region: Region | None, block: Block | None
) -> Block | None:
    """`block` or its ancestor block that lies in `region` (MLIR's
    `Region::findAncestorBlockInRegion`); None if `block` is not nested in it."""
    while block is not None:
        parent = block.parent
        if parent is region:
            return block
        if parent is None:
            return None
        op = parent.parent
        if op is None:
            return None
        block = op.parent
    return None


def _ancestor_op_in_block(block: Block, op: Operation) -> Operation | None:
    """`op` or its ancestor op that lies in `block` (MLIR's
    `Block::findAncestorOpInBlock`); None if `op` is not nested in `block`."""
    current: Operation | None = op
    while current is not None:
        parent = current.parent
        if parent is block:
            return current
        current = None if parent is None else parent.parent_op()
    return None


def _users(value: SSAValue) -> Iterable[Operation]:
    return (use.operation for use in value.uses)


def _defining_op(value: SSAValue) -> Operation | None:
    return value.op if isinstance(value, OpResult) else None


def _defining_block(value: SSAValue) -> Block | None:
    if isinstance(value, BlockArgument):
        return value.block
    op = _defining_op(value)
    return None if op is None else op.parent


class LivenessBlockInfo:
    """Liveness of one block: MLIR's `LivenessBlockInfo`."""

    __slots__ = ("block", "in_values", "out_values")

    def __init__(
        self, block: Block, in_values: set[SSAValue], out_values: set[SSAValue]
    ) -> None:
        self.block = block
        self.in_values = in_values
        """Values live on entry to the block."""
        self.out_values = out_values
        """Values live on exit from the block."""

    def is_live_in(self, value: SSAValue) -> bool:
        return value in self.in_values

    def is_live_out(self, value: SSAValue) -> bool:
        return value in self.out_values

    def get_start_operation(self, value: SSAValue) -> Operation:
        """Where `value`'s live range in this block starts: the block's first op if
        it is live-in or a block argument, else its defining op."""
        defining = _defining_op(value)
        if self.is_live_in(value) or defining is None:
            first = self.block.first_op
            assert first is not None, "a block with live values has ops"
            return first
        return defining

    def get_end_operation(self, value: SSAValue, start: Operation) -> Operation:
        """Where `value`'s live range in this block ends: the block's last op if it
        is live-out, else its last user in the block (ops nested in an op count as
        that op), but never before `start`."""
        if self.is_live_out(value):
            last = self.block.last_op
            assert last is not None, "a block with live values has ops"
            return last
        end = start
        for user in _users(value):
            ancestor = _ancestor_op_in_block(self.block, user)
            if ancestor is not None and end.is_before_in_block(ancestor):
                end = ancestor
        return end

    def currently_live_values(self, op: Operation) -> set[SSAValue]:
        """The values live while `op` (an op of this block) executes: those whose
        live range in this block starts at or before `op` and ends at or after it."""
        live: set[SSAValue] = set()
        first = self.block.first_op
        last = self.block.last_op

        def add_if_live(value: SSAValue) -> None:
            start = _defining_op(value)
            end: Operation | None = None
            if self.is_live_in(value) or isinstance(value, BlockArgument):
                start = first
            elif start is not None:
                start = _ancestor_op_in_block(self.block, start)
            if self.is_live_out(value):
                end = last
            if start is not None and end is None:
                end = self.get_end_operation(value, start)
            assert start is not None and end is not None
            if not (op.is_before_in_block(start) or end.is_before_in_block(op)):
                live.add(value)

        for argument in self.block.args:
            add_if_live(argument)
        for value in self.in_values:
            add_if_live(value)
        for current in self.block.ops:
            for result in current.results:
                add_if_live(result)
            if current is op:
                break
        return live

    def __repr__(self) -> str:
        return (
            f"LivenessBlockInfo(in={len(self.in_values)}, out={len(self.out_values)})"
        )


class _BlockInfoBuilder:
    """A block's def, use, in and out sets while the fixed point is computed."""

    __slots__ = ("block", "def_values", "in_values", "out_values", "use_values")

    def __init__(self, block: Block) -> None:
        self.block = block
        self.in_values: set[SSAValue] = set()
        self.out_values: set[SSAValue] = set()
        self.def_values: set[SSAValue] = set()
        self.use_values: set[SSAValue] = set()
        region = block.parent

        def gather_out(value: SSAValue) -> None:
            # By SSA, a user in another block of this region comes after the
            # definition: the value escapes the block.
            for user in _users(value):
                if _ancestor_block_in_region(region, user.parent) is not block:
                    self.out_values.add(value)
                    return

        for argument in block.args:
            self.def_values.add(argument)
            gather_out(argument)
        for op in block.ops:
            for result in op.results:
                gather_out(result)
        for op in block.walk():
            self.def_values.update(op.results)
            self.use_values.update(op.operands)
            for nested in op.regions:
                for child in nested.blocks:
                    self.def_values.update(child.args)
        self.use_values -= self.def_values

    def update_live_in(self) -> bool:
        """`in = (use | out) - def`; whether it grew (it only ever grows)."""
        new_in = (self.use_values | self.out_values) - self.def_values
        if len(new_in) == len(self.in_values):
            return False
        self.in_values = new_in
        return True

    def update_live_out(self, builders: dict[Block, _BlockInfoBuilder]) -> None:
        for successor in _successors(self.block):
            self.out_values |= builders[successor].in_values


class Liveness:
    """MLIR's `mlir::Liveness`: live-in and live-out sets of every block nested in
    `op`, and the queries built on them. See the module docstring."""

    def __init__(self, op: Operation) -> None:
        self.operation = op
        self._blocks: dict[Block, LivenessBlockInfo] = {}
        builders: dict[Block, _BlockInfoBuilder] = {}
        pending: list[Block] = []
        queued: set[Block] = set()

        def enqueue(blocks: Iterable[Block]) -> None:
            for block in blocks:
                if block not in queued:
                    queued.add(block)
                    pending.append(block)

        for block in op.walk_blocks():
            builder = builders[block] = _BlockInfoBuilder(block)
            if builder.update_live_in():
                enqueue(block.predecessors())
        while pending:
            block = pending.pop()
            queued.discard(block)
            builder = builders[block]
            builder.update_live_out(builders)
            if builder.update_live_in():
                enqueue(block.predecessors())
        for block, builder in builders.items():
            self._blocks[block] = LivenessBlockInfo(
                block, builder.in_values, builder.out_values
            )

    # --- queries ------------------------------------------------------------------

    def get_liveness(self, block: Block) -> LivenessBlockInfo | None:
        """The liveness of `block`, or None if it is not nested in the analysed op."""
        return self._blocks.get(block)

    def _info(self, block: Block | None) -> LivenessBlockInfo:
        info = None if block is None else self._blocks.get(block)
        if info is None:
            raise ValueError("the block is not covered by this liveness analysis")
        return info

    def get_live_in(self, block: Block) -> set[SSAValue]:
        """The values live on entry to `block`."""
        return self._info(block).in_values

    def get_live_out(self, block: Block) -> set[SSAValue]:
        """The values live on exit from `block`."""
        return self._info(block).out_values

    def resolve_liveness(self, value: SSAValue) -> list[Operation]:
        """Every op during which `value` is live: in its defining block and the
        blocks using it from its definition (or their first op) to their last use
        (or their last op if it stays live), and through every successor that has
        it live-in. Unordered across blocks, as in MLIR."""
        result: list[Operation] = []
        start_block = _defining_block(value)
        if start_block is None:
            return result
        visited: set[Block] = {start_block}
        to_process: list[Block] = [start_block]
        for user in _users(value):
            block = user.parent
            if block is not None and block not in visited:
                visited.add(block)
                to_process.append(block)
        while to_process:
            block = to_process.pop()
            info = self._info(block)
            start = info.get_start_operation(value)
            end = info.get_end_operation(value, start)
            result.append(start)
            current: Operation | None = start
            while current is not end and current is not None:
                current = current.next_op
                if current is not None:
                    result.append(current)
            for successor in _successors(block):
                if self._info(successor).is_live_in(value) and successor not in visited:
                    visited.add(successor)
                    to_process.append(successor)
        return result

    def is_dead_after(self, value: SSAValue, op: Operation) -> bool:
        """Whether `value` is not live after `op`: it does not leave `op`'s block,
        and its last use in the block is `op` or comes before it."""
        info = self._info(op.parent)
        if info.is_live_out(value):
            return False
        end = info.get_end_operation(value, op)
        return end is op or end.is_before_in_block(op)

    # --- printing -----------------------------------------------------------------

    def print(self, stream: TextIO) -> None:
        """Write MLIR's `Liveness::print` report (what `test-print-liveness` shows)."""
        stream.write(self.format())

    def dump(self) -> None:
        """`print` to stderr, as MLIR's `Liveness::dump`."""
        self.print(sys.stderr)

    def format(self) -> str:
        """The `Liveness::print` report as a string."""
        block_ids: dict[Block, int] = {}
        op_ids: dict[Operation, int] = {}
        value_ids: dict[SSAValue, int] = {}
        for block in self.operation.walk_blocks():
            block_ids.setdefault(block, len(block_ids))
            for argument in block.args:
                value_ids.setdefault(argument, len(value_ids))
            for op in block.ops:
                op_ids.setdefault(op, len(op_ids))
                for result in op.results:
                    value_ids.setdefault(result, len(value_ids))

        # MLIR reads its id maps with operator[], which gives 0 to an unknown key.
        def ref(value: SSAValue) -> str:
            if isinstance(value, BlockArgument):
                return f"arg{value.index}@{block_ids.get(value.block, 0)} "
            return f"val_{value_ids.get(value, 0)} "

        def refs(values: Iterable[SSAValue]) -> str:
            ordered = sorted(values, key=lambda v: value_ids.get(v, 0))
            return "".join(ref(v) for v in ordered)

        out: list[str] = ["// ---- Liveness -----\n"]
        for block in self.operation.walk_blocks():
            info = self._info(block)
            out.append(f"// - Block: {block_ids[block]}\n")
            out.append(f"// --- LiveIn: {refs(info.in_values)}")
            out.append(f"\n// --- LiveOut: {refs(info.out_values)}\n")
            out.append("// --- BeginLivenessIntervals")
            for op in block.ops:
                if not op.results:
                    continue
                out.append("\n")
                for result in op.results:
                    out.append(f"// {ref(result)}:")
                    live = self.resolve_liveness(result)
                    live.sort(key=lambda o: op_ids.get(o, 0))
                    for live_op in live:
                        out.append(f"\n//     {print_op_in_scope(live_op)}")
            out.append("\n// --- EndLivenessIntervals\n")
            out.append("// --- BeginCurrentlyLive\n")
            for op in block.ops:
                live_now = info.currently_live_values(op)
                if not live_now:
                    continue
                out.append(f"//     {print_op_in_scope(op)} [{refs(live_now)}\b]\n")
            out.append("// --- EndCurrentlyLive\n")
        out.append("// -------------------\n")
        return "".join(out)

    def __repr__(self) -> str:
        return f"Liveness({len(self._blocks)} blocks)"
