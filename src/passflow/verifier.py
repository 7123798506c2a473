"""MLIR's verifier: what `mlir/lib/IR/Verifier.cpp` checks, on the xDSL IR.

xDSL verifies each op's own invariants (its IRDL definition, traits and custom
verifier: `passflow.ir.verify`), but not what MLIR's `OperationVerifier` checks of
the IR as a whole: that every use is dominated by its definition, that blocks end
in terminators, that an entry block has no predecessors, that a graph region has
one block. And an xDSL `index` attribute may hold any integer, where MLIR's holds
64 bits. Without these checks a pass (ours, xDSL's or a plugin's) can print IR
that mlir-opt rejects, and exit 0.

`verify` is the one verifier passflow runs after parsing and after each pass. It
first runs xDSL's verifiers over the whole op (`ir.verify`, which also checks
terminators and successors); on valid IR, one more walk then checks what they do
not: integer attributes, entry blocks, graph regions, empty blocks and the dominance
of every operand. Only when something fails does the walk go op by op in MLIR's
order (a block's structure, the op's own invariants, its attributes and regions,
its operands' dominance), so that the error reported is MLIR's first, in its words. The messages and notes are MLIR's
(`operand #0 does not dominate this use`, `note: operand defined here (op in the
same block)`); where MLIR cannot have the fault (an `index` constant out of range,
a use of an op a pass erased) the message says what is wrong and a note how to fix it.

Dominance follows `mlir/lib/IR/Dominance.cpp` through `passflow.analyses.dominance`
(graph regions, unreachable blocks, blocks of different regions); only the order of
two ops of one block is read from the walk's own numbering (pre-order numbers
compare ops of one block in O(1), where `Operation.is_before_in_block` scans).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import (
    Attribute,
    Block,
    BlockArgument,
    Operation,
    OpResult,
    Region,
    SSAValue,
)
from xdsl.traits import IsolatedFromAbove, IsTerminator, NoTerminator

from passflow import ir
from passflow.analyses.dominance import GRAPH_REGION_OPS, DominanceInfo
from passflow.diagnostics import Diagnostic, Severity
from passflow.llvm_integers import index_range

__all__ = ["E_CLASS_OPS", "integer_range", "verify"]

E_CLASS_OPS = frozenset({"equivalence.class", "equivalence.const_class"})
"""xDSL's e-graph classes: a use by or of one need not be dominated, since an
e-graph is cyclic (`%a_eq = equivalence.class %a, %b` before `%b = arith.muli
%a_eq, ...`). MLIR has no such dialect; see docs/decisions.md."""

_XDSL_ISOLATION = "value defined out of its IsolatedFromAbove parent"
"""What xDSL's `IsolatedFromAbove` verifier says of a use MLIR words otherwise."""

_INDEX_RANGE = index_range()


def integer_range(type: Attribute) -> tuple[int, int] | None:
    """The values MLIR's parser accepts for an integer attribute of `type`, as
    (lowest, highest + 1); None for a type that is not an integer.

    `index` is 64-bit signed; a signless `iN` holds both the signed and the
    unsigned values of N bits, as a bit pattern."""
    found = _ranges.get(type)
    if found is None:
        if isinstance(type, IndexType):
            found = _INDEX_RANGE
        elif isinstance(type, IntegerType):
            found = type.value_range()
        else:
            return None
        _ranges[type] = found
    return found


_ranges: dict[Attribute, tuple[int, int]] = {}
"""`integer_range` by type (xDSL computes an integer type's range each time)."""


def verify(op: Operation, *, recursive: bool = True) -> Diagnostic | None:
    """Verify `op` as MLIR's `mlir::verify(op, recursive)` does; the first error, or None.

    Without `recursive` (after a pass adaptor, whose nested passes verified the
    ops they ran on) only `op` itself and the dominance of the operands of the ops
    directly in its regions are checked, as in MLIR.
    """
    # The common case, valid IR, asks xDSL's verifiers in one walk of their own;
    # only a failure walks again, op by op, for MLIR's first error in MLIR's words.
    xdsl_problem = ir.verify(op, recursive=recursive)
    checked = xdsl_problem is None
    return _Verifier(op, xdsl_checked=checked).run(recursive) or xdsl_problem


