"""MLIR's greedy pattern rewrite driver (`applyPatternsGreedily`) on xDSL patterns.

xDSL's `PatternRewriteWalker` repeats until nothing changes; canonicalization as
MLIR defines it needs more: a bounded number of iterations (and whether they
sufficed), a bound on rewrites per iteration, top-down or bottom-up seeding,
constant uniquing and hoisting, and a choice of region simplification. Each
region of the op is driven separately; one iteration is:

1. erase unreachable blocks (always: patterns are not safe on unreachable code,
   where an op may use its own result);
2. seed the worklist with every nested op, uniquing constants on the way (an
   equal constant already seen in the same isolated region replaces the op, a
   new one moves to the front of that region's entry block); only constants
   `_effects.is_uniquable_constant` allows (effect free, no operands, no
   allocated register result) are uniqued or moved;
3. pop ops until the worklist is empty (or the rewrite budget is spent): erase
   the op if trivially dead, else fold it, else apply the first matching
   pattern; rewrites push the ops they touch (and their ancestors) back;
4. unless disabled, simplify the regions: erase unreachable blocks, dead ops.

Iterations repeat while steps 1, 3 or 4 changed something, up to
`max_iterations`; constant uniquing alone does not count, as in MLIR.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from xdsl.context import Context
from xdsl.dialect_interfaces.constant_materialization import (
    ConstantMaterializationInterface,
)
from xdsl.dialects.builtin import UnknownLoc, UnregisteredOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import ConstantLike, IsolatedFromAbove
from xdsl.utils.worklist import Worklist

from passflow import ir
from passflow.transforms._effects import (
    is_trivially_dead,
    is_uniquable_constant,
)
from passflow.transforms.region_simplify import (
    erase_unreachable_blocks,
    simplify_regions,
)
from passflow.xdsl_internals import Folder, retarget_rewriter, working_folder

__all__ = [
    "GreedyRewriteConfig",
    "PatternSet",
    "RegionSimplify",
    "apply_patterns_greedily",
    "insertion_region",
]

NO_LIMIT = -1


class RegionSimplify(Enum):
    """How much control flow is simplified after each iteration (MLIR's
    `GreedySimplifyRegionLevel`)."""

    DISABLED = "disabled"
    NORMAL = "normal"
    AGGRESSIVE = "aggressive"


@dataclass(frozen=True)
class GreedyRewriteConfig:
    """MLIR's `GreedyRewriteConfig`; -1 (`NO_LIMIT`) lifts a limit."""

    max_iterations: int = 10
    max_num_rewrites: int = NO_LIMIT
    region_simplify: RegionSimplify = RegionSimplify.NORMAL
    top_down: bool = True


@dataclass(frozen=True, slots=True)
class _OpClassInfo:
    patterns: tuple[RewritePattern, ...]
    folder: Folder | None
    constant_like: bool


class PatternSet:
    """The patterns to try on each op class, in order, with the class's folder;
    looked up once per class (xDSL trait lookups are costly) and reusable across
    runs while the patterns stay the same."""

    def __init__(
        self, patterns_of: Callable[[Operation], Sequence[RewritePattern]]
    ) -> None:
        self._patterns_of = patterns_of
        self._by_class: dict[type[Operation], _OpClassInfo] = {}

    def info(self, op: Operation) -> _OpClassInfo:
        found = self._by_class.get(type(op))
        if found is None:
            found = _OpClassInfo(
                tuple(self._patterns_of(op)),
                working_folder(op),
                op.has_trait(ConstantLike, value_if_unregistered=False),
            )
            if not isinstance(op, UnregisteredOp):  # a class per op: do not keep them
                self._by_class[type(op)] = found
        return found


@dataclass
class GreedyResult:
    """What a run did: `converged` unless iterations ran out while still changing;
    `modified` if the IR changed at all (constant moves included)."""

    converged: bool
    modified: bool


def apply_patterns_greedily(
    op: Operation, patterns: PatternSet, config: GreedyRewriteConfig, ctx: Context
) -> GreedyResult:
    """Rewrite the regions of `op` (not `op` itself) to a fixed point, if reached."""
    converged = True
    modified = False
    for region in op.regions:
        driver = _RegionDriver(region, patterns, config, ctx)
        try:
            converged = driver.run() and converged
        finally:
            driver.release()
        modified = modified or driver.modified
    return GreedyResult(converged, modified)


# --- constants ----------------------------------------------------------------


def insertion_region(block: Block) -> Region | None:
    """Where a constant used in `block` is uniqued: the nearest region whose op is
    isolated from above (or unregistered) or is a top-level op (MLIR's rule)."""
    region = block.parent
    while region is not None:
        parent = region.parent
        if parent is None:
            return region
        if parent.has_trait(IsolatedFromAbove, value_if_unregistered=True):
            return region
        outer = parent.parent
        if outer is None:
            return region
        region = outer.parent
    return None


