"""`PipelineGraph`: named pipelines with dependencies, compiled into a schedule.

A compiler is declared as named pipelines, each listing the pipelines it must
follow (`predecessors`), the ones it must precede (`successors`) and the ones it
may jump to at run time (`jump_targets`). Nothing runs until `create_schedule`,
so an extension can add a stage between two existing ones by naming them, without
the original author having planned an extension point.
"""

from __future__ import annotations

import difflib
import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, cast

from passflow.graph.errors import (
    PipelineCycleError,
    PipelineGraphError,
    PipelineNameError,
    SubgraphBoundaryError,
    UnknownPipelineError,
)
from passflow.graph.schedule import (
    DEFAULT_MAX_JUMPS_PER_EDGE,
    Dependency,
    PipelineSchedule,
    ScheduledPipeline,
)
from passflow.manager import OpPassManager

__all__ = ["PipelineGraph", "PopulatePipeline", "PopulateSubgraph"]

_T = TypeVar("_T")

PopulatePipeline = Callable[[OpPassManager], None]
"""Fills the (empty) pass manager of one pipeline."""

PopulateSubgraph = Callable[["PipelineGraph"], None]
"""Registers the members of a subgraph in the (empty) graph it is given."""


@dataclass(frozen=True)
class _Declaration:
    """One `register_*` call, as given; checked when the schedule is created."""

    name: str
    predecessors: tuple[str, ...]
    successors: tuple[str, ...]
    jump_targets: tuple[str, ...]
    populate: PopulatePipeline | None
    subgraph: PopulateSubgraph | None


