"""The run report's graphs: the pass pipeline tree and a PipelineGraph's
schedule, drawn as inline SVG by the report itself (no Graphviz).

Each SVG is read back with `xml.etree`: one box per pass or pipeline with its
label, one arrow per successor relation, no two boxes overlapping, every box
inside its frames, names escaped, and every box a link to its pass's row.
"""

from __future__ import annotations

import itertools
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from html import unescape
from pathlib import Path

from report_support import INPUT, JumpOnce

from passflow import OperationPass, PassManager, ir
from passflow.graph import PipelineGraph, dump_pipeline_graphs
from passflow.instruments.diagram_svg import render_svg
from passflow.instruments.dot_reader import read_dot
from passflow.instruments.report import RunReport
from passflow.pipeline_text import parse_pass_pipeline_into

ODD = "odd<&>name"


class OddPass(OperationPass):
    """A pass whose argument needs escaping in HTML and SVG."""

    argument = ODD
    op_name = "builtin.module"

    def run_on_operation(self) -> None:
        pass


@dataclass(frozen=True)
class Drawn:
    key: str
    label: str
    href: str
    box: tuple[float, float, float, float]


def _pair(text: str) -> tuple[float, float]:
    x, y = text.split(",")
    return float(x), float(y)


def _rect(element: ET.Element) -> tuple[float, float, float, float]:
    rect = element.find(".//rect")
    if rect is None:  # a diamond
        polygon = element.find(".//polygon")
        assert polygon is not None
        points = [_pair(p) for p in polygon.attrib["points"].split()]
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        return min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)
    x, y, w, h = (float(rect.attrib[k]) for k in ("x", "y", "width", "height"))
    return x, y, w, h


def _drawn(svg: ET.Element, cls: str) -> list[Drawn]:
    found: list[Drawn] = []
    for group in svg.iter("g"):
        if cls not in group.attrib.get("class", "").split():
            continue
        link = group.find("a")
        texts = group.findall(".//text")
        found.append(
            Drawn(
                group.attrib["data-key"],
                texts[0].text or "",
                "" if link is None else link.attrib["href"],
                _rect(group),
            )
        )
    return found


def _edges(svg: ET.Element) -> list[tuple[str, str]]:
    return [
        (g.attrib["data-source"], g.attrib["data-target"])
        for g in svg.iter("g")
        if g.attrib.get("class") == "edge"
    ]


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah


def _inside(inner: tuple[float, ...], outer: tuple[float, ...]) -> bool:
    ix, iy, iw, ih = inner
    ox, oy, ow, oh = outer
    return ox <= ix and oy <= iy and ix + iw <= ox + ow and iy + ih <= oy + oh


def _path_points(d: str) -> list[tuple[float, float]]:
    """Points along an SVG path of `M`, `L` and `C` commands, 24 per piece."""
    points: list[tuple[float, float]] = []
    for command, args in re.findall(r"([MLC])([^MLC]*)", d):
        given = [_pair(p) for p in args.split()]
        if command == "M":
            points.append(given[0])
        elif command == "L":
            a, b = points[-1], given[0]
            points.extend(
                (a[0] + (b[0] - a[0]) * t / 24, a[1] + (b[1] - a[1]) * t / 24)
                for t in range(1, 25)
            )
        else:
            p0, p1, p2, p3 = points[-1], *given
            for step in range(1, 25):
                t = step / 24
                u = 1 - t
                points.append(
                    (
                        u**3 * p0[0]
                        + 3 * u * u * t * p1[0]
                        + 3 * u * t * t * p2[0]
                        + t**3 * p3[0],
                        u**3 * p0[1]
                        + 3 * u * u * t * p1[1]
                        + 3 * u * t * t * p2[1]
                        + t**3 * p3[1],
                    )
                )
    return points


def _assert_labels_miss_boxes(svg: ET.Element) -> None:
    """No arrow's label lies on a box (labels are 10 px monospace)."""
    boxes = [d.box for d in _drawn(svg, "node")]
    for group in svg.iter("g"):
        text = group.find("text") if group.attrib.get("class") == "edge" else None
        if text is None:
            continue
        x, y = float(text.attrib["x"]), float(text.attrib["y"])
        label = (x, y - 8, len(text.text or "") * 6.1, 10)
        for box in boxes:
            assert not _overlap(label, box), (text.text, label, box)


def _assert_arrows_miss_boxes(svg: ET.Element) -> None:
    """No arrow passes through a box other than its ends and what they hold."""
    drawn = {d.key: d.box for d in _drawn(svg, "node") + _drawn(svg, "cluster")}
    boxes = [d for d in _drawn(svg, "node")]
    for group in svg.iter("g"):
        if group.attrib.get("class") != "edge":
            continue
        path = group.find("path")
        assert path is not None
        ends = [drawn[group.attrib["data-source"]], drawn[group.attrib["data-target"]]]
        others = [b.box for b in boxes if not any(_inside(b.box, end) for end in ends)]
        for x, y in _path_points(path.attrib["d"]):
            for bx, by, bw, bh in others:
                inside = bx + 1 < x < bx + bw - 1 and by + 1 < y < by + bh - 1
                assert not inside, (group.attrib, (x, y), (bx, by, bw, bh))