class _ConstantTable:
    """MLIR's OperationFolder for the constants of one iteration: per insertion
    region, the first constant seen for each (dialect, value, type)."""

    def __init__(self) -> None:
        self._by_region: dict[
            Region, dict[tuple[str, Attribute, Attribute], Operation]
        ] = {}
        self._owned: dict[
            Operation, tuple[Region, tuple[str, Attribute, Attribute]]
        ] = {}
        self.changed_ir = False
        """Whether a constant was merged or moved (not a change MLIR counts)."""

    def forget(self, op: Operation) -> None:
        entry = self._owned.pop(op, None)
        if entry is not None:
            del self._by_region[entry[0]][entry[1]]

    def insert(
        self, op: Operation, value: Attribute, rewriter: PatternRewriter
    ) -> bool:
        """Unique the constant `op`: False if an equal constant replaced it."""
        block = op.parent
        region = None if block is None else insertion_region(block)
        if block is None or region is None:
            return True
        key = (op.dialect_name(), value, op.results[0].type)
        known = self._by_region.setdefault(region, {})
        existing = known.get(key)
        if existing is not None:
            rewriter.replace(op, (), existing.results)
            # The survivor stands for constants from several places: MLIR's
            # OperationFolder gives it its erased location, `loc(unknown)`.
            existing.location = UnknownLoc()
            ir.forget_parse_positions((existing,))
            self.changed_ir = True
            return False
        entry = region.first_block
        if entry is not None and not self._at_front(op, block, entry):
            self.changed_ir = True
            op.detach()
            first = entry.first_op
            if first is None:
                entry.add_op(op)
            else:
                entry.insert_op_before(op, first)
        known[key] = op
        self._owned[op] = (region, key)
        return True

    def _at_front(self, op: Operation, block: Block, entry: Block) -> bool:
        if block is not entry:
            return False
        previous = op.prev_op
        return previous is None or previous in self._owned


# --- the driver -----------------------------------------------------------------


