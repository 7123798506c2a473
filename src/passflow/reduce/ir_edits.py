"""Edits that make IR smaller: the moves of the IR reduction.

Each edit is made on a copy of the current IR, so a rejected candidate costs
nothing to undo. Ops are named by their position in a pre-order walk, which a
copy preserves. An edit that cannot be made (results still in use, a printer
that fails) gives None and is never tried.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    FloatAttr,
    FunctionType,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.traits import IsTerminator

from passflow import ir

__all__ = [
    "OP_EDITS",
    "IRCandidate",
    "OpEdit",
    "count_ops",
    "keep_top_level",
    "top_level_ops",
]


@dataclass(frozen=True)
class IRCandidate:
    """IR as the reducer holds it: the top-level op and the file metadata
    (resources) its text ends with."""

    top: Operation
    metadata: str = ""

    def text(self) -> str | None:
        """The IR as a file, or None if it cannot be printed."""
        try:
            printed = ir.print_op(self.top)
        except Exception:
            return None
        tail = f"\n{self.metadata}\n" if self.metadata else "\n"
        return printed + tail


def count_ops(top: Operation) -> int:
    """How many ops `top` holds, itself excluded."""
    return sum(1 for _ in top.walk()) - 1


def top_level_ops(top: Operation) -> list[Operation]:
    """The ops of the top-level op's single block ([] if it has another shape)."""
    if len(top.regions) != 1 or len(top.regions[0].blocks) != 1:
        return []
    return list(top.regions[0].blocks[0].ops)


def _erase_op(op: Operation) -> None:
    op.detach()
    op.erase()


def _erase(ops: Sequence[Operation]) -> bool:
    """Erase `ops` (last first); False if a result is still used elsewhere."""
    for op in reversed(ops):
        if any(result.uses for result in op.results):
            return False
        _erase_op(op)
    return True


def keep_top_level(
    current: IRCandidate, keep: Callable[[int], bool], *, in_place: bool = False
) -> IRCandidate | None:
    """`current` with only the top-level ops whose position `keep` accepts,
    made in `current` itself when `in_place` (a forked trial's own copy), else
    in a copy. None if a kept op uses a result of one removed."""
    copy = current.top if in_place else ir.clone(current.top)
    ops = top_level_ops(copy)
    removed = [op for i, op in enumerate(ops) if not keep(i)]
    if any(op.has_trait(IsTerminator) for op in removed) or not _erase(removed):
        return None
    return IRCandidate(copy, current.metadata)


def _zero(value: SSAValue) -> Operation | None:
    """An `arith.constant` zero of `value`'s type, if arith has one."""
    kind: Attribute = value.type
    if isinstance(kind, IndexType):
        return arith.ConstantOp(IntegerAttr(0, kind))
    if isinstance(kind, IntegerType):
        width: int = kind.bitwidth
        signless = IntegerType(width)
        return arith.ConstantOp(IntegerAttr(0, signless)) if kind == signless else None
    if isinstance(kind, AnyFloat):
        return arith.ConstantOp(FloatAttr(0.0, kind))
    return None


def _replace_with_operands(op: Operation) -> bool:
    for result in op.results:
        if not result.uses:
            continue
        same = next((v for v in op.operands if v.type == result.type), None)
        if same is None:
            return False
        result.replace_all_uses_with(same)
    return True


def _replace_with_zeros(op: Operation) -> bool:
    block = op.parent_block()
    if block is None:
        return False
    for result in op.results:
        if not result.uses:
            continue
        zero = _zero(result)
        if zero is None:
            return False
        block.insert_op_before(zero, op)
        result.replace_all_uses_with(zero.results[0])
    return True


def _enclosing_function(op: Operation) -> func.FuncOp | None:
    parent = op.parent_op()
    while parent is not None and not isinstance(parent, func.FuncOp):
        parent = parent.parent_op()
    return parent


def _replace_with_arguments(op: Operation) -> bool:
    """Results become new arguments of the enclosing `func.func`."""
    function = _enclosing_function(op)
    if function is None or function.is_declaration:
        return False
    entry = function.body.blocks[0]
    for result in op.results:
        if result.uses:
            argument = entry.insert_arg(result.type, len(entry.args))
            result.replace_all_uses_with(argument)
    inputs = [arg.type for arg in entry.args]
    function.function_type = FunctionType.from_lists(
        inputs, function.function_type.outputs.data
    )
    return True


def _drop_results_by(
    replace: Callable[[Operation], bool],
) -> Callable[[Operation], bool]:
    def edit(op: Operation) -> bool:
        if not any(result.uses for result in op.results) or not replace(op):
            return False
        _erase_op(op)
        return True

    return edit


def _erase_unused(op: Operation) -> bool:
    if any(result.uses for result in op.results):
        return False
    _erase_op(op)
    return True


def _drop_unused_arguments(op: Operation) -> bool:
    """A `func.func`'s unused arguments go (a caller left behind fails the
    verifier, so the candidate is never tried)."""
    if not isinstance(op, func.FuncOp) or op.is_declaration:
        return False
    entry = op.body.blocks[0]
    unused = [arg for arg in entry.args if not arg.uses]
    if not unused:
        return False
    kept = [i for i, arg in enumerate(entry.args) if arg.uses]
    if op.arg_attrs is not None:
        op.arg_attrs = ArrayAttr([op.arg_attrs.data[i] for i in kept])
    for arg in unused:
        entry.erase_arg(arg)
    op.function_type = FunctionType.from_lists(
        [arg.type for arg in entry.args], op.function_type.outputs.data
    )
    return True


def _drop_attributes(op: Operation) -> bool:
    if not op.attributes:
        return False
    op.attributes.clear()
    return True


@dataclass(frozen=True)
class OpEdit:
    """One way to make an op go away or get simpler: `apply` edits the op in
    place (in a copy) and says whether it could."""

    name: str
    apply: Callable[[Operation], bool]

    def on(
        self, current: IRCandidate, position: int, *, in_place: bool = False
    ) -> IRCandidate | None:
        """`current` with this edit made to the op at walk `position` (1: the
        first op inside the top-level op), or None if it cannot be made;
        made in `current` itself when `in_place`, else in a copy."""
        copy = current.top if in_place else ir.clone(current.top)
        op = next(op for i, op in enumerate(copy.walk()) if i == position)
        if op.has_trait(IsTerminator) or not self.apply(op):
            return None
        return IRCandidate(copy, current.metadata)


OP_EDITS: tuple[OpEdit, ...] = (
    OpEdit("erase an unused op", _erase_unused),
    OpEdit(
        "erase an op, its results replaced by its operands",
        _drop_results_by(_replace_with_operands),
    ),
    OpEdit(
        "erase an op, its results replaced by zeros",
        _drop_results_by(_replace_with_zeros),
    ),
    OpEdit(
        "erase an op, its results made function arguments",
        _drop_results_by(_replace_with_arguments),
    ),
    OpEdit("drop a function's unused arguments", _drop_unused_arguments),
    OpEdit("drop an op's discardable attributes", _drop_attributes),
)
"""The op edits, most reducing first."""
