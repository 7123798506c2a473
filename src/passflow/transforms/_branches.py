"""Which operands of a branch flow into its successors' block arguments: MLIR's
`BranchOpInterface` and `SuccessorOperands`, for xDSL's branch ops.

xDSL has no such interface: `cf.br` keeps its forwarded operands in an operand
group named `arguments`, `cf.cond_br` in `then_arguments` and `else_arguments`,
`cf.switch` in `default_operands` plus `case_operands` cut by a property. Region
simplification needs the mapping both ways (which block argument does this
operand feed? which operands feed this argument?) and must edit it in place,
erasing the operand of a dead argument or appending those of a merged block.

An op is a branch here only if its name is registered below (or through
`register_branch_op`): every other op with successors, unregistered ones such as
MLIR's `"foo.cond_br"` included, is opaque, as an op without `BranchOpInterface`
is to MLIR. The ops listed forward every operand of a group to the successor's
arguments, in order (no "produced" operands, which no xDSL op has).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, i32
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.irdl import AttrSizedOperandSegments, IRDLOperation, VarOperandDef

__all__ = [
    "BranchOperands",
    "branch_operands",
    "forwarded_operands",
    "register_branch_op",
    "set_forwarded_operands",
    "successor_argument",
]


class BranchOperands(ABC):
    """How one op class forwards operands to its successors."""

    @abstractmethod
    def ranges(self, op: Operation) -> tuple[range, ...]:
        """For each successor, the positions in `op.operands` forwarded to it."""

    @abstractmethod
    def rebuild(self, op: Operation, forwarded: Sequence[Sequence[SSAValue]]) -> None:
        """Replace the operands forwarded to every successor (one sequence per
        successor), keeping the other operands and the segment sizes right."""


def _segment_sizes(op: Operation, name: str, in_properties: bool) -> list[int]:
    attr = (op.properties if in_properties else op.attributes).get(name)
    if not isinstance(attr, DenseArrayBase):
        raise ValueError(f"'{op.name}' has no '{name}' segment sizes")
    return [int(size) for size in attr.get_values()]


def _set_segment_sizes(
    op: Operation, name: str, in_properties: bool, sizes: Sequence[int]
) -> None:
    attr: Attribute = DenseArrayBase.from_list(i32, sizes)
    (op.properties if in_properties else op.attributes)[name] = attr


class _OperandGroups(BranchOperands):
    """An IRDL op whose successor `i` receives all of operand group `groups[i]`
    (sized by `operandSegmentSizes`, or the only variadic group)."""

    def __init__(self, op_class: type[IRDLOperation], groups: Sequence[str]) -> None:
        op_def = op_class.get_irdl_definition()
        names = [name for name, _ in op_def.operands]
        self._variadic = tuple(
            isinstance(definition, VarOperandDef) for _, definition in op_def.operands
        )
        self._groups = tuple(names.index(group) for group in groups)
        if len(self._groups) != len(op_def.successors):
            raise ValueError(
                f"'{op_def.name}' has {len(op_def.successors)} successors, "
                f"{len(self._groups)} forwarded operand groups given"
            )
        segments = next(
            (o for o in op_def.options if isinstance(o, AttrSizedOperandSegments)),
            None,
        )
        self._segments_in_properties = (
            None if segments is None else segments.as_property
        )
        if segments is None and sum(self._variadic) > 1:
            raise ValueError(f"'{op_def.name}' has variadic groups of unknown sizes")

    def _sizes(self, op: Operation) -> list[int]:
        if self._segments_in_properties is not None:
            return _segment_sizes(
                op,
                AttrSizedOperandSegments.attribute_name,
                self._segments_in_properties,
            )
        fixed = len(self._variadic) - sum(self._variadic)
        rest = len(op.operands) - fixed
        return [rest if variadic else 1 for variadic in self._variadic]

    def ranges(self, op: Operation) -> tuple[range, ...]:
        sizes = self._sizes(op)
        starts = [0]
        for size in sizes:
            starts.append(starts[-1] + size)
        return tuple(range(starts[g], starts[g + 1]) for g in self._groups)

    def rebuild(self, op: Operation, forwarded: Sequence[Sequence[SSAValue]]) -> None:
        sizes = self._sizes(op)
        replacement = dict(zip(self._groups, forwarded, strict=True))
        operands: list[SSAValue] = []
        start = 0
        for group, size in enumerate(sizes):
            values = replacement.get(group)
            if values is None:
                values = op.operands[start : start + size]
            else:
                sizes[group] = len(values)
            operands.extend(values)
            start += size
        op.operands = operands
        if self._segments_in_properties is not None:
            _set_segment_sizes(
                op,
                AttrSizedOperandSegments.attribute_name,
                self._segments_in_properties,
                sizes,
            )


class _SwitchOperands(BranchOperands):
    """`cf.switch`: the flag, the default block's operands, then every case's,
    cut by the `case_operand_segments` property."""

    _CASES = "case_operand_segments"

    def ranges(self, op: Operation) -> tuple[range, ...]:
        sizes = _segment_sizes(op, AttrSizedOperandSegments.attribute_name, True)
        start = sizes[0]
        found = [range(start, start + sizes[1])]
        start += sizes[1]
        for size in _segment_sizes(op, self._CASES, True):
            found.append(range(start, start + size))
            start += size
        return tuple(found)

    def rebuild(self, op: Operation, forwarded: Sequence[Sequence[SSAValue]]) -> None:
        sizes = _segment_sizes(op, AttrSizedOperandSegments.attribute_name, True)
        default, *cases = forwarded
        flags = op.operands[: sizes[0]]
        op.operands = [*flags, *default, *(value for case in cases for value in case)]
        _set_segment_sizes(
            op,
            AttrSizedOperandSegments.attribute_name,
            True,
            [sizes[0], len(default), sum(len(case) for case in cases)],
        )
        _set_segment_sizes(op, self._CASES, True, [len(case) for case in cases])


_CONDITIONAL = ("then_arguments", "else_arguments")

_GROUPS_BY_NAME: dict[str, tuple[str, ...]] = {
    "cf.br": ("arguments",),
    "cf.cond_br": _CONDITIONAL,
    "llvm.br": ("arguments",),
    "llvm.cond_br": _CONDITIONAL,
    **{
        f"riscv_cf.{name}": _CONDITIONAL
        for name in ("beq", "bne", "blt", "bge", "bltu", "bgeu", "bnez")
    },
    "riscv_cf.branch": ("block_arguments",),
    "riscv_cf.j": ("block_arguments",),
    **{
        f"x86.c.j{condition}": ("then_values", "else_values")
        for condition in (
            *("a", "ae", "b", "be", "c", "e", "g", "ge", "l", "le", "o", "p"),
            *("na", "nae", "nb", "nbe", "nc", "ne", "ng", "nge", "nl", "nle"),
            *("no", "np", "ns", "nz", "pe", "po", "s", "z"),
        )
    },
    "x86.c.jmp": ("block_values",),
    "x86.fallthrough": ("block_values",),
}
"""Op names and, per successor, the operand group it receives. Keyed by name so
no dialect is imported before one of its ops is met."""

_SPECIAL_BY_NAME: dict[str, BranchOperands] = {"cf.switch": _SwitchOperands()}

_by_class: dict[type[Operation], BranchOperands | None] = {}


def register_branch_op(name: str, *groups: str) -> None:
    """Make the IRDL op `name` a branch whose successor `i` receives all of the
    operand group `groups[i]`, so that region simplification may drop the
    block arguments it feeds and merge the blocks it jumps to (without this an
    op with successors is opaque, as in MLIR without `BranchOpInterface`)."""
    _GROUPS_BY_NAME[name] = tuple(groups)
    _by_class.clear()


def branch_operands(op: Operation) -> BranchOperands | None:
    """The operand layout of `op` if it is a known branch, else None."""
    cls = type(op)
    if cls in _by_class:
        return _by_class[cls]
    if not isinstance(op, IRDLOperation):  # unregistered: a class per op, not kept
        return None
    found = _SPECIAL_BY_NAME.get(op.name)
    groups = _GROUPS_BY_NAME.get(op.name)
    if found is None and groups is not None:
        found = _OperandGroups(type(op), groups)
    _by_class[cls] = found
    return found


def forwarded_operands(op: Operation, successor: int) -> Sequence[SSAValue]:
    """The operands `op` passes to the arguments of its successor `successor`."""
    layout = branch_operands(op)
    if layout is None:
        raise ValueError(f"'{op.name}' is not a known branch")
    positions = layout.ranges(op)[successor]
    return op.operands[positions.start : positions.stop]


def set_forwarded_operands(
    op: Operation, successor: int, values: Sequence[SSAValue]
) -> None:
    """Make `op` pass `values` to its successor `successor` (MLIR's
    `SuccessorOperands::erase` and `append`, in one call)."""
    layout = branch_operands(op)
    if layout is None:
        raise ValueError(f"'{op.name}' is not a known branch")
    forwarded = [op.operands[r.start : r.stop] for r in layout.ranges(op)]
    forwarded[successor] = values
    layout.rebuild(op, forwarded)


def successor_argument(op: Operation, operand: int) -> BlockArgument | None:
    """The block argument the operand at position `operand` of `op` flows into
    (MLIR's `getSuccessorBlockArgument`), if `op` is a branch that forwards it."""
    layout = branch_operands(op)
    if layout is None:
        return None
    for successor, positions in zip(op.successors, layout.ranges(op), strict=False):
        if operand in positions:
            return _argument(successor, operand - positions.start)
    return None


def _argument(block: Block, index: int) -> BlockArgument | None:
    args = block.args
    return args[index] if index < len(args) else None