def _svgs(html: str) -> dict[str, ET.Element]:
    """Every inline SVG of the page, by id, parsed as XML."""
    return {
        svg.attrib["id"]: svg
        for svg in (
            ET.fromstring(text) for text in re.findall(r"<svg .*?</svg>", html, re.S)
        )
    }


def _assert_laid_out(svg: ET.Element) -> None:
    """No two boxes overlap, nor two frames unless nested; each box lies in the
    frames around it (frames come before the boxes they hold)."""
    boxes = [d.box for d in _drawn(svg, "node")]
    for a, b in itertools.combinations(boxes, 2):
        assert not _overlap(a, b), (a, b)
    frames = [d.box for d in _drawn(svg, "cluster")]
    for a, b in itertools.combinations(frames, 2):
        assert not _overlap(a, b) or _inside(a, b) or _inside(b, a), (a, b)
    for box in boxes:
        for frame in frames:
            assert _inside(box, frame) or not _overlap(box, frame), (box, frame)
    width, height = float(svg.attrib["width"]), float(svg.attrib["height"])
    for x, y, w, h in boxes + frames:
        assert x >= 0 and x + w <= width and y >= 0 and y + h <= height
    _assert_arrows_miss_boxes(svg)
    _assert_labels_miss_boxes(svg)


def _schedule() -> PipelineGraph:
    graph = PipelineGraph("sched<&>")
    graph.register_pipeline("first")
    graph.register_pipeline(
        ODD,
        ["first"],
        jump_targets=[ODD],
        populate=lambda pm: pm.add(JumpOnce(ODD)),
    )
    graph.register_pipeline("last", [ODD])
    return graph


def test_the_pass_tree_and_the_schedule_are_drawn_escaped_and_linked(
    tmp_path: Path,
) -> None:
    path = tmp_path / "report.html"
    pm = PassManager()
    pm.add(OddPass())
    parse_pass_pipeline_into("func.func(canonicalize,cse)", pm)
    pm.add(_schedule().create_schedule().as_pass())
    report = pm.enable_report(str(path))
    report.set_graph(dump_pipeline_graphs(pm, "dot"))
    pm.run(ir.parse_module("func.func @f() { func.return }"))
    html = path.read_text()
    assert ODD not in html  # escaped everywhere, in the SVG as in the rows
    svgs = _svgs(html)
    rows = set(re.findall(r'<li class="node [^"]*" id="([^"]+)"', html))

    passes = svgs["run-1-passes"]
    boxes = _drawn(passes, "node")
    assert [b.label for b in boxes] == [ODD, "canonicalize", "cse", "report-jump-once"]
    frames = _drawn(passes, "cluster")
    assert [f.label for f in frames] == [
        "'func.func' Pipeline",
        "PipelineSchedule",
        "'first' Stage",
        f"'{ODD}' Stage",
        "'last' Stage",
    ]
    key = {d.label: d.key for d in boxes + frames}
    assert sorted(_edges(passes)) == sorted(
        [
            (key[ODD], key["'func.func' Pipeline"]),
            (key["'func.func' Pipeline"], key["PipelineSchedule"]),
            (key["canonicalize"], key["cse"]),
            (key["'first' Stage"], key[f"'{ODD}' Stage"]),
            (key[f"'{ODD}' Stage"], key["'last' Stage"]),
        ]
    )
    for drawn in boxes + frames:
        assert drawn.href == f"#{drawn.key}" and drawn.key in rows
    _assert_laid_out(passes)

    (schedule,) = (svg for name, svg in svgs.items() if "-graph-" in name)
    stages = _drawn(schedule, "node")
    assert [s.label for s in stages] == ["1. first", f"2. {ODD}", "3. last"]
    assert _edges(schedule) == [("first", ODD), (ODD, "last"), (ODD, ODD)]
    stage_rows = {s.label: s.href for s in stages}
    odd_stage = key[f"'{ODD}' Stage"]
    assert stage_rows[f"2. {ODD}"] == f"#{odd_stage}"
    _assert_laid_out(schedule)
    assert "&lt;&amp;&gt;" in html and "DOT source (--dump-pipeline-graph=dot)" in html
    assert 'href="data:text/vnd.graphviz;charset=utf-8,digraph%20%22sched' in html