class _Verifier:
    """One verification: the walk's numbering and the dominance it asked for."""

    __slots__ = ("dominance", "isolated", "order", "root", "xdsl_checked")

    def __init__(self, root: Operation, *, xdsl_checked: bool = False) -> None:
        self.root = root
        self.xdsl_checked = xdsl_checked
        """`ir.verify` found nothing: its checks, and the block structure it
        checks too (terminators, successors), need not run again."""
        self.dominance = DominanceInfo(root)
        self.order: dict[int, int] = {}
        """Pre-order numbers by op id (ops hash slowly): ops of one block are
        numbered in their order; an op is alive while it is verified."""
        self.isolated: dict[type[Operation], bool] = {}

    def run(self, recursive: bool) -> Diagnostic | None:
        root = self.root
        problem = self._verify_op(root)
        if problem is not None:
            return problem
        if not recursive:
            for region in root.regions:
                for block in region.blocks:
                    for op in block.ops:
                        self.order[id(op)] = len(self.order)
            for region in root.regions:
                for block in region.blocks:
                    problem = self._verify_uses(block, block.ops)
                    if problem is not None:
                        return problem
            return None
        order = self.order
        order[id(root)] = 0
        checked = self.xdsl_checked
        unreachable: set[Block] = set()
        # `_walk_blocks`, inlined: this loop is most of the cost of a verification
        stack: list[Block | Operation] = []
        for region in reversed(root.regions):
            stack.extend(reversed(region.blocks))
        while stack:
            item = stack.pop()
            if isinstance(item, Block):
                problem = None if checked else _block_error(item)
                if problem is not None:
                    return problem
                if not self.dominance.is_reachable_from_entry(item):
                    unreachable.add(item)
                stack.extend(reversed(item.ops))
                continue
            op = item
            order[id(op)] = len(order)
            block = op.parent
            assert block is not None
            operands = op.operands
            if op.regions:
                for region in reversed(op.regions):
                    stack.extend(reversed(region.blocks))
            elif checked and block not in unreachable:
                # xDSL's checks passed; a null operand is found with the uses
                problem = _integer_attribute_error(op)
                if problem is not None:
                    return problem
                problem = self._verify_uses_of(op, block, operands)
                if problem is not None:
                    return problem
                continue
            problem = self._verify_op(op, operands)
            if problem is not None:
                return problem
            if block in unreachable:
                continue
            problem = self._verify_uses_of(op, block, operands)
            if problem is not None:
                return problem
        return None

    def _verify_uses_of(
        self, op: Operation, block: Block, operands: Sequence[SSAValue]
    ) -> Diagnostic | None:
        """The dominance of each operand of `op`, an op of reachable `block`."""
        order = self.order
        position = order[id(op)]
        for index, operand in enumerate(operands):
            # the common cases first: a value of this block defined before
            kind = type(operand)
            if kind is OpResult:
                definition = cast("OpResult[Attribute]", operand).op
                if (
                    definition.parent is block
                    and order.get(id(definition), position) < position
                ):
                    continue
            elif (
                kind is BlockArgument
                and cast("BlockArgument[Attribute]", operand).block is block
            ):
                continue
            problem = self._use_error(op, index, operand)
            if problem is not None:
                return problem
        return None

    # --- one op ------------------------------------------------------------------

    def _verify_op(
        self, op: Operation, operands: Sequence[SSAValue] | None = None
    ) -> Diagnostic | None:
        for operand in op.operands if operands is None else operands:
            kind = type(operand)
            if (
                kind is not OpResult
                and kind is not BlockArgument
                and not isinstance(operand, OpResult | BlockArgument)
            ):
                return _error(op, "null operand found", op_error=False)
        for region in op.regions:
            for block in region.blocks:
                if block.first_op is None and not _may_lack_terminator(block):
                    return Diagnostic(
                        Severity.ERROR,
                        "empty block: expect at least a terminator",
                        ir.location(op),
                        operation=op,
                    )
        problem = None if self.xdsl_checked else ir.verify(op, recursive=False)
        if problem is not None:
            if _XDSL_ISOLATION in problem.message:
                return self._first_use_error(op) or problem
            return problem
        problem = _integer_attribute_error(op)
        if problem is not None or not op.regions:
            return problem
        name = ir.operation_name(op)
        for index, region in enumerate(op.regions):
            first = region.first_block
            if first is None:
                continue
            if (
                first is not region.last_block
                and name.is_registered
                and name.name in GRAPH_REGION_OPS
            ):
                return _error(
                    op, f"expects graph region #{index} to have 0 or 1 blocks"
                )
            if first.predecessors():
                return _error(
                    op,
                    "entry block of region may not have predecessors",
                    op_error=False,
                )
        return None

    def _first_use_error(self, op: Operation) -> Diagnostic | None:
        """The first use nested in `op` that MLIR's verifier would reject, in
        MLIR's words, where xDSL's isolation check found one first."""
        inner = _Verifier(op)
        for block, nested in _walk_blocks(op, inner.order):
            if nested is not None:
                problem = inner._verify_uses(block, (nested,))
                if problem is not None:
                    return problem
        return None

    # --- dominance -----------------------------------------------------------------

    def _verify_uses(self, block: Block, ops: Iterable[Operation]) -> Diagnostic | None:
        """MLIR's `verifyDominanceOfContainedRegions` for `ops` of `block`: each
        operand properly dominates its use, if the block is reachable."""
        if not self.dominance.is_reachable_from_entry(block):
            return None
        for op in ops:
            problem = self._verify_uses_of(op, block, op.operands)
            if problem is not None:
                return problem
        return None

    def _use_error(
        self, user: Operation, index: int, value: SSAValue
    ) -> Diagnostic | None:
        """Why `value` may not be operand `index` of `user`, or None.

        The walk climbs from `user` to its ancestor in the region that defines
        `value` (as MLIR's `properlyDominates` does), noting on the way whether
        it leaves an op that is isolated from above.
        """
        if isinstance(value, BlockArgument):
            def_block = value.block
            def_op = None
        elif isinstance(value, OpResult):
            def_op = value.op
            def_block = def_op.parent
        else:  # an erased value
            return _error(user, "null operand found", op_error=False)
        region = None if def_block is None else def_block.parent
        if def_block is None or region is None:
            problem = _error(user, "operation's operand is unlinked", op_error=False)
            problem.attach_note(
                f"operand #{index} is a result of an op that is no longer in the IR "
                "(a pass erased or detached it but left this use: replace the use "
                "before erasing the op)",
                problem.location,
            )
            return problem
        ancestor = user
        block = user.parent
        isolated: Operation | None = None
        while block is not None and block.parent is not region:
            parent_region = block.parent
            parent = None if parent_region is None else parent_region.parent
            if parent is None:
                block = None
                break
            if isolated is None and self._is_isolated(parent):
                isolated = parent
            ancestor = parent
            block = parent.parent
        if isolated is not None and block is not None:
            problem = _error(user, "using value defined outside the region")
            problem.attach_note(
                "required by region isolation constraints", ir.location(isolated)
            )
            return problem
        if block is None:
            dominates = False
        elif block is def_block:
            if def_op is None:
                dominates = True
            elif ancestor is def_op and ancestor is not user:
                dominates = False  # a use inside the op that defines the value
            elif not self.dominance.has_ssa_dominance(region):
                dominates = True
            elif ancestor is def_op:
                dominates = False  # an op using its own result
            else:
                position = self.order.get(id(def_op))
                reference = self.order.get(id(ancestor))
                if reference is None:  # outside this walk: scan the block
                    dominates = def_op.is_before_in_block(ancestor)
                else:
                    dominates = position is not None and position < reference
        else:
            dominates = self.dominance.properly_dominates(def_block, block)
        if dominates or _in_e_graph(user, def_op):
            return None
        return _dominance_error(user, index, value)

    def _is_isolated(self, op: Operation) -> bool:
        cls = type(op)
        found = self.isolated.get(cls)
        if found is None:
            found = op.has_trait(IsolatedFromAbove, value_if_unregistered=False)
            if ir.operation_name(op).is_registered:
                self.isolated[cls] = found
        return found


