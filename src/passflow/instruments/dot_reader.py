"""Graphviz DOT text read back into `Diagram`s, so the report can draw it.

The report sits below `passflow.graph` and receives the pipeline graph as the
DOT text `--dump-pipeline-graph=dot` prints (`RunReport.set_graph`); drawing
that text, rather than the schedule object, keeps the picture and the DOT
source beside it the same graph, and lets `set_graph` take any DOT.

The language read is the part graphs are made of: `digraph`s (several, one
after the other), node and edge statements with attribute lists, chains
`a -> b -> c`, `subgraph`s (a `cluster_*` one is a frame, any other lends its
members to the enclosing one), `graph`/`node`/`edge` defaults and `k=v`
statements. Attributes drawn: `label`, `tooltip`, `shape` (diamond, plaintext),
`style` (dashed, dotted), `color`, `fillcolor`, and `constraint=false` (an arc aside, as a
jump). An invisible node (`style=invis`) stands for the frame it is in: edges
to it meet that frame (how `diagram_dot` writes an edge to a frame). HTML labels, ports and edges to whole subgraphs raise `DotSyntaxError`.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from passflow.instruments.diagram import Box, Cluster, Diagram, Edge, Stroke

__all__ = ["DotSyntaxError", "read_dot"]

_TOKEN = re.compile(
    r"""\s+|//[^\n]*|/\*.*?\*/|^\#[^\n]*
    |(?P<tok>"(?:[^"\\]|\\.)*"|->|--|[{}\[\];,=:]
    |[A-Za-z_\x80-\uffff][\w\x80-\uffff]*|-?(?:\.\d+|\d+(?:\.\d*)?))""",
    re.S | re.M | re.X,
)
_COLOR = re.compile(r"#?[A-Za-z0-9]+")
_DEFAULT_COLOR = "#555555"


class DotSyntaxError(ValueError):
    """The text is not DOT, or uses a part of DOT the report does not draw."""


def read_dot(text: str) -> list[Diagram]:
    """Every graph in `text`, in order."""
    return _Reader(_tokens(text)).graphs()


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    position = 0
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None and text[position] == "<":
            raise DotSyntaxError("HTML labels are not drawn")
        if match is None:
            raise DotSyntaxError(f"unexpected {text[position]!r} at offset {position}")
        if match.group("tok"):
            tokens.append(match.group("tok"))
        position = match.end()
    return tokens


def _unquote(token: str) -> str:
    if not token.startswith('"'):
        return token
    return re.sub(
        r"\\(.)", lambda m: " " if m[1] in "nlr" else m[1], token[1:-1], flags=re.S
    )


def _stroke(style: str) -> Stroke:
    if "dashed" in style:
        return "dashed"
    return "dotted" if "dotted" in style else "solid"


@dataclass(eq=False, slots=True)
class _Scope:
    cluster: Cluster
    node_defaults: dict[str, str] = field(default_factory=lambda: dict[str, str]())
    edge_defaults: dict[str, str] = field(default_factory=lambda: dict[str, str]())


class _Reader:
    def __init__(self, tokens: list[str]) -> None:
        self.tokens = tokens
        self.position = 0
        self.boxes: dict[str, Box] = {}
        self.keys: set[str] = set()
        self.edges: list[Edge] = []
        self.frames: dict[str, str] = {}
        """Invisible nodes, by name: the cluster each stands for."""

    def peek(self) -> str:
        return self.tokens[self.position] if self.position < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if not token or (expected is not None and token != expected):
            raise DotSyntaxError(f"expected {expected or 'more'}, got {token!r}")
        self.position += 1
        return token

    def identifier(self) -> str:
        token = self.take()
        if token in "{}[];,=:" or token in ("->", "--"):
            raise DotSyntaxError(f"expected a name, got {token!r}")
        return _unquote(token)

    def graphs(self) -> list[Diagram]:
        diagrams: list[Diagram] = []
        while self.peek():
            if self.peek().lower() == "strict":
                self.take()
            kind = self.take().lower()
            if kind not in ("digraph", "graph"):
                raise DotSyntaxError(f"expected digraph, got {kind!r}")
            name = self.identifier() if self.peek() != "{" else ""
            self.boxes, self.keys, self.edges, self.frames = {}, set(), [], {}
            root = Cluster("", name)
            self.take("{")
            self.statements(_Scope(root))
            for edge in self.edges:
                edge.source = self.frames.get(edge.source, edge.source)
                edge.target = self.frames.get(edge.target, edge.target)
            diagrams.append(Diagram(name or "graph", root, self.edges))
        return diagrams

    def statements(self, scope: _Scope) -> None:
        while self.peek() != "}":
            self.statement(scope)
            while self.peek() in (";", ","):
                self.take()
        self.take("}")

    def attributes(self) -> dict[str, str]:
        found: dict[str, str] = {}
        while self.peek() == "[":
            self.take()
            while self.peek() != "]":
                key = self.identifier()
                self.take("=")
                found[key] = self.identifier()
                while self.peek() in (";", ","):
                    self.take()
            self.take("]")
        return found

    def statement(self, scope: _Scope) -> None:
        token = self.peek().lower()
        if token in ("graph", "node", "edge"):
            self.take()
            found = self.attributes()
            if token == "node":
                scope.node_defaults.update(found)
            elif token == "edge":
                scope.edge_defaults.update(found)
            elif "label" in found:
                scope.cluster.label = found["label"]
            return
        if token in ("subgraph", "{"):
            self.subgraph(scope)
            if self.peek() in ("->", "--"):
                raise DotSyntaxError("edges to a whole subgraph are not drawn")
            return
        name = self.identifier()
        if self.peek() == "=":
            self.take()
            value = self.identifier()
            if name == "label":
                scope.cluster.label = value
            return
        self.port()
        chain = [name]
        while self.peek() in ("->", "--"):
            self.take()
            if self.peek() in ("subgraph", "{"):
                raise DotSyntaxError("edges to a whole subgraph are not drawn")
            chain.append(self.identifier())
            self.port()
        found = self.attributes()
        if len(chain) == 1:
            self.node(scope, name, {**scope.node_defaults, **found})
            return
        for node in chain:
            self.node(scope, node, scope.node_defaults)
        found = {**scope.edge_defaults, **found}
        for source, target in itertools.pairwise(chain):
            self.edges.append(self.edge(source, target, found))

    def port(self) -> None:
        if self.peek() == ":":
            raise DotSyntaxError("ports are not drawn")

    def subgraph(self, scope: _Scope) -> None:
        name = ""
        if self.peek().lower() == "subgraph":
            self.take()
            if self.peek() != "{":
                name = self.identifier()
        self.take("{")
        inner = _Scope(
            scope.cluster, dict(scope.node_defaults), dict(scope.edge_defaults)
        )
        if name.startswith("cluster"):
            if name in self.keys:
                raise DotSyntaxError(f"{name!r} names two things")
            self.keys.add(name)
            inner.cluster = Cluster(name, "", kind="cluster")
            scope.cluster.members.append(inner.cluster)
        self.statements(inner)

    def node(self, scope: _Scope, name: str, found: dict[str, str]) -> None:
        if name in self.frames:
            return
        box = self.boxes.get(name)
        if box is None and "invis" in found.get("style", ""):
            # Graphviz's idiom for an edge to a frame: an invisible node inside.
            self.frames[name] = scope.cluster.key
            return
        if box is None:
            if name in self.keys:
                raise DotSyntaxError(f"{name!r} names two things")
            self.keys.add(name)
            box = self.boxes[name] = Box(name, name)
            scope.cluster.members.append(box)
        if "label" in found:
            box.label = found["label"]
        if "tooltip" in found:
            box.tooltip = found["tooltip"]
        if "shape" in found:
            shape = found["shape"].lower()
            box.shape = (
                "diamond"
                if shape == "diamond"
                else "plain"
                if shape in ("plaintext", "plain", "none")
                else "box"
            )
        if "style" in found:
            box.stroke = _stroke(found["style"])
        fill = found.get("fillcolor", "")
        if _COLOR.fullmatch(fill):
            box.fill = fill

    @staticmethod
    def edge(source: str, target: str, found: dict[str, str]) -> Edge:
        color = found.get("color", _DEFAULT_COLOR)
        return Edge(
            source,
            target,
            label=found.get("label", ""),
            constraint=found.get("constraint", "true").lower()
            not in ("false", "0", "no"),
            stroke=_stroke(found.get("style", "")),
            color=color if _COLOR.fullmatch(color) else _DEFAULT_COLOR,
        )
