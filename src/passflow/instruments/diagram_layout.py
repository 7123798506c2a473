"""Where a `Diagram`'s boxes, frames and arrows go: a small layered layout.

No Graphviz: the report is made offline by the pass manager itself. The layout
is the classic layered one (Sugiyama's), run on each cluster from the inside
out, a laid-out cluster being one big box to the level that holds it:

1. ranks: each box goes one rank below the lowest of its predecessors along
   ordering edges (longest path); a cycle is broken at the edge that closes it
   (first seen in member order), which is then drawn like a jump;
2. an edge spanning several ranks gets a waypoint in each rank it crosses, so
   that it is routed between boxes, never through one;
3. order in a rank: a few barycentre sweeps (down, up, down) against crossings;
4. x: each box is pulled to the mean of its neighbours' centres, rank by rank,
   keeping the rank's order and gaps (isotonic regression, so a chain stands
   straight and a fork spreads evenly);
5. jumps, cycle-closing edges and self-loops run in lanes to the right of their
   level, one lane each, so they never cross a box of that level.

Text is sized for a 12 px monospace font (the drawing uses one), so a label's
width is known without a font engine.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass, field

from passflow.instruments.diagram import Box, Cluster, Diagram, Edge

__all__ = ["LABEL_FONT", "NOTE_FONT", "Layout", "Rect", "Route", "layout"]

LABEL_FONT = 12
NOTE_FONT = 10
_CHAR = 0.61  # a monospace glyph's advance, in ems
_PAD_X = 10
_NODE_GAP = 18
_WAYPOINT_GAP = 8
_RANK_GAP = 30
_LABELLED_RANK_GAP = 44
_FRAME_PAD = 10
_FRAME_LABEL = 20
_LANE_GAP = 16
_WAYPOINT_WIDTH = 6
_MARGIN = 8
_WAYPOINT_WEIGHT = 0.02
"""How much less a waypoint's wish counts than a box's: boxes stand straight,
long edges make way."""
_PORT_STEP = 14
_LOOP = 16

Point = tuple[float, float]


def text_width(text: str, font: int = LABEL_FONT) -> float:
    """The width of `text` in the drawing's monospace font of `font` px."""
    return len(text) * font * _CHAR


@dataclass(frozen=True, slots=True)
class Rect:
    x: float
    y: float
    w: float
    h: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def cy(self) -> float:
        return self.y + self.h / 2

    @property
    def right(self) -> float:
        return self.x + self.w

    @property
    def bottom(self) -> float:
        return self.y + self.h

    def moved(self, dx: float, dy: float) -> Rect:
        return Rect(self.x + dx, self.y + dy, self.w, self.h)


@dataclass(eq=False, slots=True)
class Route:
    """An edge's path: SVG path commands (`M`, `L`, `C`) with their points, and
    where its label goes."""

    edge: Edge
    commands: list[tuple[str, list[Point]]]
    label_at: Point | None = None

    def moved(self, dx: float, dy: float) -> Route:
        return Route(
            self.edge,
            [(c, [(x + dx, y + dy) for x, y in pts]) for c, pts in self.commands],
            None
            if self.label_at is None
            else (self.label_at[0] + dx, self.label_at[1] + dy),
        )


@dataclass(eq=False, slots=True)
class Layout:
    """Absolute positions: each box's and each cluster's rectangle, each edge's
    route, and the drawing's size."""

    boxes: dict[str, Rect] = field(default_factory=lambda: dict[str, Rect]())
    clusters: dict[str, Rect] = field(default_factory=lambda: dict[str, Rect]())
    routes: list[Route] = field(default_factory=lambda: list[Route]())
    width: float = 0.0
    height: float = 0.0


def layout(diagram: Diagram) -> Layout:
    """Lay `diagram` out; edges whose ends are unknown, or that join a cluster
    to its own member, are left out."""
    chains = _chains(diagram.root)
    by_level: dict[str, list[tuple[Edge, str, str]]] = {}
    for edge in diagram.edges:
        placed = _level_of(edge, chains)
        if placed is not None:
            level, source, target = placed
            by_level.setdefault(level, []).append((edge, source, target))
    level = _measure(diagram.root, by_level)
    out = Layout(width=level.width + 2 * _MARGIN, height=level.height + 2 * _MARGIN)
    _place(diagram.root, level, _MARGIN, _MARGIN, out)
    return out


# --- which level an edge belongs to ----------------------------------------------


