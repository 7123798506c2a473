"""`ConstantPropagation`: MLIR's sparse conditional constant propagation analysis
(`DeadCodeAnalysis` with `SparseConstantPropagation`), for the `sccp` pass.

xDSL's dataflow framework (`xdsl.analysis`) stops at ops with regions, branches
and calls, so this is a compact solver of its own. Each SSA value has a lattice
value: uninitialized (absent), a constant (an attribute and the dialect that
materializes it) or `OVERDEFINED`. Blocks are executable once an executable edge
reaches them; an op is simulated only in an executable block, optimistically,
until nothing changes (Wegman and Zadeck's algorithm).

Control flow it understands, as MLIR's interfaces describe it for these ops:

- branches (`cf.br`, `cf.cond_br`, `cf.switch`, anything `_branches` knows): a
  known condition takes one successor; forwarded operands join into the
  successor's arguments. Any other op with successors reaches all of them with
  unknown arguments;
- region branches: `scf.if`, `scf.index_switch`, `scf.execute_region`, `scf.for`,
  `scf.while`, `affine.if` and `affine.for` (whose constant bounds give its trip
  count, as MLIR's `affine.for` does; `scf.for`'s never do, as in MLIR 22). Any
  other op with regions runs every region with unknown entry arguments and
  unknown results;
- calls: a `func.call` to a function with a body inside the analysed op joins its
  operands into the callee's arguments and the callee's `func.return` operands
  into its results. A function whose callers may not all be known (public; nested
  when the symbol table is visible from above; used other than by a call) starts
  executable with unknown arguments; a private one nothing calls never runs.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import affine, cf, scf
from xdsl.dialects.builtin import AffineMapAttr, IntegerAttr, IntegerType, StringAttr
from xdsl.dialects.func import CallOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.traits import CallableOpInterface, IsTerminator, ReturnLike
from xdsl.utils.hints import isa

from passflow.transforms._branches import branch_operands, forwarded_operands
from passflow.transforms._simulated_fold import simulate_fold
from passflow.transforms._symbols import (
    SymbolTables,
    is_private,
    is_symbol,
    is_symbol_table,
    is_unknown_symbol_table,
    nearest_symbol_table,
    own_symbol_uses,
)
from passflow.transforms.call_graph import callable_region

__all__ = [
    "OVERDEFINED",
    "REGION_BRANCH_OPS",
    "ConstantPropagation",
    "ConstantValue",
    "Lattice",
]


@dataclass(frozen=True)
class ConstantValue:
    """A value known to be `value`; `dialect` materializes it (the dialect of the
    op whose folding produced it, as MLIR's `ConstantValue` keeps it)."""

    value: Attribute
    dialect: str


class _Overdefined:
    def __repr__(self) -> str:
        return "OVERDEFINED"


OVERDEFINED = _Overdefined()
"""The value may be anything."""

Lattice = ConstantValue | _Overdefined

_Target = Region | None
"""Where control goes from a region branch: a region's entry, or the parent's results."""


def _join(old: Lattice | None, new: Lattice) -> Lattice:
    if old is None:
        return new
    if old is OVERDEFINED or new is OVERDEFINED:
        return OVERDEFINED
    assert isinstance(old, ConstantValue) and isinstance(new, ConstantValue)
    return old if old.value == new.value else OVERDEFINED


def _int(lattice: Lattice | None) -> int | _Overdefined | None:
    """An integer constant; None while uninitialized; OVERDEFINED otherwise."""
    if lattice is None:
        return None
    if isinstance(lattice, ConstantValue) and isa(lattice.value, IntegerAttr):
        return lattice.value.value.data
    return OVERDEFINED


def _affine_constant(map_attr: AffineMapAttr) -> int | None:
    affine_map = map_attr.data
    if affine_map.num_dims or affine_map.num_symbols or len(affine_map.results) != 1:
        return None
    try:
        return affine_map.eval([], [])[0]
    except (ValueError, IndexError):
        return None


def _affine_trip_count(op: affine.ForOp) -> int | None:
    lower = _affine_constant(op.lowerBoundMap)
    upper = _affine_constant(op.upperBoundMap)
    step = op.step.value.data
    if lower is None or upper is None or step <= 0:
        return None
    return max(0, -((lower - upper) // step))


def _non_empty(region: Region) -> _Target:
    return region if region.first_block is not None else None


class ConstantPropagation:
    """The lattice of every value and the executable blocks under `top` (the op a
    pass runs on, whose regions are executable and entry arguments unknown)."""

    def __init__(self, top: Operation, ctx: Context) -> None:
        self.top = top
        self.ctx = ctx
        self.values: dict[SSAValue, Lattice] = {}
        self.live_blocks: set[Block] = set()
        self._worklist: deque[Operation] = deque()
        self._queued: set[Operation] = set()
        self._callsites: dict[Operation, dict[Operation, None]] = {}
        """Each tracked callable's known calls, in the order they were found."""
        self._unknown_callers: set[Operation] = set()
        self._tables = SymbolTables()
        self._targets: dict[Operation, Operation | None] = {}
        self._find_callables()
        for region in top.regions:
            self._enter(region, unknown_args=True)
        while self._worklist:
            op = self._worklist.popleft()
            self._queued.discard(op)
            self._visit(op)

    # --- queries ------------------------------------------------------------------

    def lattice(self, value: SSAValue) -> Lattice | None:
        """The value's lattice value; None if it was never reached."""
        return self.values.get(value)

    # --- the callables ---------------------------------------------------------------

    def _find_callables(self) -> None:
        """Which functions under `top` have all their callers known (MLIR's
        `initializeSymbolCallables`): private ones, and nested ones of a symbol
        table whose uses are all visible, that nothing but a call names."""
        for op in self.top.walk():
            if op is self.top or callable_region(op) is None:
                continue
            self._callsites[op] = {}
            table = op.parent_op()
            visible = table is not None and self._all_uses_visible(table)
            if not (is_symbol(op) and (is_private(op) or (visible and _nested(op)))):
                self._unknown_callers.add(op)
        if any(is_unknown_symbol_table(op) for op in self.top.walk()):
            self._unknown_callers.update(self._callsites)
            return
        for op in self.top.walk():
            refs = [] if isinstance(op, CallOp) else own_symbol_uses(op)
            scope = nearest_symbol_table(op) if refs else None
            for ref in refs if scope is not None else ():
                assert scope is not None
                for symbol in self._tables.resolve_path(scope, ref):
                    if symbol in self._callsites:
                        self._unknown_callers.add(symbol)

    def _all_uses_visible(self, table: Operation) -> bool:
        """MLIR's `walkSymbolTables` rule from `top` down to `table`: the uses of
        a table's symbols are all in the IR if the table is not a symbol or is
        private, or its enclosing table's are (`top`'s: when it is not nested in
        a block); below an op that is not a symbol table, they are."""
        chain: list[Operation] = []
        current: Operation | None = table
        while current is not None and current is not self.top:
            chain.append(current)
            current = current.parent_op()
        if current is None:
            return False
        visible = self.top.parent is None
        for op in [self.top, *reversed(chain)]:
            if is_symbol_table(op):
                visible = visible or not is_symbol(op) or is_private(op)
            else:
                visible = True
        return visible

    def _callee(self, call: CallOp) -> Operation | None:
        if call in self._targets:
            return self._targets[call]
        table = nearest_symbol_table(call)
        callee = None if table is None else self._tables.resolve(table, call.callee)
        if callee not in self._callsites:
            callee = None
        self._targets[call] = callee
        return callee

    # --- lattice updates ---------------------------------------------------------------

    def _push(self, op: Operation) -> None:
        if op not in self._queued:
            self._queued.add(op)
            self._worklist.append(op)

    def _set(self, value: SSAValue, lattice: Lattice) -> None:
        old = self.values.get(value)
        new = _join(old, lattice)
        if new is old or new == old:
            return
        self.values[value] = new
        for use in value.uses:
            self._push(use.operation)

    def _set_all(self, values: Iterable[SSAValue], lattice: Lattice) -> None:
        for value in values:
            self._set(value, lattice)

    def _join_into(
        self, targets: Sequence[SSAValue], sources: Sequence[SSAValue]
    ) -> None:
        """Join each source's lattice (when initialized) into its target."""
        if len(targets) != len(sources):
            self._set_all(targets, OVERDEFINED)
            return
        for target, source in zip(targets, sources, strict=True):
            lattice = self.values.get(source)
            if lattice is not None:
                self._set(target, lattice)

    def _mark_live(self, block: Block) -> None:
        if block in self.live_blocks:
            return
        self.live_blocks.add(block)
        for op in block.ops:
            self._push(op)

    def _enter(self, region: Region, unknown_args: bool) -> None:
        entry = region.first_block
        if entry is None:
            return
        if unknown_args:
            self._set_all(entry.args, OVERDEFINED)
        self._mark_live(entry)

    # --- transfer functions ---------------------------------------------------------------

    def _visit(self, op: Operation) -> None:
        block = op.parent
        if block is None or block not in self.live_blocks:
            return
        if isinstance(op, CallOp):
            self._visit_call(op)
        elif op.regions:
            self._visit_region_op(op)
        elif op.successors:
            self._visit_branch(op)
        else:
            if block.last_op is op and op.has_trait(
                IsTerminator, value_if_unregistered=True
            ):
                self._visit_terminator(op, block)
            if op.results:
                self._visit_plain(op)

    def _visit_plain(self, op: Operation) -> None:
        constants: list[tuple[Attribute, str] | None] = []
        for operand in op.operands:
            lattice = self.values.get(operand)
            if lattice is None:
                return
            constants.append(
                (lattice.value, lattice.dialect)
                if isinstance(lattice, ConstantValue)
                else None
            )
        folded = simulate_fold(self.ctx, op, constants)
        for result, item in zip(op.results, folded, strict=True):
            if item is None:
                self._set(result, OVERDEFINED)
            elif isinstance(item, int):
                lattice = self.values.get(op.operands[item])
                if lattice is not None:
                    self._set(result, lattice)
            else:
                self._set(result, ConstantValue(item, op.dialect_name()))

    def _visit_branch(self, op: Operation) -> None:
        taken = self._taken_successors(op)
        if taken is None:
            return
        known = branch_operands(op) is not None
        for index in taken:
            successor = op.successors[index]
            if known:
                self._join_into(successor.args, forwarded_operands(op, index))
            else:
                self._set_all(successor.args, OVERDEFINED)
            self._mark_live(successor)

    def _taken_successors(self, op: Operation) -> Sequence[int] | None:
        """The successors `op` may take; None until its condition is known."""
        every = range(len(op.successors))
        if branch_operands(op) is None:
            return every
        if isinstance(op, cf.ConditionalBranchOp):
            cond = _int(self.values.get(op.cond))
            if cond is None or isinstance(cond, _Overdefined):
                return None if cond is None else every
            return [0 if cond else 1]
        if isinstance(op, cf.SwitchOp):
            flag = _int(self.values.get(op.flag))
            if flag is None or isinstance(flag, _Overdefined):
                return None if flag is None else every
            cases = op.case_values
            values = [] if cases is None else [int(v) for v in cases.get_values()]
            flag_type = op.flag.type
            modulus = (
                1 << flag_type.bitwidth if isinstance(flag_type, IntegerType) else 0
            )
            for index, value in enumerate(values):
                if (value - flag) % modulus == 0 if modulus else value == flag:
                    return [index + 1]
            return [0]
        return every

    # --- region branches ---------------------------------------------------------------

    def _visit_region_op(self, op: Operation) -> None:
        region = callable_region(op)
        if op in self._callsites and region is not None:
            unknown = op in self._unknown_callers
            if unknown or self._callsites[op]:
                self._enter(region, unknown_args=unknown)
            return
        if not _is_region_branch(op):
            for nested in op.regions:
                self._enter(nested, unknown_args=True)
            self._set_all(op.results, OVERDEFINED)
            return
        targets = self._entry_targets(op)
        if targets is None:
            return
        for target in targets:
            self._flow(op, target, self._entry_inputs(op))
        # The edges out of the regions may depend on the parent's operands.
        for nested in op.regions:
            for block in nested.blocks:
                if block in self.live_blocks and block.last_op is not None:
                    self._push(block.last_op)

    def _entry_targets(self, op: Operation) -> Sequence[_Target] | None:
        if isinstance(op, scf.IfOp):
            cond = _int(self.values.get(op.cond))
            if cond is None:
                return None
            if isinstance(cond, _Overdefined):
                return [op.true_region, _non_empty(op.false_region)]
            return [op.true_region if cond else _non_empty(op.false_region)]
        if isinstance(op, scf.IndexSwitchOp):
            arg = _int(self.values.get(op.arg))
            if arg is None:
                return None
            cases = [int(v) for v in op.cases.get_values()]
            if isinstance(arg, _Overdefined):
                return [op.default_region, *op.case_regions]
            if arg in cases:
                return [op.case_regions[cases.index(arg)]]
            return [op.default_region]
        if isinstance(op, affine.IfOp):
            return [op.then_region, _non_empty(op.else_region)]
        if isinstance(op, scf.ForOp):
            return [op.body, None]
        if isinstance(op, affine.ForOp):
            trips = _affine_trip_count(op)
            if trips == 0:
                return [None]
            return [op.body] if trips is not None else [op.body, None]
        if isinstance(op, scf.WhileOp):
            return [op.before_region]
        return [op.regions[0]]  # scf.execute_region

    def _entry_inputs(self, op: Operation) -> Sequence[SSAValue]:
        if isinstance(op, scf.ForOp):
            return op.iter_args
        if isinstance(op, affine.ForOp):
            return op.inits
        if isinstance(op, scf.WhileOp):
            return op.arguments
        return ()

    def _flow(self, op: Operation, target: _Target, inputs: Sequence[SSAValue]) -> None:
        """Control reaches `target` of the region branch `op` with `inputs`."""
        if target is None:
            self._join_into(op.results, inputs)
            return
        entry = target.first_block
        if entry is None:
            return
        args = entry.args
        if isinstance(op, scf.ForOp | affine.ForOp) and args:
            self._set(args[0], OVERDEFINED)  # the induction variable
            args = args[1:]
        self._join_into(args, inputs)
        self._mark_live(entry)

    def _visit_terminator(self, op: Operation, block: Block) -> None:
        region = block.parent
        parent = None if region is None else region.parent
        if parent is None or region is None:
            return
        if parent in self._callsites and callable_region(parent) is region:
            self._return_to_callers(op, parent)
            return
        if not _is_region_branch(parent):
            return
        targets = self._exit_targets(parent, region, op)
        if targets is None:
            return
        inputs: Sequence[SSAValue] = op.operands
        if isinstance(op, scf.ConditionOp):
            inputs = op.args
        elif not isinstance(op, scf.YieldOp | affine.YieldOp):
            inputs = ()  # an unknown terminator: what it passes on is unknown
        for target in targets:
            self._flow(parent, target, inputs)

    def _exit_targets(
        self, parent: Operation, region: Region, op: Operation
    ) -> Sequence[_Target] | None:
        if isinstance(parent, scf.ForOp):
            return [region, None]
        if isinstance(parent, affine.ForOp):
            trips = _affine_trip_count(parent)
            return [None] if trips is not None and trips <= 1 else [region, None]
        if isinstance(parent, scf.WhileOp):
            if region is parent.after_region:
                return [parent.before_region]
            if not isinstance(op, scf.ConditionOp):
                return None
            cond = _int(self.values.get(op.condition))
            if cond is None:
                return None
            if isinstance(cond, _Overdefined):
                return [parent.after_region, None]
            return [parent.after_region if cond else None]
        return [None]

    # --- calls ---------------------------------------------------------------

    def _visit_call(self, call: CallOp) -> None:
        callee = self._callee(call)
        region = None if callee is None else callable_region(callee)
        if callee is None or region is None:
            self._set_all(call.results, OVERDEFINED)
            return
        callsites = self._callsites[callee]
        if call not in callsites:
            callsites[call] = None
            self._push(callee)
        entry = region.first_block
        if entry is not None and callee not in self._unknown_callers:
            self._join_into(entry.args, call.arguments)
        for block in region.blocks:
            if block in self.live_blocks and block.last_op is not None:
                self._push(block.last_op)

    def _return_to_callers(self, op: Operation, callable_op: Operation) -> None:
        returns = op.has_trait(ReturnLike, value_if_unregistered=False)
        for call in self._callsites[callable_op]:
            if returns:
                self._join_into(call.results, op.operands)
            else:
                self._set_all(call.results, OVERDEFINED)


def _nested(op: Operation) -> bool:
    visibility = op.get_attr_or_prop("sym_visibility")
    return isinstance(visibility, StringAttr) and visibility.data == "nested"


REGION_BRANCH_OPS: tuple[type[Operation], ...] = (
    scf.IfOp,
    scf.IndexSwitchOp,
    scf.ExecuteRegionOp,
    scf.ForOp,
    scf.WhileOp,
    affine.IfOp,
    affine.ForOp,
)
"""The xDSL ops whose control flow between regions the analysis models (MLIR's
`RegionBranchOpInterface` on them)."""


def _is_region_branch(op: Operation) -> bool:
    return isinstance(op, REGION_BRANCH_OPS) and not op.has_trait(
        CallableOpInterface, value_if_unregistered=False
    )
