"""A `Diagram` drawn as SVG text, to inline in the run report.

Frames first (outer ones below inner ones), then arrows, then boxes on top, so
no arrow hides a label. Every name is escaped; a box or frame with an `href` is
a link (`<a href="#...">`), which the report's script turns into "open that
pass's row". Each element carries `data-key` and a class naming what it is
(`node pass`, `cluster pipeline`, `edge`), for the page's script and for tests.
"""

from __future__ import annotations

from html import escape

from passflow.instruments.diagram import Box, Cluster, Diagram
from passflow.instruments.diagram_layout import (
    LABEL_FONT,
    NOTE_FONT,
    Layout,
    Rect,
    Route,
    layout,
)

__all__ = ["render_svg"]

_DASHES = {
    "solid": "",
    "dashed": ' stroke-dasharray="5 3"',
    "dotted": ' stroke-dasharray="1.5 3"',
}
_FRAME_FILL = "#f4f6fa"
_FRAME_STROKE = "#9aa5b8"
_BOX_STROKE = "#47556b"


def _n(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


def render_svg(diagram: Diagram, ident: str) -> str:
    """`diagram` as one `<svg>` element for inlining in HTML (so without an
    `xmlns`, which would be the page's only URL); `ident` (unique in the page)
    is its id and prefixes its arrowheads' ids."""
    placed = layout(diagram)
    title = escape(diagram.title)
    out = [
        f'<svg class="diagram" id="{escape(ident)}" '
        f'width="{_n(placed.width)}" height="{_n(placed.height)}" '
        f'viewBox="0 0 {_n(placed.width)} {_n(placed.height)}" role="img" '
        f'aria-label="{title}" font-family="ui-monospace,Menlo,Consolas,monospace">',
        f"<title>{title}</title>",
    ]
    colors = sorted({route.edge.color for route in placed.routes})
    markers = {color: f"{ident}-arrow-{i}" for i, color in enumerate(colors)}
    out.append("<defs>")
    out.extend(
        f'<marker id="{escape(marker)}" viewBox="0 0 10 10" refX="10" refY="5" '
        'markerWidth="7" markerHeight="7" orient="auto">'
        f'<path d="M0,0 L10,5 L0,10 z" fill="{escape(color)}"/></marker>'
        for color, marker in markers.items()
    )
    out.append("</defs>")
    stack = list(reversed(diagram.root.members))
    while stack:
        member = stack.pop()
        if isinstance(member, Cluster):
            out.append(_frame(member, placed.clusters[member.key]))
            stack.extend(reversed(member.members))
    out.extend(_arrow(route, markers[route.edge.color]) for route in placed.routes)
    out.extend(_boxes(diagram.root, placed))
    out.append("</svg>")
    return "".join(out)


def _linked(href: str, body: str) -> str:
    if not href:
        return body
    target = escape(href.removeprefix("#"))
    return f'<a href="{escape(href)}" class="goto" data-target="{target}">{body}</a>'


def _frame(cluster: Cluster, rect: Rect) -> str:
    body = (
        f'<rect x="{_n(rect.x)}" y="{_n(rect.y)}" width="{_n(rect.w)}" '
        f'height="{_n(rect.h)}" rx="6" fill="{_FRAME_FILL}" stroke="{_FRAME_STROKE}"/>'
        f'<text x="{_n(rect.x + 8)}" y="{_n(rect.y + 15)}" font-size="{LABEL_FONT}" '
        f'fill="#334">{escape(cluster.label)}</text>'
    )
    tooltip = f"<title>{escape(cluster.tooltip)}</title>" if cluster.tooltip else ""
    return (
        f'<g class="cluster {escape(cluster.kind)}" data-key="{escape(cluster.key)}">'
        f"{tooltip}{_linked(cluster.href, body)}</g>"
    )


def _arrow(route: Route, marker: str) -> str:
    edge = route.edge
    path = " ".join(
        command + " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
        for command, points in route.commands
    )
    label = ""
    if route.label_at is not None:
        x, y = route.label_at
        label = (
            f'<text x="{_n(x)}" y="{_n(y)}" font-size="{NOTE_FONT}" '
            f'fill="{escape(edge.color)}" stroke="#fff" stroke-width="3" '
            f'paint-order="stroke">{escape(edge.label)}</text>'
        )
    return (
        f'<g class="edge" data-source="{escape(edge.source)}" '
        f'data-target="{escape(edge.target)}"><path d="{path}" fill="none" '
        f'stroke="{escape(edge.color)}" stroke-width="1.2"{_DASHES[edge.stroke]} '
        f'marker-end="url(#{escape(marker)})"/>{label}</g>'
    )


def _boxes(root: Cluster, placed: Layout) -> list[str]:
    out: list[str] = []
    stack: list[Box | Cluster] = list(reversed(root.members))
    while stack:
        member = stack.pop()
        if isinstance(member, Cluster):
            stack.extend(reversed(member.members))
        else:
            out.append(_box(member, placed.boxes[member.key]))
    return out


def _box(box: Box, rect: Rect) -> str:
    dashes = _DASHES[box.stroke]
    if box.shape == "diamond":
        points = (
            f"{_n(rect.cx)},{_n(rect.y)} {_n(rect.right)},{_n(rect.cy)} "
            f"{_n(rect.cx)},{_n(rect.bottom)} {_n(rect.x)},{_n(rect.cy)}"
        )
        shape = (
            f'<polygon points="{points}" fill="{escape(box.fill)}" '
            f'stroke="{_BOX_STROKE}"{dashes}/>'
        )
    elif box.shape == "plain":
        shape = ""
    else:
        shape = (
            f'<rect x="{_n(rect.x)}" y="{_n(rect.y)}" width="{_n(rect.w)}" '
            f'height="{_n(rect.h)}" rx="3" fill="{escape(box.fill)}" '
            f'stroke="{_BOX_STROKE}"{dashes}/>'
        )
    label_y = rect.y + 16 if box.note else rect.cy + LABEL_FONT * 0.35
    text = (
        f'<text class="label" x="{_n(rect.cx)}" y="{_n(label_y)}" '
        f'font-size="{LABEL_FONT}" text-anchor="middle" fill="#111">'
        f"{escape(box.label)}</text>"
    )
    if box.note:
        text += (
            f'<text class="note" x="{_n(rect.cx)}" y="{_n(rect.y + 30)}" '
            f'font-size="{NOTE_FONT}" text-anchor="middle" fill="#555">'
            f"{escape(box.note)}</text>"
        )
    tooltip = f"<title>{escape(box.tooltip)}</title>" if box.tooltip else ""
    return (
        f'<g class="node {escape(box.kind)}" data-key="{escape(box.key)}">'
        f"{tooltip}{_linked(box.href, shape + text)}</g>"
    )
