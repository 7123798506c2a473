"""`remove-dead-values`: drop the values nothing needs (MLIR's RemoveDeadValues)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, FunctionType
from xdsl.ir import Block, Operation
from xdsl.rewriter import Rewriter
from xdsl.traits import IsTerminator

from passflow.ir import direct_children
from passflow.options import Option
from passflow.pass_base import OperationPass
from passflow.transforms._branches import (
    branch_operands,
    forwarded_operands,
    set_forwarded_operands,
)
from passflow.transforms._speculation import is_memory_effect_free
from passflow.transforms._symbols import is_symbol
from passflow.transforms.dead_values import DeadValues

__all__ = ["RemoveDeadValues"]


class RemoveDeadValues(OperationPass):
    """Remove what no needed computation uses, found by a whole-IR liveness
    analysis (`dead_values.DeadValues`) rather than op by op.

    - the arguments of private functions that nothing live reads, and the
      operands that calls pass to them;
    - the results of private functions that no call needs, from every
      `func.return` and call;
    - the arguments of blocks that nothing live reads, with the branch operands
      that feed them;
    - ops without memory effects none of whose results is needed, region ops
      (`scf.if`, `scf.for`) included, as a whole.

    A function named other than by `func.call`, or public, keeps its signature.
    Where MLIR also prunes the operands, results and region arguments of a region
    branch op that stays, passflow keeps the op whole (and `canonicalize`, which
    asks MLIR to canonicalize those ops afterwards, changes nothing): the
    result can hold more than mlir-opt's, never less.
    """

    name = "RemoveDeadValues"
    argument = "remove-dead-values"
    summary = "Remove dead values"
    description = """\
The goal of this pass is optimization (reducing runtime) by removing
unnecessary instructions. Unlike other passes that rely on local information
gathered from patterns to accomplish optimization, this pass uses a full
analysis of the IR, specifically, liveness analysis, and is thus more
powerful.

Currently, this pass performs the following optimizations:
(A) Removes function arguments that are not live,
(B) Removes function return values that are not live across all callers of
the function,
(C) Removes unneccesary operands, results, region arguments, and region
terminator operands of region branch ops, and,
(D) Removes simple and region branch ops that have all non-live results and
don't affect memory in any way,

iff

the IR doesn't have any non-function symbol ops, non-call symbol user ops
and branch ops.

Here, a "simple op" refers to an op that isn't a symbol op, symbol-user op,
region branch op, branch op, region branch terminator op, or return-like.
"""

    canonicalize = Option(True, help="Canonicalize region branch ops")

    def run_on_operation(self) -> None:
        top = self.get_operation()
        analysis = DeadValues(top)
        dead_ops = _dead_ops(top, analysis)
        dead_args = _dead_block_args(top, analysis)
        changed = bool(dead_ops or dead_args)
        for function, calls in analysis.calls.items():
            changed = _clean_function(function, calls, analysis) or changed
        for block, indices in dead_args:
            _drop_forwarded(block, indices)
        for op in reversed(dead_ops):
            Rewriter.erase_op(op, safe_erase=False)
        for block, indices in dead_args:
            for index in reversed(indices):
                block.erase_arg(block.args[index], safe_erase=False)
        if not changed:
            self.mark_all_analyses_preserved()


def _dead_ops(top: Operation, analysis: DeadValues) -> list[Operation]:
    """The ops to erase, outermost only (what is nested in one goes with it)."""
    dead: list[Operation] = []
    stack = list(reversed(direct_children(top)))
    while stack:
        op = stack.pop()
        if _is_dead(op, analysis):
            dead.append(op)
        else:
            stack.extend(reversed(direct_children(op)))
    return dead


def _is_dead(op: Operation, analysis: DeadValues) -> bool:
    if (
        op in analysis.live_ops
        or isinstance(op, func.CallOp)
        or op.has_trait(IsTerminator, value_if_unregistered=True)
        or is_symbol(op)
        or any(analysis.is_live(result) for result in op.results)
    ):
        return False
    return is_memory_effect_free(op)


def _dead_block_args(
    top: Operation, analysis: DeadValues
) -> list[tuple[Block, list[int]]]:
    """Non-entry blocks reached only by known branches, and their dead arguments."""
    found: list[tuple[Block, list[int]]] = []
    for op in top.walk():
        for region in op.regions:
            for block in region.blocks:
                if block is region.first_block or not block.args:
                    continue
                preds = [use.operation for use in block.uses]
                if any(branch_operands(pred) is None for pred in preds):
                    continue
                indices = [arg.index for arg in block.args if not analysis.is_live(arg)]
                if indices:
                    found.append((block, indices))
    return found


def _drop_forwarded(block: Block, indices: Sequence[int]) -> None:
    """Stop every branch to `block` passing the arguments at `indices`."""
    drop = set(indices)
    preds: list[Operation] = []
    for use in block.uses:
        if use.operation not in preds:
            preds.append(use.operation)
    for pred in preds:
        for successor, target in enumerate(pred.successors):
            if target is block:
                kept = [
                    value
                    for index, value in enumerate(forwarded_operands(pred, successor))
                    if index not in drop
                ]
                set_forwarded_operands(pred, successor, kept)


def _clean_function(
    function: func.FuncOp, calls: Sequence[func.CallOp], analysis: DeadValues
) -> bool:
    """Drop the dead arguments of a tracked function and the results no call
    needs, from its signature, its returns and its calls."""
    entry = function.body.first_block
    assert entry is not None
    dead_args = [arg.index for arg in entry.args if not analysis.is_live(arg)]
    outputs = function.function_type.outputs.data
    dead_results = [
        index
        for index in range(len(outputs))
        if not any(analysis.is_live(call.results[index]) for call in calls)
    ]
    if not dead_args and not dead_results:
        return False
    inputs = function.function_type.inputs.data
    function.function_type = FunctionType.from_lists(
        _without(inputs, dead_args), _without(outputs, dead_results)
    )
    function.arg_attrs = _attrs_without(function.arg_attrs, dead_args)
    function.res_attrs = _attrs_without(function.res_attrs, dead_results)
    for block in function.body.blocks:
        last = block.last_op
        if isinstance(last, func.ReturnOp) and dead_results:
            kept = _without(last.operands, dead_results)
            Rewriter.replace_op(last, func.ReturnOp(*kept))
    for call in calls:
        _rebuild_call(call, dead_args, dead_results)
    for index in reversed(dead_args):
        entry.erase_arg(entry.args[index], safe_erase=False)
    return True


def _rebuild_call(
    call: func.CallOp, dead_args: Sequence[int], dead_results: Sequence[int]
) -> None:
    new = func.CallOp.create(
        operands=_without(call.operands, dead_args),
        result_types=_without([r.type for r in call.results], dead_results),
        properties=dict(call.properties),
        attributes=dict(call.attributes),
    )
    block = call.parent
    assert block is not None
    block.insert_op_before(new, call)
    kept = iter(new.results)
    for index, result in enumerate(call.results):
        if index not in dead_results:
            result.replace_all_uses_with(next(kept))
    Rewriter.erase_op(call, safe_erase=False)


_T = TypeVar("_T")


def _without(items: Sequence[_T], indices: Sequence[int]) -> list[_T]:
    drop = set(indices)
    return [item for index, item in enumerate(items) if index not in drop]


def _attrs_without(
    attrs: ArrayAttr[DictionaryAttr] | None, indices: Sequence[int]
) -> ArrayAttr[DictionaryAttr] | None:
    if attrs is None:
        return None
    return ArrayAttr(_without(attrs.data, indices))