class PipelineGraph:
    """Named pipelines and their ordering constraints (seed 004's `PipelineGraph`).

    `name` names the schedule built from the graph (its pass text, its registered
    pipeline, its picture); `anchor` is the op every pipeline runs on, the
    top-level op whose `pipeline.jump_target` attribute requests jumps.
    """

    def __init__(
        self, name: str = "pipeline-graph", *, anchor: str = "builtin.module"
    ) -> None:
        self.name = name
        self.anchor = anchor
        self._declarations: dict[str, _Declaration] = {}

    @property
    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order (the tie-breaking order)."""
        return tuple(self._declarations)

    def register_pipeline(
        self,
        name: str,
        predecessors: Sequence[str] = (),
        successors: Sequence[str] = (),
        jump_targets: Sequence[str] = (),
        populate: PopulatePipeline | None = None,
    ) -> None:
        """Declare pipeline `name`; `populate(pm)` adds its passes.

        Without `populate` the pipeline is empty, which makes it an anchor: other
        pipelines order themselves before or after it (`high-to-middle`). Names in
        the edges and jump targets may be registered later; they are checked by
        `create_schedule`. Raises `PipelineNameError` for a taken or malformed name.
        """
        self._declare(name, predecessors, successors, jump_targets, populate=populate)

    def register_subgraph(
        self,
        name: str,
        predecessors: Sequence[str] = (),
        successors: Sequence[str] = (),
        jump_targets: Sequence[str] = (),
        *,
        populate: PopulateSubgraph,
    ) -> None:
        """Declare `name` as a subgraph; `populate(graph)` registers its members.

        The subgraph runs as one unit: it is scheduled as a single node, its
        members are ordered among themselves only, and no edge or jump reaches a
        member from outside or leaves from one. The graph passed to `populate`
        has the subgraph's name and this graph's anchor. (Seed 004 overloads
        `registerPipeline` on the callback's parameter type, which Python cannot
        dispatch on, hence a second method.)
        """
        self._declare(name, predecessors, successors, jump_targets, subgraph=populate)

    def _declare(
        self,
        name: str,
        predecessors: Sequence[str],
        successors: Sequence[str],
        jump_targets: Sequence[str],
        *,
        populate: PopulatePipeline | None = None,
        subgraph: PopulateSubgraph | None = None,
    ) -> None:
        given = cast(object, name)  # callers may be untyped
        if not isinstance(given, str):
            raise PipelineNameError(
                f"a pipeline name in graph '{self.name}' must be a string, got "
                f"{type(given).__name__} {given!r}"
            )
        _check_callback(self.name, name, populate, "OpPassManager")
        _check_callback(self.name, name, subgraph, "PipelineGraph")
        if not name or "/" in name:
            raise PipelineNameError(
                f"invalid pipeline name {name!r} in graph '{self.name}': names must "
                "be non-empty and must not contain '/' (it separates subgraph members)"
            )
        if name in self._declarations:
            raise PipelineNameError(
                f"pipeline '{name}' is already registered in graph '{self.name}'"
            )
        self._declarations[name] = _Declaration(
            name,
            _names("predecessors", predecessors),
            _names("successors", successors),
            _names("jump_targets", jump_targets),
            populate,
            subgraph,
        )

    def create_schedule(
        self, *, max_jumps_per_edge: int = DEFAULT_MAX_JUMPS_PER_EDGE
    ) -> PipelineSchedule:
        """Check the graph, populate every pipeline and order them.

        The order satisfies every predecessor and successor edge; among the
        pipelines whose constraints are met, the one registered first runs first,
        so the schedule is deterministic and a graph without edges runs in
        registration order. Jumps are not ordering edges, so a loop through a
        jump target is allowed. Each call populates fresh pass managers.

        `max_jumps_per_edge` caps how often one jump (source to target) may be
        taken in one run of the graph holding it; see `PipelineSchedule.run`.

        Raises `UnknownPipelineError`, `SubgraphBoundaryError` or
        `PipelineCycleError` naming the pipelines involved.
        """
        if max_jumps_per_edge < 0:
            raise ValueError(
                f"max_jumps_per_edge must be >= 0, got {max_jumps_per_edge}"
            )
        return _compile(_expand(self), (), max_jumps_per_edge)


def _names(field: str, names: Sequence[str]) -> tuple[str, ...]:
    """`names` without repeats; a bare string is refused, not split into letters."""
    given = cast(object, names)  # callers may be untyped
    shown = f"{type(given).__name__} {given!r}"
    if isinstance(given, str):
        raise PipelineGraphError(
            f"{field} must be a sequence of names, not the string {given!r}; "
            f"fix: {field}=[{given!r}]"
        )
    if not isinstance(given, Sequence) or not all(
        isinstance(n, str) for n in cast(Sequence[object], given)
    ):
        raise PipelineGraphError(f"{field} must be a sequence of names, got {shown}")
    return tuple(dict.fromkeys(cast(Sequence[str], given)))


# --- compiling: populate everything, check names, order --------------------------


@dataclass(frozen=True)
class _Expanded:
    """A graph whose populate callbacks have run, recursively."""

    graph: PipelineGraph
    declarations: tuple[_Declaration, ...]
    bodies: Mapping[str, OpPassManager | _Expanded]

    def members(self) -> Iterable[tuple[str, str]]:
        """(member name, the subgraph of this graph that holds it), at any depth."""
        for name, body in self.bodies.items():
            if isinstance(body, _Expanded):
                for member in body.bodies:
                    yield member, name
                for member, _ in body.members():
                    yield member, name


def _expand(graph: PipelineGraph) -> _Expanded:
    """Run every populate callback, in registration order, depth first.

    Everything is populated before anything is checked, so a misplaced name can
    be told apart from a missing one: inside a subgraph, or in an enclosing graph.
    """
    bodies: dict[str, OpPassManager | _Expanded] = {}
    declarations = tuple(graph._declarations.values())  # pyright: ignore[reportPrivateUsage]
    for decl in declarations:
        if decl.subgraph is not None:
            child = PipelineGraph(decl.name, anchor=graph.anchor)
            _populate(graph, decl.name, decl.subgraph, child)
            bodies[decl.name] = _expand(child)
        else:
            pm = OpPassManager(graph.anchor)
            if decl.populate is not None:
                _populate(graph, decl.name, decl.populate, pm)
            bodies[decl.name] = pm
    return _Expanded(graph, declarations, bodies)


def _check_callback(graph: str, name: str, callback: object, takes: str) -> None:
    """Refuse a populate callback that is not callable, naming the pipeline."""
    if callback is None or callable(callback):
        return
    fix = (
        f"; fix: populate=lambda pm: parse_pass_pipeline_into({callback!r}, pm)"
        if isinstance(callback, str) and takes == "OpPassManager"
        else ""
    )
    raise PipelineGraphError(
        f"populate of pipeline '{name}' in graph '{graph}' must be a function "
        f"taking the pipeline's {takes}, got {type(callback).__name__} "
        f"{callback!r}{fix}"
    )


def _populate(
    graph: PipelineGraph, name: str, callback: Callable[[_T], None], argument: _T
) -> None:
    """Run a populate callback; what it raises names the pipeline it was for."""
    try:
        callback(argument)
    except PipelineGraphError:
        raise
    except Exception as err:
        raise PipelineGraphError(
            f"populating pipeline '{name}' of graph '{graph.name}' failed: "
            f"{type(err).__name__}: {err}"
        ) from err


def _compile(
    level: _Expanded, enclosing: tuple[_Expanded, ...], max_jumps: int
) -> PipelineSchedule:
    _check_names(level, enclosing)
    dependencies = tuple(
        dict.fromkeys(
            edge
            for decl in level.declarations
            for edge in (
                *(Dependency(p, decl.name) for p in decl.predecessors),
                *(Dependency(decl.name, s) for s in decl.successors),
            )
        )
    )
    order = _linearize(level, dependencies)
    by_name = {decl.name: decl for decl in level.declarations}
    pipelines: list[ScheduledPipeline] = []
    for name in order:
        body = level.bodies[name]
        if isinstance(body, _Expanded):
            body = _compile(body, (*enclosing, level), max_jumps)
        pipelines.append(ScheduledPipeline(name, by_name[name].jump_targets, body))
    return PipelineSchedule(
        level.graph.name, level.graph.anchor, tuple(pipelines), dependencies, max_jumps
    )


def _check_names(level: _Expanded, enclosing: tuple[_Expanded, ...]) -> None:
    graph = level.graph.name
    inside = dict(level.members())
    for decl in level.declarations:
        for field, names in (
            ("predecessors", decl.predecessors),
            ("successors", decl.successors),
            ("jump_targets", decl.jump_targets),
        ):
            for name in names:
                if name in level.bodies:
                    continue
                where = f"pipeline '{decl.name}' of graph '{graph}' lists '{name}' in its {field}"
                if name in inside:
                    raise SubgraphBoundaryError(
                        f"{where}, but '{name}' is a member of subgraph "
                        f"'{inside[name]}', which runs as one unit; name "
                        f"'{inside[name]}' instead"
                    )
                outer = next((g for g in enclosing if name in g.bodies), None)
                if outer is not None:
                    raise SubgraphBoundaryError(
                        f"{where}, but '{name}' belongs to the enclosing graph "
                        f"'{outer.graph.name}'; members of a subgraph see only each "
                        f"other (declare the edge or jump on subgraph '{graph}')"
                    )
                raise UnknownPipelineError(
                    f"{where}, but no such pipeline exists"
                    + _suggest(name, level.bodies)
                )


def _suggest(name: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _linearize(level: _Expanded, dependencies: Iterable[Dependency]) -> list[str]:
    """Kahn's algorithm; among ready pipelines, the earliest registered goes first."""
    rank = {decl.name: i for i, decl in enumerate(level.declarations)}
    successors: dict[str, list[str]] = {name: [] for name in rank}
    predecessors: dict[str, list[str]] = {name: [] for name in rank}
    for edge in dependencies:
        successors[edge.source].append(edge.target)
        predecessors[edge.target].append(edge.source)
    waiting = {name: len(preds) for name, preds in predecessors.items()}
    ready = [(rank[name], name) for name, count in waiting.items() if count == 0]
    heapq.heapify(ready)
    order: list[str] = []
    while ready:
        _, name = heapq.heappop(ready)
        order.append(name)
        for successor in successors[name]:
            waiting[successor] -= 1
            if waiting[successor] == 0:
                heapq.heappush(ready, (rank[successor], successor))
    if len(order) < len(rank):
        cycle = _find_cycle(set(rank) - set(order), predecessors, rank)
        raise PipelineCycleError(
            f"the predecessors and successors of graph '{level.graph.name}' form a "
            f"cycle: {' -> '.join(cycle)}; a loop must go through jump_targets",
            cycle,
        )
    return order


def _find_cycle(
    stuck: set[str], predecessors: Mapping[str, list[str]], rank: Mapping[str, int]
) -> tuple[str, ...]:
    """A cycle among the pipelines Kahn's algorithm could not order.

    Each of them still waits for a predecessor that is stuck too, so walking
    backwards from one must revisit a pipeline. The walk picks the earliest
    registered predecessor, and the cycle is reported from its earliest
    registered member, so the message is the same on every run.
    """
    path = [min(stuck, key=rank.__getitem__)]
    seen = {path[0]: 0}
    while True:
        previous = min(
            (p for p in predecessors[path[-1]] if p in stuck), key=rank.__getitem__
        )
        if previous in seen:
            break
        seen[previous] = len(path)
        path.append(previous)
    # path[i + 1] -> path[i]; the cycle runs backwards through path[seen[previous]:].
    loop = path[seen[previous] :][::-1]
    start = loop.index(min(loop, key=rank.__getitem__))
    loop = loop[start:] + loop[:start]
    return (*loop, loop[0])