def _big_dot(count: int) -> str:
    """`count` pipelines in a chain with shortcuts, two clusters, a dependency
    cycle and jumps back and ahead: the shape of a large real schedule."""
    lines = ['digraph "big" {']
    names = [f"stage-{i}" for i in range(count)]
    for start, stop in ((10, 16), (30, 34)):
        lines.append(f'subgraph "cluster_{start}" {{ label="group {start}";')
        lines.extend(f'"{n}" [label="{n}"];' for n in names[start:stop])
        lines.append("}")
    lines.extend(f'"{a}" -> "{b}";' for a, b in itertools.pairwise(names))
    lines.extend(f'"{names[i]}" -> "{names[i + 5]}";' for i in range(0, count - 5, 7))
    lines.append(f'"{names[40]}" -> "{names[38]}";')  # closes a cycle
    lines.extend(
        f'"{names[i]}" -> "{names[i - 9]}" [constraint=false, label="jump", style=dashed];'
        for i in range(12, count, 11)
    )
    lines.append(f'"{names[3]}" -> "{names[3]}" [constraint=false];')
    lines.append("}")
    return "\n".join(lines)


def test_a_sixty_pipeline_graph_with_jumps_and_cycles_stays_readable() -> None:
    (diagram,) = read_dot(_big_dot(60))
    svg = ET.fromstring(render_svg(diagram, "big"))
    boxes = _drawn(svg, "node")
    assert len(boxes) == 60
    assert len(_edges(svg)) == len(diagram.edges)
    _assert_laid_out(svg)
    # A chain stands upright: narrow, one box per rank, not a sprawl.
    assert float(svg.attrib["width"]) < 600
    tops = sorted({b.box[1] for b in boxes})
    assert len(tops) >= 50
    assert min(b - a for a, b in itertools.pairwise(tops)) >= 24


def test_a_sixty_pass_pipeline_is_drawn_box_per_pass(tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    pm = PassManager()
    passes = ",".join(["canonicalize", "cse"] * 30)
    parse_pass_pipeline_into(f"func.func({passes}),symbol-dce", pm)
    pm.enable_report(str(path))
    pm.run(ir.parse_module("func.func @f() { func.return }"))
    svg = _svgs(path.read_text())["run-1-passes"]
    assert len(_drawn(svg, "node")) == 61
    assert len(_edges(svg)) == 60  # 59 inside the pipeline, 1 to symbol-dce
    _assert_laid_out(svg)


def test_dot_the_drawing_cannot_read_is_shown_as_text(tmp_path: Path) -> None:
    path = tmp_path / "report.html"
    pm = PassManager()
    parse_pass_pipeline_into("cse", pm)
    report = RunReport(str(path))
    pm.enable_report(report)
    report.set_graph("digraph g { a [label=<<b>html</b>>]; }")
    pm.run(ir.parse_module("func.func @f() { func.return }"))
    html = path.read_text()
    assert '<p class="undrawn">not drawn: HTML labels are not drawn</p>' in html
    assert "digraph g { a [label=&lt;&lt;b&gt;html" in html
    assert list(_svgs(html)) == ["run-1-passes"]


def test_jumps_from_a_box_with_neighbours_go_round_them() -> None:
    (diagram,) = read_dot(
        "digraph fork { a -> b; a -> c; a -> e; b -> d; c -> d; e -> d;"
        ' b -> a [constraint=false, label="jump"]; c -> c [constraint=false];'
        " b -> e [constraint=false]; c -> b [constraint=false];"
        ' d -> c [constraint=false]; b -> b [constraint=false, label="again"]; }'
    )
    svg = ET.fromstring(render_svg(diagram, "fork"))
    assert len(_edges(svg)) == 12
    _assert_laid_out(svg)


def test_the_pass_graph_dot_source_reads_back_as_the_drawn_graph(
    tmp_path: Path,
) -> None:
    """The DOT offered under the pass graph is the graph drawn: read back and
    drawn again, it has the same boxes, frames and arrows (a frame's key gains
    Graphviz's `cluster_` prefix)."""
    path = tmp_path / "report.html"
    pm = PassManager()
    parse_pass_pipeline_into(
        "func.func(canonicalize,cse),any(cse,canonicalize),symbol-dce", pm
    )
    pm.enable_report(str(path))
    pm.run(ir.parse_module(INPUT))
    html = path.read_text()
    drawn = _svgs(html)["run-1-passes"]
    source = re.search(r'<details class="dot">.*?<pre>(.*?)</pre>', html, re.S)
    assert source is not None
    (diagram,) = read_dot(unescape(source[1]))
    again = ET.fromstring(render_svg(diagram, "again"))

    def key(name: str) -> str:
        return name.removeprefix("cluster_")

    def shape(svg: ET.Element) -> tuple[object, ...]:
        return (
            [(key(d.key), d.label) for d in _drawn(svg, "node")],
            [(key(d.key), d.label) for d in _drawn(svg, "cluster")],
            sorted((key(a), key(b)) for a, b in _edges(svg)),
        )

    assert shape(again) == shape(drawn)
    assert len(_edges(drawn)) == 4
