"""`view-op-graph`: write the op's IR as a Graphviz DOT graph to stderr (MLIR's
ViewOpGraph pass, in mlir-opt 22's layout).

Every op with regions is a cluster (`subgraph cluster_N`) holding one cluster per
block; every other op is a record node listing its operands, its name, its
attributes and its results, filled with a colour per op name; block arguments
are record nodes of their own. Data-flow edges go from the port of a value's
definition to the port of its use; control-flow edges, on request, join the
consecutive ops of a block. Edges from or to a cluster start or end at its
invisible anchor node, clipped to the cluster (`ltail`, `lhead`). Values are
named as mlir-opt's printer names them (`passflow.transforms.asm_names`);
attributes are printed by xDSL. The IR is not changed.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from xdsl.dialects.builtin import ArrayAttr, DenseIntOrFPElementsAttr, ShapedType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from passflow.ir import operation_name, print_attribute
from passflow.options import UNSIGNED, Option
from passflow.pass_base import OperationPass
from passflow.transforms.asm_names import value_names

__all__ = ["ViewOpGraph", "op_graph"]

_LARGE_ATTRIBUTE_LIMIT = 16
"""MLIR's default elision limit for elements and array attributes."""

_UNREGISTERED_NAME = "op_name__"
"""Where xDSL keeps an unregistered op's name: no attribute to MLIR."""


class ViewOpGraph(OperationPass):
    """Draw the op as a Graphviz graph, to look at the structure and data flow
    of IR too large to read as text (`dot -Tsvg` renders it)."""

    name = "ViewOpGraph"
    argument = "view-op-graph"
    summary = "Print Graphviz visualization of an operation"
    description = """\
This pass prints a Graphviz graph of a module.

- Operations are represented as nodes;
- Uses (data flow) as edges;
- Control flow as dashed edges;
- Regions/blocks as subgraphs.

By default, only data flow edges are printed.

Note: See https://www.graphviz.org/doc/info/lang.html for more information
about the Graphviz DOT language.
"""

    max_label_len = Option(
        20, type=UNSIGNED, help="Limit attribute/type length to number of chars"
    )
    print_attrs = Option(True, help="Print attributes of operations")
    print_control_flow_edges = Option(False, help="Print control flow edges")
    print_data_flow_edges = Option(True, help="Print data flow edges")
    print_result_types = Option(True, help="Print result types of operations")

    def run_on_operation(self) -> None:
        style = GraphStyle(
            max_label_len=self.max_label_len,
            print_attrs=self.print_attrs,
            print_control_flow_edges=self.print_control_flow_edges,
            print_data_flow_edges=self.print_data_flow_edges,
            print_result_types=self.print_result_types,
        )
        sys.stderr.write(op_graph(self.get_operation(), style))
        self.mark_all_analyses_preserved()


@dataclass(frozen=True)
class GraphStyle:
    """What the graph shows: the pass's options."""

    max_label_len: int = 20
    print_attrs: bool = True
    print_control_flow_edges: bool = False
    print_data_flow_edges: bool = True
    print_result_types: bool = True


def op_graph(op: Operation, style: GraphStyle | None = None) -> str:
    """The DOT text of `op` and everything nested in it."""
    return _Writer(op, style or GraphStyle()).write()


@dataclass(frozen=True)
class _Node:
    id: int
    cluster: int | None = None


def _escape(text: str) -> str:
    """Escape what a record label gives meaning to, and quotes."""
    for char in '"<>{}|':
        text = text.replace(char, "\\" + char)
    return text


def _port(prefix: str, name: str) -> str:
    return f"{prefix}_{name.replace('#', '_')}"


def _attr_map(attrs: dict[str, str]) -> str:
    return "[" + ", ".join(f"{key} = {attrs[key]}" for key in sorted(attrs)) + "]"


