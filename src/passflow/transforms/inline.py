"""`inline`: inline `func.call`s and `llvm.call`s and simplify the callers (MLIR's
Inliner pass).

The call graph's strongly connected components are visited callees first. For
each one, up to `max-iterations` times: run the simplification pipeline on each
of its callables as a dynamic pipeline, then inline the calls made from it; stop
early when nothing was inlined. Calls are not inlined into their own callee,
along a cycle of the call graph, or again into code inlined from the same
callee (MLIR's inline history), or when the call or the callee carries
`no_inline`, or when the llvm dialect's rules forbid it (see
`_is_legal_llvm_call`). A private callee (or a `nested` one that nothing outside the IR
sees) whose last call was inlined, or that has no use at all, is erased at the
end.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import cast

from xdsl.dialects import cf, func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr, UnregisteredOp
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.irdl import (
    IRDLOperation,
    OptionalDef,
    OptSingleBlockRegionDef,
    SingleBlockRegionDef,
    VariadicDef,
    VarSingleBlockRegionDef,
)
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import IsTerminator, SingleBlockImplicitTerminator

from passflow.analyses.dominance import GRAPH_REGION_OPS
from passflow.diagnostics import PassflowError
from passflow.ir import direct_children, is_isolated_from_above
from passflow.manager import Nesting, OpPassManager
from passflow.options import UNSIGNED, ListOption, Option
from passflow.pass_base import OperationPass
from passflow.pipeline_text import PIPELINE, parse_pass_pipeline_into
from passflow.transforms._symbols import (
    can_discard_on_use_empty,
    is_private,
    is_symbol,
    is_symbol_table,
    nearest_symbol_table,
    not_a_symbol_table,
    symbol_uses,
    walk_symbol_tables,
)
from passflow.transforms.call_graph import (
    CallGraph,
    CallGraphNode,
    call_arguments,
    callable_region,
    is_call,
)

__all__ = ["Inliner"]

_NO_THRESHOLD = 2**32 - 1


class Inliner(OperationPass):
    """Replace calls to functions of the same symbol table by the function bodies,
    simplifying each function with a pipeline before and after.

    Inlining removes call overhead and exposes the callee's code to the caller's
    optimizations; the simplification pipeline (`canonicalize` unless
    `default-pipeline` or `op-pipelines` says otherwise) runs through the pass
    manager as a dynamic pipeline, so instrumentation and timing see it.
    """

    name = "Inliner"
    argument = "inline"
    summary = "Inline function calls"
    dependent_dialects = ("cf",)

    default_pipeline = Option(
        "canonicalize",
        help="The optimizer pipeline used for callables that do not have a dedicated "
        "optimizer pipeline in opPipelineList",
    )
    op_pipelines = ListOption(
        PIPELINE,
        help="Callable operation specific optimizer pipelines (in the form of "
        "`dialect.op(pipeline)`)",
    )
    max_iterations = Option(
        4,
        type=UNSIGNED,
        help="Maximum number of iterations when inlining within an SCC",
    )
    inlining_threshold = Option(
        _NO_THRESHOLD,
        type=UNSIGNED,
        help="If the ratio between the number of the operations in the callee and the "
        "number of the operations in the caller exceeds this value (in percentage), "
        "then the callee is not inlined even if it is legal to inline it",
    )

    def get_dependent_dialects(self) -> list[str]:
        """`cf` (branches for multi-block callees) and the pipelines' dialects."""
        dialects = list(self.dependent_dialects)
        pipelines = self._explicit_pipelines()
        try:
            default = self.pipeline_for("any")
        except PassflowError:
            default = None  # reported when the pipeline is built during the run
        if default is not None:
            pipelines.append(default)
        for pipeline in pipelines:
            dialects.extend(pipeline.dependent_dialects())
        return dialects

    def run_on_operation(self) -> None:
        graph = self.get_analysis(CallGraph)
        op = self.get_operation()
        if not is_symbol_table(op):
            self.emit_diagnostic(not_a_symbol_table(op, "the inliner", self.argument))
            self.signal_pass_failure()
            return
        try:
            succeeded = _InlinerRun(self, graph).run()
        except PassflowError as err:  # a simplification pipeline that does not parse
            self.emit_error(op, str(err))
            succeeded = False
        if not succeeded:
            self.signal_pass_failure()

    def _explicit_pipelines(self) -> list[OpPassManager]:
        return list(self.op_pipelines)

    def pipeline_for(self, op_name: str) -> OpPassManager | None:
        """The simplification pipeline for callables called `op_name`, if any: the
        first non-empty `op-pipelines` entry anchored on it, else the default."""
        for pipeline in self._explicit_pipelines():
            if len(pipeline) and pipeline.anchor == op_name:
                return pipeline
        if not self.default_pipeline:
            return None
        pipeline = OpPassManager(op_name, Nesting.IMPLICIT)
        parse_pass_pipeline_into(self.default_pipeline, pipeline)
        return pipeline


