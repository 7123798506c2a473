"""`CallGraph`: MLIR's call graph analysis, for the inliner.

A node per callable region (ops with xDSL's `CallableOpInterface` whose body is
not empty), plus two nodes without a region: the external caller, with an
abstract edge to every callable that is not nested in another, and the unknown
callee, target of calls that cannot be resolved. Edges are ordered and unique:
call edges from a callable to the callables its `func.call`s and `llvm.call`s name (resolved
from the nearest symbol table), child edges to the callables nested in it.
Request it with `pass.get_analysis(CallGraph)`; timing shows `(A) CallGraph`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

from xdsl.dialects.builtin import DenseArrayBase, SymbolRefAttr
from xdsl.ir import Operation, Region, SSAValue
from xdsl.traits import CallableOpInterface

from passflow.ir import operation_name
from passflow.transforms._symbols import SymbolTables, nearest_symbol_table

__all__ = [
    "CallGraph",
    "CallGraphNode",
    "call_arguments",
    "callable_region",
    "callee_of",
    "is_call",
]

_CALLS = frozenset({"func.call", "llvm.call"})
"""Ops that call the symbol in their `callee` (MLIR's CallOpInterface, which
xDSL's ops lack), by name so that no dialect is imported to recognise them."""

_CALLABLES_WITHOUT_INTERFACE = frozenset({"llvm.func"})
"""Callables whose xDSL class lacks `CallableOpInterface`: the body is the
first region."""


def is_call(op: Operation) -> bool:
    """Whether `op` is a registered call op passflow knows."""
    return op.name in _CALLS and operation_name(op).is_registered


def callee_of(call: Operation) -> SymbolRefAttr | None:
    """The symbol a call names; None for an indirect call."""
    callee = call.get_attr_or_prop("callee")
    return callee if isinstance(callee, SymbolRefAttr) else None


def call_arguments(call: Operation) -> Sequence[SSAValue]:
    """The operands a call passes to the callee's arguments: all of `func.call`'s;
    the `args` group of `llvm.call` (its first operands, before operand bundles)."""
    if call.name == "llvm.call":
        sizes = call.get_attr_or_prop("operandSegmentSizes")
        if isinstance(sizes, DenseArrayBase):
            counts = cast("DenseArrayBase[Any]", sizes).get_values()
            if counts:
                return call.operands[: int(counts[0])]
    return call.operands


def callable_region(op: Operation) -> Region | None:
    """The body of a callable op, or None for a declaration or a non-callable."""
    trait = op.get_trait(CallableOpInterface)
    if trait is None:
        if op.name not in _CALLABLES_WITHOUT_INTERFACE or not op.regions:
            return None
        region = op.regions[0]
        return region if region.first_block is not None else None
    try:
        region = trait.get_callable_region(op)
    except AssertionError:
        # xDSL gives `FuncOpCallableInterface`, which asserts a `func.func`, to
        # other ops too (`transform.named_sequence`): their body is the first region.
        if not op.regions:
            return None
        region = op.regions[0]
    return region if region.first_block is not None else None


class CallGraphNode:
    """A callable region, or (region None) the external or unknown node."""

    __slots__ = ("children", "edges", "region")

    def __init__(self, region: Region | None) -> None:
        self.region = region
        self.edges: dict[CallGraphNode, None] = {}
        """Targets of abstract, call and child edges, in insertion order."""
        self.children: set[CallGraphNode] = set()
        """Targets of child edges (nested callables)."""

    @property
    def is_external(self) -> bool:
        return self.region is None

    @property
    def callable_op(self) -> Operation | None:
        return None if self.region is None else self.region.parent

    def add_edge(self, target: CallGraphNode) -> None:
        self.edges[target] = None

    def __repr__(self) -> str:
        op = self.callable_op
        return "CallGraphNode(external)" if op is None else f"CallGraphNode({op.name})"


class CallGraph:
    """The call graph of every callable nested in the op it is computed on."""

    def __init__(self, op: Operation) -> None:
        self.external = CallGraphNode(None)
        self.unknown = CallGraphNode(None)
        self.nodes: dict[Region, CallGraphNode] = {}
        self.tables = SymbolTables()
        # Nodes first, so calls can name callables that come later.
        self._visit(op, None, resolve_calls=False)
        self._visit(op, None, resolve_calls=True)

    def _visit(
        self, op: Operation, parent: CallGraphNode | None, resolve_calls: bool
    ) -> None:
        stack: list[tuple[Operation, CallGraphNode | None]] = [(op, parent)]
        while stack:
            current, owner = stack.pop()
            if is_call(current):
                if resolve_calls and owner is not None:
                    owner.add_edge(self.resolve_call(current))
                continue
            if current.has_trait(CallableOpInterface, value_if_unregistered=False) or (
                current.name in _CALLABLES_WITHOUT_INTERFACE
                and operation_name(current).is_registered
            ):
                region = callable_region(current)
                if region is None:
                    continue
                owner = self._get_or_add_node(region, owner)
            children = [
                (child, owner)
                for nested in current.regions
                for block in nested.blocks
                for child in block.ops
            ]
            stack.extend(reversed(children))

    def _get_or_add_node(
        self, region: Region, parent: CallGraphNode | None
    ) -> CallGraphNode:
        node = self.nodes.get(region)
        if node is None:
            node = self.nodes[region] = CallGraphNode(region)
            if parent is None:
                self.external.add_edge(node)
            else:
                parent.add_edge(node)
                parent.children.add(node)
        return node

    def lookup_node(self, region: Region) -> CallGraphNode | None:
        return self.nodes.get(region)

    def resolve_call(self, call: Operation) -> CallGraphNode:
        """The node `call` targets; the unknown node if it does not resolve."""
        table = nearest_symbol_table(call)
        symbol = callee_of(call)
        callee = (
            None
            if table is None or symbol is None
            else self.tables.resolve(table, symbol)
        )
        region = None if callee is None else callable_region(callee)
        node = None if region is None else self.nodes.get(region)
        return self.unknown if node is None else node

    def __iter__(self) -> Iterator[CallGraphNode]:
        return iter(self.nodes.values())

    def post_order_sccs(self) -> list[list[CallGraphNode]]:
        """Strongly connected components reachable from the external node, callees
        before callers (LLVM's `scc_iterator`, Tarjan's algorithm)."""
        return _tarjan(self.external)


def _tarjan(root: CallGraphNode) -> list[list[CallGraphNode]]:
    index: dict[CallGraphNode, int] = {}
    low: dict[CallGraphNode, int] = {}
    stack: list[CallGraphNode] = []
    on_stack: set[CallGraphNode] = set()
    sccs: list[list[CallGraphNode]] = []
    visit: list[tuple[CallGraphNode, Iterator[CallGraphNode]]] = []

    def enter(node: CallGraphNode) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        visit.append((node, iter(node.edges)))

    enter(root)
    while visit:
        node, targets = visit[-1]
        target = next(targets, None)
        if target is not None:
            if target not in index:
                enter(target)
            elif target in on_stack:
                low[node] = min(low[node], index[target])
            continue
        visit.pop()
        if visit:
            parent = visit[-1][0]
            low[parent] = min(low[parent], low[node])
        if low[node] == index[node]:
            scc: list[CallGraphNode] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                scc.append(member)
                if member is node:
                    break
            sccs.append(scc)
    return sccs