def _in_e_graph(user: Operation, definition: Operation | None) -> bool:
    """Whether the use is an edge of an e-graph (`E_CLASS_OPS`)."""
    return ir.operation_name(user).name in E_CLASS_OPS or (
        definition is not None and ir.operation_name(definition).name in E_CLASS_OPS
    )


def _walk_blocks(
    root: Operation, order: dict[int, int]
) -> Iterator[tuple[Block, Operation | None]]:
    """Every block nested in `root` (paired with None, before its ops) and every op
    nested in it (paired with its block), in pre-order; numbers the ops in `order`
    as it goes (`root` first). The stack is explicit: any depth costs linear time."""
    order[id(root)] = len(order)
    stack: list[Block | Operation] = []
    for region in reversed(root.regions):
        stack.extend(reversed(region.blocks))
    while stack:
        item = stack.pop()
        if isinstance(item, Block):
            yield item, None
            stack.extend(reversed(item.ops))
            continue
        order[id(item)] = len(order)
        block = item.parent
        assert block is not None
        yield block, item
        for region in reversed(item.regions):
            stack.extend(reversed(region.blocks))


# --- blocks ---------------------------------------------------------------------------


def _may_lack_terminator(block: Block) -> bool:
    """MLIR's `mayBeValidWithoutTerminator`: the only block of its region, whose
    op (if any) might have `NoTerminator` (an unregistered op might)."""
    region = block.parent
    if region is None:
        return True
    if region.first_block is not region.last_block:
        return False
    parent = region.parent
    return parent is None or parent.has_trait(NoTerminator)


def _block_error(block: Block) -> Diagnostic | None:
    """MLIR's checks of a block on entrance and exit: a terminator, successors
    only on the last op, and only to blocks of its own region."""
    last = block.last_op
    if last is None:
        return None  # the op of its region said so (`_Verifier._verify_op`)
    for op in block.ops:
        if op.successors and op is not last:
            return _error(
                op,
                "operation with block successors must terminate its parent block",
                op_error=False,
            )
    region = block.parent
    if any(successor.parent is not region for successor in last.successors):
        return _error(last, "branching to block of a different region")
    if _may_lack_terminator(block) or last.has_trait(IsTerminator):
        return None
    return _error(
        last,
        f"block with no terminator, has {ir.print_op_without_regions(last)}",
        op_error=False,
    )