@dataclass
class _Call:
    """A call to inline: MLIR's ResolvedCall plus its inline-history entry."""

    op: Operation
    source: CallGraphNode
    target: CallGraphNode
    history: int | None = None


def _is_discardable(op: Operation, all_uses_visible: bool) -> bool:
    """A symbol that may be erased once unused: private, or not public in a table
    whose uses are all visible (MLIR's CGUseList rule)."""
    return (
        is_symbol(op)
        and (all_uses_visible or is_private(op))
        and can_discard_on_use_empty(op)
    )


class _UseList:
    """MLIR's CGUseList: how many symbol uses each discardable callable has
    (private, or nested in a table nothing outside the IR sees), and which uses
    each callable holds, kept up to date while calls are inlined so a callee
    with no use left can be erased."""

    def __init__(self, root: Operation, graph: CallGraph) -> None:
        self.graph = graph
        self.uses: dict[CallGraphNode, int] = {}
        self.held: dict[CallGraphNode, Counter[CallGraphNode]] = {}
        always_live: set[CallGraphNode] = set()
        # A top-level op's symbols can only be used from the IR itself.
        for table, all_uses_visible in walk_symbol_tables(root, root.parent is None):
            for op in direct_children(table):
                region = callable_region(op)
                node = None if region is None else graph.lookup_node(region)
                if node is not None:
                    if _is_discardable(op, all_uses_visible):
                        self.uses[node] = 0
                else:
                    always_live.update(self._referenced(op))
        for node in always_live:
            self.uses.pop(node, None)
        for node in graph:
            self.recompute(node)

    def _referenced(self, op: Operation) -> Counter[CallGraphNode]:
        """The callable nodes named by the symbol uses in `op`, with counts."""
        found: Counter[CallGraphNode] = Counter()
        parent = op.parent_op()
        table = None if parent is None else nearest_symbol_table(parent)
        if table is None:
            return found
        for ref in symbol_uses(op) or ():
            symbol = self.graph.tables.resolve(table, ref)
            region = None if symbol is None else callable_region(symbol)
            node = None if region is None else self.graph.lookup_node(region)
            if node is not None:
                found[node] += 1
        return found

    def recompute(self, node: CallGraphNode) -> None:
        """Recount the discardable uses held by `node` (after it changed)."""
        op = node.callable_op
        if op is None:
            return
        self._drop(self.held.pop(node, Counter()))
        held = Counter(
            {n: c for n, c in self._referenced(op).items() if n in self.uses}
        )
        self.held[node] = held
        for target, count in held.items():
            self.uses[target] += count

    def _drop(self, held: Counter[CallGraphNode]) -> None:
        for target, count in held.items():
            if target in self.uses:
                self.uses[target] -= count

    def is_dead(self, node: CallGraphNode) -> bool:
        return self.uses.get(node) == 0

    def has_one_use_and_discardable(self, node: CallGraphNode) -> bool:
        return self.uses.get(node) == 1

    def call_inlined(self, call: _Call) -> None:
        """The call is gone and the callee's uses now live in the caller too."""
        held = self.held.setdefault(call.source, Counter())
        if call.target in self.uses and held[call.target] > 0:
            held[call.target] -= 1
            self.uses[call.target] -= 1
        for target, count in self.held.get(call.target, Counter()).items():
            held[target] += count
            if target in self.uses:
                self.uses[target] += count

    def erase_node(self, node: CallGraphNode) -> None:
        self._drop(self.held.pop(node, Counter()))
        self.uses.pop(node, None)


