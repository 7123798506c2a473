"""Folding an op as if some of its operands were constants: the step of sparse
constant propagation that MLIR does with `Operation::fold(ArrayRef<Attribute>)`.

xDSL folders read their operands' defining ops instead of taking constants, so
the op is simulated on a scratch copy: a detached block whose arguments stand for
the operands that are not known, preceded by constants materialized for those
that are. The copy is folded by its folder, else by its canonicalization
patterns; `arith.cmpi` of two integer constants, which xDSL neither folds nor
canonicalizes, is evaluated here as MLIR's folder does. The IR being analysed is
never touched.

A result is an attribute (a constant), an operand position (the result is that
operand, as `x + 0` folds to `x`) or None (unknown). A fold that rewrites the op
in place, builds new non-constant ops, or raises on the scratch copy is unknown.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence

from xdsl.context import Context
from xdsl.dialect_interfaces.constant_materialization import (
    ConstantMaterializationInterface,
)
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    IntegerType,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.traits import ConstantLike, HasCanonicalizationPatternsTrait
from xdsl.utils.hints import isa

from passflow.xdsl_internals import working_folder

__all__ = ["FoldResult", "constant_of", "materialize", "simulate_fold"]

FoldResult = Attribute | int | None
"""A constant, the position of the operand the result equals, or unknown."""


def materialize(
    ctx: Context, dialect: str, value: Attribute, type: Attribute
) -> Operation | None:
    """A detached constant op of `dialect` for `value` (MLIR's
    `Dialect::materializeConstant`), or None if the dialect cannot make one."""
    found = ctx.get_optional_dialect(dialect)
    interface = (
        None if found is None else found.get_interface(ConstantMaterializationInterface)
    )
    if interface is None:
        return None
    try:
        return interface.materialize_constant(value, type)
    except (ValueError, TypeError, AssertionError):
        return None


def constant_of(op: Operation) -> tuple[Attribute, ...] | None:
    """The values of a constant-like op, as its folder gives them."""
    if not op.has_trait(ConstantLike, value_if_unregistered=False):
        return None
    folder = working_folder(op)
    folded = None if folder is None else folder.fold(op)
    if folded is None or not all(isinstance(item, Attribute) for item in folded):
        return None
    return tuple(item for item in folded if isinstance(item, Attribute))


class _Scratch:
    """A detached copy of one op whose operands are block arguments or constants."""

    def __init__(
        self,
        ctx: Context,
        op: Operation,
        constants: Sequence[tuple[Attribute, str] | None],
    ) -> None:
        self.block = Block(arg_types=[operand.type for operand in op.operands])
        self.known: dict[SSAValue, Attribute] = {}
        mapping: dict[SSAValue, SSAValue] = {}
        for index, (operand, constant) in enumerate(
            zip(op.operands, constants, strict=True)
        ):
            value: SSAValue = self.block.args[index]
            made = (
                None
                if constant is None
                else materialize(ctx, constant[1], constant[0], operand.type)
            )
            if made is not None and constant is not None:
                self.block.add_op(made)
                value = made.results[0]
                self.known[value] = constant[0]
            mapping.setdefault(operand, value)
        self.copy = op.clone(value_mapper=mapping)
        self.block.add_op(self.copy)

    def result_of(self, value: SSAValue | Attribute) -> FoldResult:
        if isinstance(value, Attribute):
            return value
        if isinstance(value, BlockArgument) and value.owner is self.block:
            return value.index
        known = self.known.get(value)
        if known is not None:
            return known
        if isinstance(value, OpResult) and value.op.parent is self.block:
            values = None if value.op is self.copy else constant_of(value.op)
            if values is not None:
                return values[value.index]
        return None

    def fold(self) -> list[FoldResult] | None:
        folder = working_folder(self.copy)
        if folder is None:
            return None
        folded = folder.fold(self.copy)
        if folded is None:
            return None
        return [self.result_of(item) for item in folded]

    def canonicalize(self) -> list[FoldResult] | None:
        """The first canonicalization pattern that replaces the copy's results."""
        sink = UnrealizedConversionCastOp.create(operands=self.copy.results)
        self.block.add_op(sink)
        for trait in self.copy.get_traits_of_type(HasCanonicalizationPatternsTrait):
            for pattern in trait.get_patterns(type(self.copy)):
                rewriter = PatternRewriter(self.copy)
                pattern.match_and_rewrite(self.copy, rewriter)
                if rewriter.has_done_action:
                    return [self.result_of(value) for value in sink.operands]
        return None


def _as_width(value: int, width: int, signed: bool) -> int:
    value &= (1 << width) - 1
    if signed and value >> (width - 1):
        value -= 1 << width
    return value


_PREDICATES: tuple[Callable[[int, int], bool], ...] = (
    operator.eq,
    operator.ne,
    operator.lt,  # slt
    operator.le,  # sle
    operator.gt,  # sgt
    operator.ge,  # sge
    operator.lt,  # ult
    operator.le,  # ule
    operator.gt,  # ugt
    operator.ge,  # uge
)
"""`arith.cmpi`'s predicates by number; from the third to the sixth they compare
signed values, from the seventh unsigned ones."""


def _compare(op: arith.CmpiOp, lhs: Attribute, rhs: Attribute) -> FoldResult:
    """`arith.cmpi` of two integer constants, as MLIR's folder computes it."""
    if not (
        isa(lhs, IntegerAttr[IntegerType | IndexType])
        and isa(rhs, IntegerAttr[IntegerType | IndexType])
    ):
        return None
    type = lhs.type
    width = type.width.data if isinstance(type, IntegerType) else 64
    predicate = op.predicate.value.data
    if not 0 <= predicate < len(_PREDICATES):
        return None
    signed = predicate < 6
    left = _as_width(lhs.value.data, width, signed)
    right = _as_width(rhs.value.data, width, signed)
    return IntegerAttr(int(_PREDICATES[predicate](left, right)), IntegerType(1))


def simulate_fold(
    ctx: Context, op: Operation, constants: Sequence[tuple[Attribute, str] | None]
) -> list[FoldResult]:
    """What `op`'s results are when its operands have the given constants (value
    and the dialect that materializes it) or are unknown (None)."""
    unknown: list[FoldResult] = [None] * len(op.results)
    values = constant_of(op)
    if values is not None:
        return list(values)
    try:
        scratch = _Scratch(ctx, op, constants)
        folded = scratch.fold()
        if folded is None:
            folded = scratch.canonicalize()
    except Exception:  # a folder or pattern failing on the copy folds nothing
        folded = None
    if (
        folded is not None
        and len(folded) == len(op.results)
        and any(item is not None for item in folded)
    ):
        return folded
    if isinstance(op, arith.CmpiOp) and len(constants) == 2:
        lhs, rhs = constants
        if lhs is not None and rhs is not None:
            return [_compare(op, lhs[0], rhs[0])]
    return unknown
