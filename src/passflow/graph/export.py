"""The pipeline graph as a picture (Graphviz DOT) and as data (JSON).

Both list pipelines in run order and edges sorted by the positions of their
ends, so the output of an unchanged graph is byte-for-byte stable and a change
to the graph shows up as a small diff.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Literal

from passflow.graph.execution import PipelineSchedulePass
from passflow.graph.scheduled import ScheduledGraph, ScheduledPipeline
from passflow.manager import OpPassManager
from passflow.pass_base import walk_passes

__all__ = [
    "ExportFormat",
    "dump_pipeline_graphs",
    "find_schedules",
    "to_dot",
    "to_json",
]

ExportFormat = Literal["dot", "json"]

_JUMP_STYLE = 'style=dashed, color=blue, fontcolor=blue, constraint=false, label="jump"'


def find_schedules(pm: OpPassManager) -> list[ScheduledGraph]:
    """The schedules run by `pm`, nested pipelines (and stages) included, in
    pipeline order."""
    return [
        pass_.schedule
        for pass_ in walk_passes([pm])
        if isinstance(pass_, PipelineSchedulePass)
    ]


def dump_pipeline_graphs(pm: OpPassManager, fmt: ExportFormat) -> str:
    """Every schedule of `pm` in `fmt`: DOT graphs one after the other (Graphviz
    reads several from one file), or one JSON array; no schedule gives "" or `[]`."""
    schedules = find_schedules(pm)
    if fmt == "dot":
        return "".join(to_dot(s) for s in schedules)
    return json.dumps([_json_graph(s) for s in schedules], indent=2) + "\n"


# --- JSON -----------------------------------------------------------------------


def to_json(schedule: ScheduledGraph) -> str:
    return json.dumps(_json_graph(schedule), indent=2) + "\n"


def _json_graph(schedule: ScheduledGraph) -> dict[str, object]:
    return {
        "name": schedule.name,
        "anchor": schedule.anchor,
        "max_jumps_per_edge": schedule.max_jumps_per_edge,
        **_json_level(schedule),
    }


def _json_level(schedule: ScheduledGraph) -> dict[str, object]:
    pipelines = [
        {"name": pipeline.name, "position": position, **_json_unit(pipeline)}
        for position, pipeline in enumerate(schedule.pipelines, start=1)
    ]
    edges = [
        {"kind": kind, "from": source, "to": target}
        for kind, source, target in _edges(schedule)
    ]
    return {"pipelines": pipelines, "edges": edges}


def _json_unit(pipeline: ScheduledPipeline) -> dict[str, object]:
    """The unit's entry; `on_cap` only when it is not the default `error`, so a
    graph that sets none exports as before."""
    policy = {} if pipeline.on_cap == "error" else {"on_cap": pipeline.on_cap}
    body = pipeline.body
    if isinstance(body, OpPassManager):
        return {"kind": "pipeline", "passes": str(body), **policy}
    if body.kind == "subgraph":
        return {"kind": "subgraph", **policy, **_json_level(body)}
    select = getattr(body.select, "__name__", None) if body.select else None
    return {
        "kind": "choice",
        "passes": str(body.selector),
        "select": select,
        "alternatives": [{"name": a.name, **_json_unit(a)} for a in body.alternatives],
    }


def _units(schedule: ScheduledGraph) -> Iterator[ScheduledPipeline]:
    """Every unit of one level: its pipelines, and the alternatives of its choices."""
    for pipeline in schedule.pipelines:
        yield pipeline
        body = pipeline.body
        if not isinstance(body, OpPassManager) and body.kind == "choice":
            yield from body.alternatives


def _edges(schedule: ScheduledGraph) -> Iterator[tuple[str, str, str]]:
    """(kind, from, to) for dependencies, then jumps, each sorted by run order
    (an alternative's jumps at its choice's position, in declared order)."""
    position = schedule.index
    dependencies = sorted(
        schedule.dependencies, key=lambda d: (position(d.source), position(d.target))
    )
    for edge in dependencies:
        yield "dependency", edge.source, edge.target
    jumps = sorted(
        ((p.name, t) for p in _units(schedule) for t in p.jump_targets),
        key=lambda jump: (position(jump[0]), position(jump[1])),
    )
    for source, target in jumps:
        yield "jump", source, target


# --- DOT ------------------------------------------------------------------------


def to_dot(schedule: ScheduledGraph) -> str:
    lines = [
        f"digraph {_quote(schedule.name)} {{",
        "  compound=true;",
        "  node [shape=box];",
        *_dot_level(schedule, "", "", "  "),
        "}",
    ]
    return "\n".join(lines) + "\n"


def _dot_level(
    schedule: ScheduledGraph, prefix: str, number: str, pad: str
) -> list[str]:
    """Nodes (clusters for subgraphs and choices) and edges of one level, ids
    qualified."""
    lines: list[str] = []
    for position, pipeline in enumerate(schedule.pipelines, start=1):
        lines.extend(_dot_unit(pipeline, prefix, f"{number}{position}.", pad))
    units = {unit.name: unit for unit in _units(schedule)}
    for kind, source, target in _edges(schedule):
        tail, tail_cluster = _first_node(units[source], prefix, last=True)
        head, head_cluster = _first_node(units[target], prefix, last=False)
        attributes = [_JUMP_STYLE] if kind == "jump" else []
        if tail_cluster:
            attributes.append(f"ltail={_quote(tail_cluster)}")
        if head_cluster:
            attributes.append(f"lhead={_quote(head_cluster)}")
        suffix = f" [{', '.join(attributes)}]" if attributes else ""
        lines.append(f"{pad}{_quote(tail)} -> {_quote(head)}{suffix};")
    return lines


def _dot_unit(
    pipeline: ScheduledPipeline, prefix: str, number: str, pad: str
) -> list[str]:
    """One pipeline's node, or one subgraph's or choice's cluster.

    A choice's cluster holds its own pipeline as a node labelled `choose`, with a
    dotted `pick` arrow to each alternative.
    """
    node = prefix + pipeline.name
    label = _quote(f"{number} {pipeline.name}")
    body = pipeline.body
    if isinstance(body, OpPassManager):
        style = ", style=dashed" if pipeline.is_empty else ""
        return [
            f"{pad}{_quote(node)} [label={label}, tooltip={_quote(str(body))}{style}];"
        ]
    lines = [f"{pad}subgraph {_quote('cluster_' + node)} {{", f"{pad}  label={label};"]
    if body.kind == "subgraph":
        if pipeline.is_empty:
            lines.append(f'{pad}  {_quote(node)} [label="(empty)", shape=plaintext];')
        lines.extend(_dot_level(body, node + "/", number, pad + "  "))
    else:
        style = ", style=dashed" if not body.selector.passes else ""
        lines.append(
            f'{pad}  {_quote(node)} [label="choose", shape=diamond, '
            f"tooltip={_quote(str(body.selector))}{style}];"
        )
        for index, alternative in enumerate(body.alternatives, start=1):
            lines.extend(
                _dot_unit(alternative, prefix, f"{number}{index}.", pad + "  ")
            )
            head, cluster = _first_node(alternative, prefix, last=False)
            clip = f", lhead={_quote(cluster)}" if cluster else ""
            lines.append(
                f'{pad}  {_quote(node)} -> {_quote(head)} [style=dotted, label="pick"{clip}];'
            )
    lines.append(f"{pad}}}")
    return lines


def _first_node(
    pipeline: ScheduledPipeline, prefix: str, *, last: bool
) -> tuple[str, str]:
    """The node an edge attaches to, and the cluster it is clipped at ("" if none).

    Graphviz draws edges between nodes only, so an edge to a subgraph attaches to
    its first member (an edge from it to its last, `last`) and one to a choice to
    its `choose` node, each clipped at the cluster.
    """
    node = prefix + pipeline.name
    body = pipeline.body
    if isinstance(body, OpPassManager):
        return node, ""
    if body.kind == "choice":
        return node, "cluster_" + node
    inner = body
    while inner.pipelines:
        member = inner.pipelines[-1 if last else 0]
        node += "/" + member.name
        if isinstance(member.body, OpPassManager) or member.body.kind == "choice":
            break
        inner = member.body
    return node, "cluster_" + prefix + pipeline.name


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