class _InlinerRun:
    """One run of the inliner on a symbol table op."""

    def __init__(self, pass_: Inliner, graph: CallGraph) -> None:
        self.pass_ = pass_
        self.graph = graph
        self.use_list = _UseList(pass_.get_operation(), graph)
        self.pipelines: dict[str, OpPassManager | None] = {}
        self.history: list[tuple[CallGraphNode, int | None]] = []
        self.dead: list[CallGraphNode] = []

    def run(self) -> bool:
        for scc in self.graph.post_order_sccs():
            if not self._inline_scc(scc):
                return False
        for node in self.dead:
            op = node.callable_op
            if op is not None and op.parent is not None:
                Rewriter.erase_op(op)
        return True

    def _inline_scc(self, scc: list[CallGraphNode]) -> bool:
        iteration = 0
        while True:
            if not self._optimize_scc(scc):
                return False
            if not self._inline_calls_in_scc(scc):
                return True
            iteration += 1
            if iteration >= self.pass_.max_iterations:
                return True

    # --- simplification ---------------------------------------------------------

    def _optimize_scc(self, scc: list[CallGraphNode]) -> bool:
        """Run the simplification pipeline on each callable of the SCC that may
        have one (not external, no nested callables, isolated from above)."""
        nodes = [
            (node, op)
            for node in scc
            if (op := node.callable_op) is not None
            and not node.children
            and is_isolated_from_above(op)
        ]
        for _, op in nodes:
            pipeline = self._pipeline_for(op.name)
            if pipeline is not None and not self.pass_.run_pipeline(pipeline, op):
                return False
        for node, _ in nodes:
            self.use_list.recompute(node)
        return True

    def _pipeline_for(self, op_name: str) -> OpPassManager | None:
        if op_name not in self.pipelines:
            self.pipelines[op_name] = self.pass_.pipeline_for(op_name)
        return self.pipelines[op_name]

    # --- inlining ---------------------------------------------------------------

    def _inline_calls_in_scc(self, scc: list[CallGraphNode]) -> bool:
        calls: list[_Call] = []
        dead: set[CallGraphNode] = set()
        for node in scc:
            if node.region is None:
                continue
            if self.use_list.is_dead(node):
                dead.add(node)
            else:
                self._collect_calls(list(node.region.blocks), node, calls, nested=False)
        inlined = False
        index = 0
        while index < len(calls):
            call = calls[index]
            index += 1
            region = call.target.region
            if (
                region is None
                or call.source in dead
                or not self._should_inline(call, region)
            ):
                continue
            self._inline(call, region, calls, dead)
            inlined = True
        for node in dead:
            if node in scc:
                scc.remove(node)
            self.dead.append(node)
        return inlined

    def _collect_calls(
        self,
        blocks: list[Block],
        source: CallGraphNode,
        calls: list[_Call],
        nested: bool,
        history: int | None = None,
    ) -> None:
        """Append the resolvable calls in `blocks` (MLIR's collectCallOps: blocks
        taken last first, nested regions after their block; nested callables
        only when `nested`)."""
        worklist = [(block, source) for block in blocks]
        while worklist:
            block, owner = worklist.pop()
            for op in block.ops:
                if is_call(op):
                    target = self.graph.resolve_call(op)
                    if not target.is_external:
                        calls.append(_Call(op, owner, target, history))
                    continue
                for region in op.regions:
                    node = self.graph.lookup_node(region)
                    if nested or node is None:
                        worklist.extend((b, node or owner) for b in region.blocks)

    def _in_history(self, target: CallGraphNode, history: int | None) -> bool:
        while history is not None:
            node, history = self.history[history]
            if node is target:
                return True
        return False

    def _should_inline(self, call: _Call, region: Region) -> bool:
        """MLIR's Inliner::Impl::shouldInline, plus the inline-history check."""
        if self._in_history(call.target, call.history):
            return False
        if call.op.has_trait(IsTerminator):
            return False
        if call.target in call.target.edges or call.source in call.target.edges:
            return False
        if region.parent is not None and region.parent.is_ancestor(call.op):
            return False
        if not self._fits_caller_region(call, region):
            return False
        return (
            self._is_profitable(call)
            and self._is_legal_call(call, region)
            and not isinstance(call.op.parent_op(), UnregisteredOp)
            and _is_legal(region)
        )

    def _is_legal_call(self, call: _Call, region: Region) -> bool:
        """The call's dialect's `isLegalToInline(call, callable)`."""
        if call.op.name == "llvm.call":
            return _is_legal_llvm_call(call.op, region)
        return _is_legal_call(call.op, region)

    def _fits_caller_region(self, call: _Call, region: Region) -> bool:
        """A multi-block callee only goes where several blocks are allowed."""
        if region.first_block is region.last_block:
            return True
        caller_parent = call.op.parent_op()
        if caller_parent is None or region.parent is None:
            return False
        if caller_parent.name == region.parent.name:
            return True
        if isinstance(caller_parent, UnregisteredOp):
            return False
        return not _must_have_one_block(caller_parent, call.op)

    def _is_profitable(self, call: _Call) -> bool:
        threshold = self.pass_.inlining_threshold
        if threshold == 0:
            return False
        if threshold == _NO_THRESHOLD:
            return True
        caller, callee = call.source.region, call.target.region
        caller_ops = 0 if caller is None else _count_ops(caller)
        if caller_ops == 0 or callee is None:
            return True
        return _count_ops(callee) * 100 // caller_ops <= threshold

    def _inline(
        self, call: _Call, region: Region, calls: list[_Call], dead: set[CallGraphNode]
    ) -> None:
        """Inline `region` (the callee's body) at one call, queue the calls it
        brought in, update the uses."""
        in_place = self.use_list.has_one_use_and_discardable(call.target)
        body = _clone_body(call.op, region)
        self.history.append((call.target, call.history))
        self._collect_calls(
            list(body.blocks),
            call.source,
            calls,
            nested=True,
            history=len(self.history) - 1,
        )
        _splice(call.op, body)
        self.use_list.call_inlined(call)
        if in_place:
            self.use_list.erase_node(call.target)
            dead.add(call.target)