class _RegionDriver:
    """One `applyPatternsGreedily` on one region."""

    def __init__(
        self,
        region: Region,
        patterns: PatternSet,
        config: GreedyRewriteConfig,
        ctx: Context,
    ) -> None:
        self.region = region
        self.patterns = patterns
        self.config = config
        self.ctx = ctx
        self.modified = False
        self.worklist: Worklist[Operation] = Worklist()
        self.constants = _ConstantTable()
        self.rewriter = self._make_rewriter()

    def release(self) -> None:
        """Break the driver <-> rewriter cycle (the rewriter's handlers are this
        driver's methods), so that the worklist, the constant table and the ops
        they still hold (erased ones too) die with the driver even while the
        cyclic collector is off, as passflow-opt runs."""
        rewriter = self.rewriter
        rewriter.operation_insertion_handler.clear()
        rewriter.operation_modification_handler.clear()
        rewriter.operation_removal_handler.clear()
        self.worklist = Worklist()
        self.constants = _ConstantTable()

    def _make_rewriter(self) -> PatternRewriter:
        rewriter = PatternRewriter(InsertPoint.at_start(Block()))
        rewriter.operation_insertion_handler.append(self._push)
        rewriter.operation_modification_handler.append(self._push)
        rewriter.operation_removal_handler.append(self._on_removal)
        return rewriter

    def run(self) -> bool:
        """Iterate; True if the last iteration changed nothing (converged)."""
        limit = self.config.max_iterations
        iteration = 0
        changing = False
        while True:
            iteration += 1
            if limit != NO_LIMIT and iteration > limit:
                break
            self.worklist = Worklist()
            self.constants = _ConstantTable()
            changing = erase_unreachable_blocks(self.region, self.rewriter)
            self._seed()
            changing = self._process() or changing
            if self.config.region_simplify is not RegionSimplify.DISABLED:
                changing = self._simplify_regions() or changing
            self.modified = self.modified or changing
            if not changing:
                break
        return not changing

    # --- worklist -----------------------------------------------------------------

    def _push(self, op: Operation) -> None:
        """Add `op` and its ancestors up to the driven region (MLIR's addToWorklist)."""
        chain: list[Operation] = []
        current: Operation | None = op
        while current is not None:
            chain.append(current)
            block = current.parent
            region = None if block is None else block.parent
            if region is self.region:
                push = self.worklist.push
                for item in chain:
                    push(item)
                return
            if region is None:
                return
            current = region.parent

    def _on_removal(self, op: Operation) -> None:
        """An op is about to be erased: drop it (and what it holds) from the
        worklist and the constant table, and revisit the producers of its operands."""
        self._push_operand_producers(op)
        remove = self.worklist.remove
        forget = self.constants.forget
        if op.regions:
            for nested in op.walk():
                remove(nested)
                forget(nested)
        else:
            remove(op)
            forget(op)

    def _push_operand_producers(self, op: Operation) -> None:
        """MLIR's addOperandsToWorklist: producers left with at most one other user."""
        for operand in op.operands:
            producer = operand.owner
            if not isinstance(producer, Operation):
                continue
            others: set[Operation] = set()
            for use in operand.uses:
                if use.operation is not op:
                    others.add(use.operation)
                    if len(others) > 1:
                        break
            if len(others) <= 1:
                self._push(producer)

    def _seed(self) -> None:
        """Fill the worklist so ops pop in pre-order (top-down) or in reverse
        post-order (bottom-up), uniquing constants as they are met."""
        top_down = self.config.top_down
        order = list(self.region.walk(region_first=not top_down))
        keep: list[Operation] = []
        for op in order:
            value = self._constant_value(op)
            if value is None or self.constants.insert(op, value, self.rewriter):
                keep.append(op)
        self.modified = self.modified or self.constants.changed_ir
        if top_down:
            keep.reverse()
        push = self.worklist.push
        for op in keep:
            push(op)

    def _constant_value(self, op: Operation) -> Attribute | None:
        """The value of a constant that may be uniqued and hoisted, as its folder
        gives it; None for any other op, which then stays where it is.

        `is_uniquable_constant` decides, not the `ConstantLike` trait alone: an
        `rv32.li 5 : !riscv.reg<a0>` is `ConstantLike` but writes a0 where it is,
        so merging it with an earlier equal one or hoisting it would let a write
        of a0 in between (`rv32.li 7 : !riscv.reg<a0>`) change what its users read.
        """
        info = self.patterns.info(op)
        folder = info.folder
        if not info.constant_like or folder is None or not is_uniquable_constant(op):
            return None
        folded = folder.fold(op)
        value = None if folded is None else folded[0]
        return value if isinstance(value, Attribute) else None

    # --- processing ---------------------------------------------------------------

    def _process(self) -> bool:
        """Pop until empty or the rewrite budget is spent; True if anything changed."""
        worklist = self.worklist
        budget = self.config.max_num_rewrites
        rewrites = 0
        changed = False
        while worklist and (budget == NO_LIMIT or rewrites < budget):
            op = worklist.pop()
            if is_trivially_dead(op):
                self._reset(op)
                self.rewriter.erase(op)
                changed = True
            elif self._try_fold(op):
                changed = True
            elif self._try_patterns(op):
                changed = True
                rewrites += 1
        return changed

    def _reset(self, op: Operation) -> PatternRewriter:
        return retarget_rewriter(self.rewriter, op)

    def _try_patterns(self, op: Operation) -> bool:
        patterns = self.patterns.info(op).patterns
        if not patterns:
            return False
        rewriter = self._reset(op)
        for pattern in patterns:
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return True
        return False

    def _try_fold(self, op: Operation) -> bool:
        """Replace `op` by what its folder computes; constants are materialized
        just before it, and the next iteration's seeding uniques and hoists those
        `is_uniquable_constant` allows (a constant that writes an allocated
        register, as RISC-V's `li` for a folded `addi` to a0, stays there)."""
        info = self.patterns.info(op)
        if info.constant_like or info.folder is None:
            return False
        folded = info.folder.fold(op)
        if folded is None or all(
            new is old for new, old in zip(folded, op.results, strict=True)
        ):
            return False
        replacements = self._materialize(op, folded)
        if replacements is None:
            return False
        new_ops = [
            value.owner
            for value in replacements
            if isinstance(value.owner, Operation) and value.owner.parent is None
        ]
        self._reset(op).replace(op, new_ops, replacements)
        return True

    def _materialize(
        self, op: Operation, folded: Sequence[SSAValue | Attribute]
    ) -> list[SSAValue] | None:
        """SSA values for the fold results, making constant ops (not yet inserted)
        for attributes; None if the dialect cannot materialize one."""
        values: list[SSAValue] = []
        interface: ConstantMaterializationInterface | None = None
        for result, value in zip(op.results, folded, strict=True):
            if isinstance(value, SSAValue):
                values.append(value)
                continue
            if interface is None:
                dialect = self.ctx.get_optional_dialect(op.dialect_name())
                interface = (
                    None
                    if dialect is None
                    else dialect.get_interface(ConstantMaterializationInterface)
                )
                if interface is None:
                    return None
            constant = interface.materialize_constant(value, result.type)
            if constant is None:
                return None
            values.append(constant.results[0])
        return values

    # --- region simplification --------------------------------------------------

    def _simplify_regions(self) -> bool:
        """MLIR's simplifyRegions on the driven region: unreachable blocks, dead
        ops and block arguments and, when aggressive, identical blocks and
        redundant arguments; erased ops leave the worklist through the rewriter."""
        aggressive = self.config.region_simplify is RegionSimplify.AGGRESSIVE
        return simplify_regions(
            self.region, "aggressive" if aggressive else "normal", self.rewriter
        )
