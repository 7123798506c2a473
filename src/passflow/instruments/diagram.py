"""A box-and-arrow diagram: what the run report draws as SVG.

The report draws two kinds of graph, the pass pipeline tree of a run and the
schedules of a PipelineGraph (read back from their DOT text); both become this
model, which one layout (`diagram_layout`) and one drawing (`diagram_svg`) serve.

Boxes sit in clusters (nested pipelines, subgraphs, choices), clusters in
clusters; the diagram's `root` is the outermost cluster, which is not drawn.
Keys are unique across boxes and clusters: an edge names its two ends by key,
and an end may be a cluster (the arrow then meets the cluster's frame).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Box", "Cluster", "Diagram", "Edge", "Shape", "Stroke"]

Shape = Literal["box", "diamond", "plain"]
Stroke = Literal["solid", "dashed", "dotted"]


@dataclass(eq=False, slots=True)
class Box:
    """A node: a pass, a pipeline of a schedule, a choice's `choose`.

    `href` is a link inside the page (`#anchor`, or "" for none), `fill` a CSS
    colour; `note` is a second, smaller line (the pass's time).
    """

    key: str
    label: str
    note: str = ""
    tooltip: str = ""
    href: str = ""
    shape: Shape = "box"
    stroke: Stroke = "solid"
    fill: str = "#ffffff"
    kind: str = "box"
    """A CSS class for the drawn node (`pass`, `pipeline`...), for tests and styles."""


@dataclass(eq=False, slots=True)
class Cluster:
    """A frame around its members, in their order: a nested pipeline, a subgraph,
    a choice."""

    key: str
    label: str
    members: list[Box | Cluster] = field(default_factory=lambda: list[Box | Cluster]())
    tooltip: str = ""
    href: str = ""
    kind: str = "cluster"


@dataclass(eq=False, slots=True)
class Edge:
    """An arrow from `source` to `target` (keys of boxes or clusters).

    An edge with `constraint` orders its ends (the target is drawn below the
    source); one without, a jump back or ahead, is drawn as an arc beside the
    graph and orders nothing (DOT's `constraint=false`).
    """

    source: str
    target: str
    label: str = ""
    constraint: bool = True
    stroke: Stroke = "solid"
    color: str = "#555555"


@dataclass(eq=False, slots=True)
class Diagram:
    """One graph: its title, its boxes and clusters under `root`, its edges."""

    title: str
    root: Cluster
    edges: list[Edge] = field(default_factory=lambda: list[Edge]())