class _Writer:
    def __init__(self, root: Operation, style: GraphStyle) -> None:
        self.root = root
        self.style = style
        self.names = value_names(root)
        self.colors = _colors(root)
        self.lines: list[str] = []
        self.depth = 0
        self.counter = 0
        self.control_edges: list[str] = []
        self.data_edges: list[tuple[SSAValue, _Node, str]] = []
        self.value_nodes: dict[SSAValue, _Node] = {}

    def write(self) -> str:
        self._line("digraph G {")
        self.depth += 1
        self._line("compound = true;")
        self._operation(self.root)
        for edge in self.control_edges:
            self._line(edge + ";")
        for value, node, port in self.data_edges:
            source = self.value_nodes.get(value)
            if source is not None:
                self._line(
                    self._edge(source, self._value_port(value), node, port) + ";"
                )
        self.depth -= 1
        self._line("}")
        return "".join(self.lines)

    def _line(self, text: str) -> None:
        self.lines.append("  " * self.depth + text + "\n")

    # --- statements ----------------------------------------------------------------

    def _node(self, attrs: dict[str, str]) -> _Node:
        self.counter += 1
        self._line(f"v{self.counter} {_attr_map(attrs)};")
        return _Node(self.counter)

    def _cluster(self, body: Callable[[], None], label: str) -> _Node:
        self.counter += 1
        cluster = self.counter
        self._line(f"subgraph cluster_{cluster} {{")
        self.depth += 1
        anchor = self._node({"label": '" "', "shape": "plain"})
        self._line(f'label = "{label}";')
        body()
        self.depth -= 1
        self._line("}")
        return _Node(anchor.id, cluster)

    def _edge(
        self,
        source: _Node,
        source_port: str,
        target: _Node,
        target_port: str,
        style: str = "solid",
    ) -> str:
        attrs = {"style": style}
        start = f"v{source.id}"
        if source.cluster is not None:
            attrs["ltail"] = f"cluster_{source.cluster}"
        elif source_port:
            start += f":{source_port}:s"
        end = f"v{target.id}"
        if target.cluster is not None:
            attrs["lhead"] = f"cluster_{target.cluster}"
        elif target_port:
            end += f":{target_port}:n"
        return f"{start} -> {end}{_attr_map(attrs)}"

    # --- the IR ------------------------------------------------------------------------

    def _operation(self, op: Operation) -> _Node:
        if op.regions:
            node = self._cluster(
                lambda: self._regions(op.regions), self._cluster_label(op)
            )
        else:
            node = self._node(
                {
                    "fillcolor": f'"{self.colors[operation_name(op).name]}"',
                    "label": f'"{self._record_label(op)}"',
                    "shape": "Mrecord",
                    "style": "filled",
                }
            )
        if self.style.print_data_flow_edges:
            for operand in op.operands:
                self.data_edges.append((operand, node, self._use_port(operand)))
        for result in op.results:
            self.value_nodes[result] = node
        return node

    def _regions(self, regions: Sequence[Region]) -> None:
        for region in regions:
            for block in region.blocks:
                self._block(block)

    def _block(self, block: Block) -> None:
        def body() -> None:
            for arg in block.args:
                label = f"<{self._value_port(arg)}> %{self._name(arg)}"
                if self.style.print_result_types:
                    label += " " + self._type(arg.type)
                self.value_nodes[arg] = self._node(
                    {"label": f'"{label}"', "shape": "Mrecord"}
                )
            previous: _Node | None = None
            for op in block.ops:
                node = self._operation(op)
                if self.style.print_control_flow_edges and previous is not None:
                    self.control_edges.append(
                        self._edge(previous, "", node, "", "dashed")
                    )
                previous = node

        self._cluster(body, "")

    # --- labels ------------------------------------------------------------------------

    def _name(self, value: SSAValue) -> str:
        return self.names.get(value, "<<unknown SSA value>>")

    def _value_port(self, value: SSAValue) -> str:
        return _port("res", self._name(value))

    def _use_port(self, value: SSAValue) -> str:
        return _port("arg", self._name(value))

    def _truncate(self, text: str) -> str:
        limit = self.style.max_label_len
        return text if len(text) <= limit else text[:limit] + "..."

    def _type(self, kind: Attribute) -> str:
        return _escape(self._truncate(print_attribute(kind)))

    def _attribute(self, attr: Attribute) -> str:
        if isinstance(attr, DenseIntOrFPElementsAttr):
            dense = cast("DenseIntOrFPElementsAttr[Any]", attr)
            values: list[object] = list(dense.get_values())
            if len(set(values)) <= 1:
                return _escape(print_attribute(dense))
            if len(values) > _LARGE_ATTRIBUTE_LIMIT:
                shaped: Attribute = dense.get_type()
                rank = len(shaped.get_shape()) if isinstance(shaped, ShapedType) else 0
                # As MLIR's emitMlirType: the type alone is truncated.
                return f"{'[' * rank}...{']' * rank} : {self._type(shaped)}"
        if isinstance(attr, ArrayAttr):
            array = cast("ArrayAttr[Attribute]", attr)
            if len(array.data) > _LARGE_ATTRIBUTE_LIMIT:
                return "[...]"
        return _escape(self._truncate(print_attribute(cast(Attribute, attr))))

    def _attribute_lines(self, op: Operation) -> str:
        attrs = {**op.properties, **op.attributes}
        if not operation_name(op).is_registered:
            attrs.pop(_UNREGISTERED_NAME, None)
        return "".join(
            f"{_escape(name)}: {self._attribute(attrs[name])}\\l"
            for name in sorted(attrs)
        )

    def _cluster_label(self, op: Operation) -> str:
        label = operation_name(op).name
        if self.style.print_result_types:
            types = ", ".join(print_attribute(result.type) for result in op.results)
            label += f" : ({_escape(self._truncate(types))})"
        if self.style.print_attrs:
            label += "\\l" + self._attribute_lines(op)
        return label

    def _record_label(self, op: Operation) -> str:
        parts = ["{"]
        if op.operands:
            ports = "|".join(
                f"<{self._use_port(value)}> %{self._name(value)}"
                for value in op.operands
            )
            parts.append("{" + ports + "}|")
        parts.append(operation_name(op).name + "\\l")
        attributes = self._attribute_lines(op) if self.style.print_attrs else ""
        if attributes:
            parts.append("\\l" + attributes)
        if op.results:
            results: list[str] = []
            for result in op.results:
                text = f"<{self._value_port(result)}> %{self._name(result)}"
                if self.style.print_result_types:
                    text += " " + self._type(result.type)
                results.append(text)
            parts.append("|{" + "|".join(results) + "}")
        parts.append("}")
        return "".join(parts)


def _colors(root: Operation) -> dict[str, str]:
    """A fill colour per op name: hues spread evenly, in the order the names are
    first met by a post-order walk (MLIR's)."""
    order: dict[str, None] = {}
    for op in _post_order(root):
        order.setdefault(operation_name(op).name, None)
    count = len(order)
    return {name: f"{index / count:f} 0.3 0.95" for index, name in enumerate(order)}


def _post_order(root: Operation) -> list[Operation]:
    found: list[Operation] = []
    stack: list[tuple[Operation, bool]] = [(root, False)]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            found.append(op)
            continue
        stack.append((op, True))
        children = [
            child
            for region in op.regions
            for block in region.blocks
            for child in block.ops
        ]
        stack.extend((child, False) for child in reversed(children))
    return found