# --- attributes -------------------------------------------------------------------------


def _integer_attribute_error(op: Operation) -> Diagnostic | None:
    for attributes in (op.properties, op.attributes):
        for name, value in attributes.items():
            if type(value) in _NO_INTEGERS:
                continue
            bad = _out_of_range(value)
            if bad is not None:
                return _range_error(op, name, bad)
    return None


_NO_INTEGERS: set[type[Attribute]] = set()
"""Attribute classes that hold no integer attribute (neither one, nor an array or
dictionary of them): most attributes of most ops, skipped by their class."""


def _range_error(
    op: Operation, name: str, bad: IntegerAttr[IntegerType | IndexType]
) -> Diagnostic:
    """An integer MLIR cannot hold, and what its type holds."""
    lowest, end = integer_range(bad.type) or (0, 0)
    problem = _error(
        op,
        f"integer constant out of range for attribute '{name}': "
        f"{bad.value.data} : {bad.type}",
    )
    problem.attach_note(
        f"'{bad.type}' holds {lowest} to {end - 1} in MLIR, which cannot read "
        "this back; a pass that computes such a constant must wrap it to the "
        "type's width (two's complement), as MLIR's folders do",
        problem.location,
    )
    return problem


def _out_of_range(value: Attribute) -> IntegerAttr[IntegerType | IndexType] | None:
    """The first integer in `value` (looking into arrays and dictionaries) that
    its type cannot hold."""
    if isinstance(value, IntegerAttr):
        integer = cast("IntegerAttr[IntegerType | IndexType]", value)
        found = integer_range(integer.type)
        number = integer.value.data
        if found is not None and not found[0] <= number < found[1]:
            return integer
        return None
    if isinstance(value, ArrayAttr):
        for item in cast("ArrayAttr[Attribute]", value).data:
            bad = _out_of_range(item)
            if bad is not None:
                return bad
    elif isinstance(value, DictionaryAttr):
        for item in value.data.values():
            bad = _out_of_range(item)
            if bad is not None:
                return bad
    else:
        _NO_INTEGERS.add(type(value))
    return None


# --- diagnostics --------------------------------------------------------------------


def _error(op: Operation, message: str, *, op_error: bool = True) -> Diagnostic:
    """An error at `op`: MLIR's `emitOpError` (`'<name>' op ...`) or `emitError`."""
    if op_error:
        message = f"'{ir.operation_name(op).name}' op {message}"
    return Diagnostic(Severity.ERROR, message, ir.location(op), operation=op)


def _dominance_error(user: Operation, index: int, value: SSAValue) -> Diagnostic:
    """MLIR's `diagnoseInvalidOperandDominance`: the error and where the value is."""
    problem = _error(
        user, f"operand #{index} does not dominate this use", op_error=False
    )
    user_block = user.parent
    user_region = None if user_block is None else user_block.parent
    if isinstance(value, OpResult):
        def_block = value.op.parent
        def_region = None if def_block is None else def_block.parent
        where = _where(def_region, user_region)
        if def_block is user_block:
            where = "op in the same block"
        elif where.startswith("neither"):
            where = f"op is {where}"
        else:
            where = f"op {where}"
        problem.attach_note(f"operand defined here ({where})", ir.location(value.op))
        return problem
    assert isinstance(value, BlockArgument)
    owner = value.block
    def_region = owner.parent
    parent = owner.parent_op()
    location = ir.location(parent) if parent is not None else problem.location
    if def_region is None:
        problem.attach_note(" (block without parent)", location)
        return problem
    number = def_region.blocks.index(owner)
    where = _where(def_region, user_region)
    problem.attach_note(
        f"operand defined as a block argument (block #{number} {where})", location
    )
    return problem


def _where(definition: Region | None, use: Region | None) -> str:
    """Where a definition's region is, seen from the use's (MLIR's words)."""
    if definition is use:
        return "in the same region"
    if _is_proper_ancestor(definition, use):
        return "in a parent region"
    if _is_proper_ancestor(use, definition):
        return "in a child region"
    return "neither in a parent nor in a child region"


def _is_proper_ancestor(ancestor: Region | None, region: Region | None) -> bool:
    """MLIR's `Region::isProperAncestor`: `region` is nested somewhere in `ancestor`."""
    if ancestor is None or region is None or ancestor is region:
        return False
    current: Region | None = region
    while current is not None:
        op = current.parent
        block = None if op is None else op.parent
        current = None if block is None else block.parent
        if current is ancestor:
            return True
    return False