def _chains(root: Cluster) -> dict[str, list[str]]:
    """Each key's clusters from the root down, the key itself last."""
    chains: dict[str, list[str]] = {}
    stack: list[tuple[Cluster, list[str]]] = [(root, [root.key])]
    while stack:
        cluster, chain = stack.pop()
        for member in cluster.members:
            chains[member.key] = [*chain, member.key]
            if isinstance(member, Cluster):
                stack.append((member, chains[member.key]))
    return chains


def _level_of(edge: Edge, chains: dict[str, list[str]]) -> tuple[str, str, str] | None:
    """The innermost cluster holding both ends, and the members of it the edge
    joins: an edge into a cluster meets its frame at the level they share."""
    source, target = chains.get(edge.source), chains.get(edge.target)
    if source is None or target is None:
        return None
    if source == target:
        return source[-2], source[-1], source[-1]
    shared = 0
    while shared < min(len(source), len(target)) and source[shared] == target[shared]:
        shared += 1
    if shared in (len(source), len(target)):
        return None
    return source[shared - 1], source[shared], target[shared]


# --- one level -------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class _Level:
    width: float
    height: float
    rects: dict[str, Rect]
    """Members' rectangles, relative to the level's origin."""
    routes: list[Route]
    inner: dict[str, _Level]


def _box_size(box: Box) -> tuple[float, float]:
    text = max(text_width(box.label), text_width(box.note, NOTE_FONT))
    if box.shape == "diamond":
        return text * 1.4 + 28, 36
    if box.shape == "plain":
        return text + 8, 20
    return text + 2 * _PAD_X, 36 if box.note else 24


def _measure(
    cluster: Cluster, by_level: dict[str, list[tuple[Edge, str, str]]]
) -> _Level:
    sizes: dict[str, tuple[float, float]] = {}
    inner: dict[str, _Level] = {}
    pointed: set[str] = set()
    for member in cluster.members:
        if isinstance(member, Box):
            sizes[member.key] = _box_size(member)
            if member.shape == "diamond":
                pointed.add(member.key)
            continue
        level = inner[member.key] = _measure(member, by_level)
        width = max(level.width, text_width(member.label)) + 2 * _FRAME_PAD
        height = _FRAME_LABEL + level.height + (2 * _FRAME_PAD if level.rects else 0)
        sizes[member.key] = (width, height)
    level = _Arranger(sizes, pointed, by_level.get(cluster.key, [])).arrange()
    level.inner = inner
    return level


def _place(cluster: Cluster, level: _Level, dx: float, dy: float, out: Layout) -> None:
    out.routes.extend(route.moved(dx, dy) for route in level.routes)
    for member in cluster.members:
        rect = level.rects[member.key].moved(dx, dy)
        if isinstance(member, Box):
            out.boxes[member.key] = rect
            continue
        out.clusters[member.key] = rect
        inner = level.inner[member.key]
        x = rect.x + (rect.w - inner.width) / 2
        _place(member, inner, x, rect.y + _FRAME_LABEL + _FRAME_PAD, out)


def _mean(values: Iterable[float], default: float) -> float:
    items = list(values)
    return sum(items) / len(items) if items else default


