"""A `Diagram` as Graphviz DOT, for people who want Graphviz's drawing of what
the report draws itself (the pass pipeline tree has no other DOT form)."""

from __future__ import annotations

from passflow.instruments.diagram import Box, Cluster, Diagram

__all__ = ["to_dot"]


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def to_dot(diagram: Diagram) -> str:
    """`diagram` as one `digraph`: clusters as `cluster_*` subgraphs, edges
    after the nodes, jumps as `constraint=false`."""
    lines = [
        f"digraph {_quote(diagram.title)} {{",
        "  compound=true;",
        "  node [shape=box];",
    ]
    clusters: set[str] = set()
    _members(diagram.root, "  ", lines, clusters)
    for edge in diagram.edges:
        attributes: list[str] = []
        if edge.label:
            attributes.append(f"label={_quote(edge.label)}")
        if not edge.constraint:
            attributes.append("constraint=false")
        if edge.stroke != "solid":
            attributes.append(f"style={edge.stroke}")
        for end, name in (("ltail", edge.source), ("lhead", edge.target)):
            if name in clusters:
                attributes.append(f"{end}={_quote('cluster_' + name)}")
        suffix = f" [{', '.join(attributes)}]" if attributes else ""
        lines.append(f"  {_quote(edge.source)} -> {_quote(edge.target)}{suffix};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _members(cluster: Cluster, pad: str, lines: list[str], clusters: set[str]) -> None:
    for member in cluster.members:
        if isinstance(member, Box):
            extra = f", tooltip={_quote(member.tooltip)}" if member.tooltip else ""
            if member.fill != "#ffffff":
                extra += f", style=filled, fillcolor={_quote(member.fill)}"
            lines.append(
                f"{pad}{_quote(member.key)} [label={_quote(member.label)}{extra}];"
            )
            continue
        clusters.add(member.key)
        lines.append(f"{pad}subgraph {_quote('cluster_' + member.key)} {{")
        lines.append(f"{pad}  label={_quote(member.label)};")
        # Graphviz draws edges between nodes only: a point stands for the frame.
        lines.append(f"{pad}  {_quote(member.key)} [shape=point, style=invis];")
        _members(member, pad + "  ", lines, clusters)
        lines.append(f"{pad}}}")