_SINGLE_BLOCK_DEFS = (
    SingleBlockRegionDef,
    VarSingleBlockRegionDef,
    OptSingleBlockRegionDef,
)


def _must_have_one_block(parent: Operation, call: Operation) -> bool:
    """Whether the region of `parent` holding `call` may have one block only
    (MLIR's inliner asks the region's op, through `SingleBlock` and
    `SizedRegion<1>`, before splicing a multi-block body into it).

    xDSL says so with `SingleBlockImplicitTerminator` (`scf.for`, `scf.if`) or
    with single-block region definitions (`region_def("single_block")`: both
    regions of `scf.while`, the cases of `scf.index_switch`); a graph region
    (`builtin.module`) has one block too. With variadic regions the index of a
    definition is not the region's, so any single-block definition counts.
    """
    if parent.has_trait(SingleBlockImplicitTerminator) or (
        parent.name in GRAPH_REGION_OPS
    ):
        return True
    if not isinstance(parent, IRDLOperation):
        return False
    definitions = [
        definition for _, definition in type(parent).get_irdl_definition().regions
    ]
    region = call.parent_region()
    index = next(
        (i for i, candidate in enumerate(parent.regions) if candidate is region), None
    )
    if index is None or any(
        isinstance(definition, VariadicDef | OptionalDef) for definition in definitions
    ):
        return any(isinstance(d, _SINGLE_BLOCK_DEFS) for d in definitions)
    return index < len(definitions) and isinstance(
        definitions[index], _SINGLE_BLOCK_DEFS
    )


def _count_ops(region: Region) -> int:
    return sum(1 for _ in region.walk())


_NO_INLINE = "no_inline"


def _is_legal_call(call: Operation, region: Region) -> bool:
    """The func dialect's `isLegalToInline(call, callable)`: neither the call nor
    the callee carries `no_inline`. MLIR declares it a unit attribute of both ops;
    any value is honoured here, since xDSL does not check it."""
    callee = region.parent
    return call.get_attr_or_prop(_NO_INLINE) is None and (
        callee is None or callee.get_attr_or_prop(_NO_INLINE) is None
    )


def _is_legal(region: Region) -> bool:
    """Whether every op of the callee may be inlined: stands in for MLIR's
    dialect inliner interfaces, which only unregistered ops lack here (so a call
    in a region of an unregistered op is not inlined either)."""
    return not any(isinstance(op, UnregisteredOp) for op in region.walk())