def _isotonic(targets: list[float], weights: list[float]) -> list[float]:
    """The nondecreasing sequence closest to `targets` in weighted least squares
    (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [weighted sum, weight, count]
    for value, weight in zip(targets, weights, strict=True):
        blocks.append([value * weight, weight, 1.0])
        while len(blocks) > 1 and (
            blocks[-2][0] / blocks[-2][1] > blocks[-1][0] / blocks[-1][1]
        ):
            total, weight_sum, count = blocks.pop()
            blocks[-1][0] += total
            blocks[-1][1] += weight_sum
            blocks[-1][2] += count
    return [block[0] / block[1] for block in blocks for _ in range(int(block[2]))]


class _Arranger:
    """The layout of one level's members (sizes given) and of its edges."""

    def __init__(
        self,
        sizes: dict[str, tuple[float, float]],
        pointed: set[str],
        edges: list[tuple[Edge, str, str]],
    ) -> None:
        self.keys = list(sizes)
        self.sizes = sizes
        self.pointed = pointed
        self.edges = edges
        count = len(self.keys)
        self.width = [sizes[key][0] for key in self.keys]
        self.rank = [0] * count
        self.preds: list[list[int]] = [[] for _ in range(count)]
        self.succs: list[list[int]] = [[] for _ in range(count)]
        self.center: list[float] = []
        self.paths: list[tuple[Edge, list[int]]] = []
        self.lanes: list[tuple[Edge, int, int]] = []
        self._layers: list[list[int]] = []
        self.loop_room: dict[int, float] = {}
        """Room to the right of a member for its self-loop."""

    def arrange(self) -> _Level:
        if not self.keys:
            return _Level(0.0, 0.0, {}, [], {})
        forward = self._split_edges()
        self._rank(forward)
        layers = self._waypoints(forward)
        self._order(layers)
        self._layers = layers
        self._place_x(layers)
        return self._finish(layers)

    def _split_edges(self) -> list[tuple[Edge, int, int]]:
        """Ordering edges that keep the level acyclic; the rest go to lanes."""
        index = {key: i for i, key in enumerate(self.keys)}
        ordering: list[tuple[Edge, int, int]] = []
        out: list[list[int]] = [[] for _ in self.keys]
        for edge, source, target in self.edges:
            s, t = index[source], index[target]
            if edge.constraint and s != t:
                ordering.append((edge, s, t))
                out[s].append(t)
                continue
            if s == t:  # a self-loop: room for it and its label to the right
                room = _LOOP + (
                    text_width(edge.label, NOTE_FONT) + 3 if edge.label else 0
                )
                self.loop_room[s] = max(self.loop_room.get(s, 0.0), room)
            self.lanes.append((edge, s, t))
        closing = self._cycle_closers(out)
        forward: list[tuple[Edge, int, int]] = []
        for edge, s, t in ordering:
            if (s, t) in closing:
                self.lanes.append((edge, s, t))
            else:
                forward.append((edge, s, t))
        return forward

    @staticmethod
    def _cycle_closers(out: list[list[int]]) -> set[tuple[int, int]]:
        """Edges to a member still on the depth-first path (iterative DFS in
        member order)."""
        state = [0] * len(out)  # 0 new, 1 on the path, 2 done
        closing: set[tuple[int, int]] = set()
        for start in range(len(out)):
            if state[start]:
                continue
            state[start] = 1
            stack = [(start, iter(out[start]))]
            while stack:
                node, successors = stack[-1]
                advanced = False
                for nxt in successors:
                    if state[nxt] == 1:
                        closing.add((node, nxt))
                    elif state[nxt] == 0:
                        state[nxt] = 1
                        stack.append((nxt, iter(out[nxt])))
                        advanced = True
                        break
                if not advanced:
                    state[node] = 2
                    stack.pop()
        return closing

    def _rank(self, forward: list[tuple[Edge, int, int]]) -> None:
        count = len(self.keys)
        out: list[list[int]] = [[] for _ in range(count)]
        waiting = [0] * count
        for _, s, t in forward:
            out[s].append(t)
            waiting[t] += 1
        ready = [i for i in range(count) if waiting[i] == 0]
        while ready:
            node = ready.pop()
            for nxt in out[node]:
                self.rank[nxt] = max(self.rank[nxt], self.rank[node] + 1)
                waiting[nxt] -= 1
                if waiting[nxt] == 0:
                    ready.append(nxt)

    def _vertex(self, rank: int, width: float) -> int:
        self.rank.append(rank)
        self.width.append(width)
        self.preds.append([])
        self.succs.append([])
        return len(self.rank) - 1

    def _link(self, source: int, target: int) -> None:
        self.succs[source].append(target)
        self.preds[target].append(source)

    def _waypoints(self, forward: list[tuple[Edge, int, int]]) -> list[list[int]]:
        """Chain each long edge through a waypoint per rank it crosses; the
        vertices of each rank, members first."""
        for edge, s, t in forward:
            path = [s]
            for rank in range(self.rank[s] + 1, self.rank[t]):
                path.append(self._vertex(rank, _WAYPOINT_WIDTH))
            path.append(t)
            for a, b in itertools.pairwise(path):
                self._link(a, b)
            self.paths.append((edge, path))
        layers: list[list[int]] = [[] for _ in range(max(self.rank) + 1)]
        for vertex, rank in enumerate(self.rank):
            layers[rank].append(vertex)
        return layers

    def _order(self, layers: list[list[int]]) -> None:
        position = {v: i for layer in layers for i, v in enumerate(layer)}

        def sweep(ranks: Iterable[int], neighbours: list[list[int]]) -> None:
            for rank in ranks:
                layer = layers[rank]
                layer.sort(
                    key=lambda v: _mean(
                        (position[u] for u in neighbours[v]), position[v]
                    )
                )
                for i, v in enumerate(layer):
                    position[v] = i

        down, up = range(1, len(layers)), range(len(layers) - 2, -1, -1)
        for _ in range(2):
            sweep(down, self.preds)
            sweep(up, self.succs)
        sweep(down, self.preds)

    def _gap(self, a: int, b: int) -> float:
        members = len(self.keys)
        gap = _WAYPOINT_GAP if a >= members or b >= members else _NODE_GAP
        return (self.width[a] + self.width[b]) / 2 + gap + self.loop_room.get(a, 0.0)

    def _place_x(self, layers: list[list[int]]) -> None:
        self.center = [0.0] * len(self.rank)
        for layer in layers:
            x = 0.0
            for v in layer:
                self.center[v] = x + self.width[v] / 2
                x += self.width[v] + _NODE_GAP
        down, up = range(1, len(layers)), range(len(layers) - 2, -1, -1)
        for _ in range(4):
            for rank in down:
                self._align(layers[rank], self.preds)
            for rank in up:
                self._align(layers[rank], self.succs)
        for rank in down:
            self._align(layers[rank], self.preds)
        left = min(self.center[v] - self.width[v] / 2 for v in range(len(self.rank)))
        self.center = [c - left for c in self.center]

    def _align(self, layer: list[int], neighbours: list[list[int]]) -> None:
        offsets = [0.0]
        for a, b in itertools.pairwise(layer):
            offsets.append(offsets[-1] + self._gap(a, b))
        members = len(self.keys)
        wanted = [self._pull(v, neighbours[v]) for v in layer]
        weights = [1.0 if v < members else _WAYPOINT_WEIGHT for v in layer]
        fitted = _isotonic(
            [w - o for w, o in zip(wanted, offsets, strict=True)], weights
        )
        for v, y, o in zip(layer, fitted, offsets, strict=True):
            self.center[v] = y + o

    def _pull(self, vertex: int, neighbours: list[int]) -> float:
        """Where `vertex`'s neighbours want its centre: their weighted mean."""
        members = len(self.keys)
        total = weight = 0.0
        for u in neighbours:
            w = 1.0 if u < members else _WAYPOINT_WEIGHT
            total += w * self.center[u]
            weight += w
        return total / weight if weight else self.center[vertex]

    def _finish(self, layers: list[list[int]]) -> _Level:
        members = len(self.keys)
        heights = [
            max(self.sizes[self.keys[v]][1] for v in layer if v < members)
            for layer in layers
        ]
        labelled = any(edge.label for edge, _ in self.paths)
        gap = _LABELLED_RANK_GAP if labelled else _RANK_GAP
        tops = [0.0]
        for height in heights[:-1]:
            tops.append(tops[-1] + height + gap)
        rects: dict[str, Rect] = {}
        for i, key in enumerate(self.keys):
            width, height = self.sizes[key]
            top = tops[self.rank[i]] + (heights[self.rank[i]] - height) / 2
            rects[key] = Rect(self.center[i] - width / 2, top, width, height)
        width = max(
            self.center[v] + self.width[v] / 2 + self.loop_room.get(v, 0.0)
            for v in range(len(self.rank))
        )
        routes = self._forward_routes(rects, tops, heights)
        lanes, width, height = self._lane_routes(rects, tops, heights, gap, width)
        return _Level(width, height, rects, routes + lanes, {})

    def _ports(self, ends: dict[int, list[tuple[float, int]]]) -> dict[int, float]:
        """x of each path's end at a member: its edges spread along the side, in
        the order of where they go, so arrows do not start on top of each other."""
        port: dict[int, float] = {}
        for vertex, items in ends.items():
            items.sort()
            step = 0.0
            if len(items) > 1 and self.keys[vertex] not in self.pointed:
                step = min(_PORT_STEP, self.width[vertex] * 0.7 / (len(items) - 1))
            middle = (len(items) - 1) / 2
            for k, (_, path) in enumerate(items):
                port[path] = self.center[vertex] + (k - middle) * step
        return port

    def _forward_routes(
        self, rects: dict[str, Rect], tops: list[float], heights: list[float]
    ) -> list[Route]:
        starts: dict[int, list[tuple[float, int]]] = {}
        ends: dict[int, list[tuple[float, int]]] = {}
        for i, (_, path) in enumerate(self.paths):
            starts.setdefault(path[0], []).append((self.center[path[1]], i))
            ends.setdefault(path[-1], []).append((self.center[path[-2]], i))
        start_x, end_x = self._ports(starts), self._ports(ends)
        routes: list[Route] = []
        for i, (edge, path) in enumerate(self.paths):
            source, target = rects[self.keys[path[0]]], rects[self.keys[path[-1]]]
            points: list[Point] = [(start_x[i], source.bottom)]
            for waypoint in path[1:-1]:
                rank = self.rank[waypoint]
                points.append((self.center[waypoint], tops[rank]))
                points.append((self.center[waypoint], tops[rank] + heights[rank]))
            points.append((end_x[i], target.y))
            commands: list[tuple[str, list[Point]]] = [("M", [points[0]])]
            for k in range(0, len(points) - 1, 2):
                (ax, ay), (bx, by) = points[k], points[k + 1]
                middle = (ay + by) / 2
                commands.append(("C", [(ax, middle), (bx, middle), (bx, by)]))
                if k + 2 < len(points):
                    commands.append(("L", [points[k + 2]]))
            (ax, ay), (bx, by) = points[0], points[1]
            label = ((ax + bx) / 2 + 4, (ay + by) / 2 + 4) if edge.label else None
            routes.append(Route(edge, commands, label))
        return routes

    def _lane_routes(
        self,
        rects: dict[str, Rect],
        tops: list[float],
        heights: list[float],
        gap: float,
        width: float,
    ) -> tuple[list[Route], float, float]:
        """Arcs to the right of the level, one lane each: from the side of a box
        with nothing to its right, else out through the gap between ranks (a
        self-loop hugs its box, inside the gap beside it); the level's width and
        height with them."""
        members = len(self.keys)
        rightmost = {
            max((v for v in layer if v < members), key=lambda v: self.center[v])
            for layer in self._layers
        }
        routes: list[Route] = []
        lane, right, bottom = width, width, tops[-1] + heights[-1]
        for number, (edge, s, t) in enumerate(self.lanes):
            source, target = rects[self.keys[s]], rects[self.keys[t]]
            if s == t:
                peak = source.right + _LOOP - 4
                start, end = (
                    (source.right, source.cy - 5),
                    (source.right, source.cy + 5),
                )
                control = (peak - (start[0] + end[0]) / 8) / 0.75
                commands = [
                    ("M", [start]),
                    ("C", [(control, start[1]), (control, end[1]), end]),
                ]
            elif s in rightmost and t in rightmost:
                lane += _LANE_GAP
                peak = lane
                start, end = (source.right, source.cy), (target.right, target.cy)
                control = (peak - (start[0] + end[0]) / 8) / 0.75
                commands = [
                    ("M", [start]),
                    ("C", [(control, start[1]), (control, end[1]), end]),
                ]
            else:
                lane += _LANE_GAP
                peak = lane
                commands = self._through_gaps(
                    source, target, (s, t), (tops, heights, gap), peak, number
                )
                bottom = max(bottom, *(y + 4 for _, pts in commands for _, y in pts))
            label = None
            points = [p for _, pts in commands for p in pts]
            if edge.label:
                middle = (min(y for _, y in points) + max(y for _, y in points)) / 2
                label = (peak + 3, middle + 4)
                right = max(right, label[0] + text_width(edge.label, NOTE_FONT))
            right = max(right, peak + 2)
            routes.append(Route(edge, commands, label))
        return routes, right, bottom

    def _through_gaps(
        self,
        source: Rect,
        target: Rect,
        ends: tuple[int, int],
        ranks: tuple[list[float], list[float], float],
        lane: float,
        number: int,
    ) -> list[tuple[str, list[Point]]]:
        """A right-angled path that leaves `source` into the gap beside its rank,
        runs in its lane and enters `target` from the gap beside its rank, so it
        crosses no box of the level (the gaps and lanes hold none)."""
        tops, heights, gap = ranks
        up, down = self.rank[ends[0]], self.rank[ends[1]]
        shift = (number % 5 - 2) * 3
        if down < up:  # back up: leave by the top, arrive at the bottom
            leave, y1 = source.y, tops[up] - gap / 2 + shift
            arrive, y2 = target.bottom, tops[down] + heights[down] + gap / 2 + shift
        else:
            leave, y1 = source.bottom, tops[up] + heights[up] + gap / 2 + shift
            arrive, y2 = target.y, tops[down] - gap / 2 + shift
            if down == up:
                arrive, y2 = target.bottom, y1
        sx, tx = source.x + source.w * 0.8, target.x + target.w * 0.8
        return [
            ("M", [(sx, leave)]),
            ("L", [(sx, y1)]),
            ("L", [(lane, y1)]),
            ("L", [(lane, y2)]),
            ("L", [(tx, y2)]),
            ("L", [(tx, arrive)]),
        ]
