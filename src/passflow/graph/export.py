"""The pipeline graph as a picture (Graphviz DOT) and as data (JSON).

Both list pipelines in run order and edges sorted by the positions of their
ends, so the output of an unchanged graph is byte-for-byte stable and a change
to the graph shows up as a small diff.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Literal

from passflow.graph.execution import PipelineSchedulePass
from passflow.manager import OpPassManager
from passflow.pass_base import walk_passes

if TYPE_CHECKING:
    from passflow.graph.schedule import PipelineSchedule

__all__ = [
    "ExportFormat",
    "dump_pipeline_graphs",
    "find_schedules",
    "to_dot",
    "to_json",
]

ExportFormat = Literal["dot", "json"]

_JUMP_STYLE = 'style=dashed, color=blue, fontcolor=blue, constraint=false, label="jump"'


def find_schedules(pm: OpPassManager) -> list[PipelineSchedule]:
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


def to_json(schedule: PipelineSchedule) -> str:
    return json.dumps(_json_graph(schedule), indent=2) + "\n"


def _json_graph(schedule: PipelineSchedule) -> dict[str, object]:
    return {
        "name": schedule.name,
        "anchor": schedule.anchor,
        "max_jumps_per_edge": schedule.max_jumps_per_edge,
        **_json_level(schedule),
    }


def _json_level(schedule: PipelineSchedule) -> dict[str, object]:
    pipelines: list[dict[str, object]] = []
    for position, pipeline in enumerate(schedule.pipelines, start=1):
        entry: dict[str, object] = {"name": pipeline.name, "position": position}
        body = pipeline.body
        if isinstance(body, OpPassManager):
            entry |= {"kind": "pipeline", "passes": str(body)}
        else:
            entry |= {"kind": "subgraph", **_json_level(body)}
        pipelines.append(entry)
    edges = [
        {"kind": kind, "from": source, "to": target}
        for kind, source, target in _edges(schedule)
    ]
    return {"pipelines": pipelines, "edges": edges}


def _edges(schedule: PipelineSchedule) -> Iterator[tuple[str, str, str]]:
    """(kind, from, to) for dependencies, then jumps, each sorted by run order."""
    position = schedule.index
    dependencies = sorted(
        schedule.dependencies, key=lambda d: (position(d.source), position(d.target))
    )
    for edge in dependencies:
        yield "dependency", edge.source, edge.target
    jumps = sorted(
        ((p.name, t) for p in schedule.pipelines for t in p.jump_targets),
        key=lambda jump: (position(jump[0]), position(jump[1])),
    )
    for source, target in jumps:
        yield "jump", source, target


# --- DOT ------------------------------------------------------------------------


def to_dot(schedule: PipelineSchedule) -> str:
    lines = [
        f"digraph {_quote(schedule.name)} {{",
        "  compound=true;",
        "  node [shape=box];",
        *_dot_level(schedule, "", "", "  "),
        "}",
    ]
    return "\n".join(lines) + "\n"


def _dot_level(
    schedule: PipelineSchedule, prefix: str, number: str, pad: str
) -> list[str]:
    """Nodes (clusters for subgraphs) and edges of one level, ids qualified."""
    lines: list[str] = []
    for position, pipeline in enumerate(schedule.pipelines, start=1):
        node = prefix + pipeline.name
        label = _quote(f"{number}{position}. {pipeline.name}")
        body = pipeline.body
        if isinstance(body, OpPassManager):
            style = ", style=dashed" if pipeline.is_empty else ""
            lines.append(
                f"{pad}{_quote(node)} [label={label}, tooltip={_quote(str(body))}{style}];"
            )
            continue
        lines.append(f"{pad}subgraph {_quote('cluster_' + node)} {{")
        lines.append(f"{pad}  label={label};")
        if pipeline.is_empty:
            lines.append(f'{pad}  {_quote(node)} [label="(empty)", shape=plaintext];')
        lines.extend(_dot_level(body, node + "/", f"{number}{position}.", pad + "  "))
        lines.append(f"{pad}}}")
    for kind, source, target in _edges(schedule):
        tail, tail_cluster = _endpoint(schedule, prefix, source, last=True)
        head, head_cluster = _endpoint(schedule, prefix, target, last=False)
        attributes = [_JUMP_STYLE] if kind == "jump" else []
        if tail_cluster:
            attributes.append(f"ltail={_quote(tail_cluster)}")
        if head_cluster:
            attributes.append(f"lhead={_quote(head_cluster)}")
        suffix = f" [{', '.join(attributes)}]" if attributes else ""
        lines.append(f"{pad}{_quote(tail)} -> {_quote(head)}{suffix};")
    return lines


def _endpoint(
    schedule: PipelineSchedule, prefix: str, name: str, *, last: bool
) -> tuple[str, str]:
    """The node an edge attaches to, and the cluster it is clipped at ("" if none).

    Graphviz draws edges between nodes only, so an edge to a subgraph attaches to
    its first member (an edge from it to its last) and is clipped at the cluster.
    """
    node = prefix + name
    body = schedule.pipelines[schedule.index(name)].body
    if isinstance(body, OpPassManager):
        return node, ""
    inner = body
    while inner.pipelines:
        member = inner.pipelines[-1 if last else 0]
        node += "/" + member.name
        if isinstance(member.body, OpPassManager):
            break
        inner = member.body
    return node, "cluster_" + prefix + name


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'