def _clone_body(call: Operation, region: Region) -> Region:
    """A copy of the callee body whose entry arguments are replaced by the call's
    operands."""
    body = region.clone()
    entry = body.first_block
    assert entry is not None
    for arg, operand in zip(entry.args, call_arguments(call), strict=True):
        arg.replace_all_uses_with(operand)
    return body


def _splice(call: Operation, body: Region) -> None:
    """Put `body` in place of `call` (MLIR's inlineRegion with the func and llvm
    dialects' terminator handling) and erase the call."""
    entry = body.first_block
    assert entry is not None
    caller_block = call.parent
    assert caller_block is not None
    if entry is body.last_block:
        Rewriter.inline_block(entry, InsertPoint.before(call))
        returned = call.prev_op
        assert returned is not None
        for result, value in zip(call.results, returned.operands, strict=True):
            result.replace_all_uses_with(value)
        Rewriter.erase_op(returned)
    else:
        after = call.next_op
        assert after is not None
        post = caller_block.split_before(after)
        for result in call.results:
            result.replace_all_uses_with(post.insert_arg(result.type, len(post.args)))
        for block in body.blocks:
            _branch_on_return(block, post)
        body.move_blocks_before(post)
        Rewriter.inline_block(entry, InsertPoint.at_end(caller_block))
    Rewriter.erase_op(call)


def _branch_on_return(block: Block, dest: Block) -> None:
    """Replace the block's `func.return` by a `cf.br` to `dest` with its
    operands, an `llvm.return` by an `llvm.br`."""
    last = block.last_op
    if isinstance(last, func.ReturnOp):
        block.insert_op_before(cf.BranchOp(dest, *last.arguments), last)
        Rewriter.erase_op(last)
    elif last is not None and last.name == "llvm.return":
        # Only IR holding llvm ops gets here, with the dialect already loaded.
        from xdsl.dialects.llvm import BrOp

        block.insert_op_before(BrOp(dest, *last.operands), last)
        Rewriter.erase_op(last)


_DISALLOWED_PASSTHROUGH = frozenset(
    {"noduplicate", "presplitcoroutine", "returns_twice", "strictfp"}
)
"""Function attributes under which the llvm dialect does not inline."""

_UNSUPPORTED_ARGUMENT_ATTRS = frozenset({"llvm.inalloca", "llvm.byval", "llvm.noalias"})
"""`inalloca` forbids inlining in MLIR; `byval` and `noalias` make MLIR insert
copies or alias scopes that passflow does not build, so it does not inline."""

_UNSUPPORTED_IN_CALLEE = frozenset({"llvm.alloca"})
"""Ops MLIR moves or brackets (lifetime markers, stack save and restore) when it
inlines them, with intrinsics xDSL lacks: a callee holding one is not inlined."""


def _is_legal_llvm_call(call: Operation, region: Region) -> bool:
    """The llvm dialect's `isLegalToInline(call, callable)` (mlir-opt 22), made
    stricter where inlining would need rewrites passflow does not do: the callee
    must be an `llvm.func` that is not `no_inline`, not variadic, has no
    personality and no disallowed passthrough attribute; passflow also keeps
    calls whose callee allocates stack (`llvm.alloca`) or has `byval`,
    `noalias` or `inalloca` arguments, and calls with operand bundles."""
    callee = region.parent
    if callee is None or callee.name != "llvm.func":
        return False
    if len(call_arguments(call)) != len(call.operands):
        return False
    if callee.get_attr_or_prop("no_inline") is not None:
        return False
    if callee.get_attr_or_prop("personality") is not None:
        return False
    function_type = callee.get_attr_or_prop("function_type")
    if getattr(function_type, "is_variadic", False):
        return False
    passthrough = callee.get_attr_or_prop("passthrough")
    if isinstance(passthrough, ArrayAttr):
        for entry in cast("ArrayAttr[Attribute]", passthrough).data:
            if isinstance(entry, StringAttr) and entry.data in _DISALLOWED_PASSTHROUGH:
                return False
    arg_attrs = callee.get_attr_or_prop("arg_attrs")
    if isinstance(arg_attrs, ArrayAttr):
        for entry in cast("ArrayAttr[Attribute]", arg_attrs).data:
            if isinstance(entry, DictionaryAttr) and any(
                name in _UNSUPPORTED_ARGUMENT_ATTRS for name in entry.data
            ):
                return False
    return not any(op.name in _UNSUPPORTED_IN_CALLEE for op in region.walk())
