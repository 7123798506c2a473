"""Graphs registered by name, which other packages find and extend.

`register_graph(graph)` makes the graph a pass pipeline (`builtin.module(numba-mlir)`)
whose schedule is built when the pipeline is used, not when it is registered. Until
then, anyone may extend it: a plugin that did not register the graph calls
`extend_graph("numba-mlir", add_my_stage)` from its `passflow.passes` entry point,
in any order relative to the plugin that registers the graph, and its extension
runs on a copy of the graph each time the schedule is built.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass

from passflow import registry
from passflow.graph.errors import PipelineGraphError, UnknownPipelineError
from passflow.graph.execution import PipelineSchedulePass
from passflow.graph.pipeline_graph import PipelineGraph
from passflow.graph.schedule import (
    PipelineSchedule,
    ScheduleOptions,
    options_with_default,
)
from passflow.graph.scheduled import DEFAULT_MAX_JUMPS_PER_EDGE
from passflow.manager import OpPassManager

__all__ = [
    "ExtendGraph",
    "GraphPipeline",
    "extend_graph",
    "lookup_graph",
    "register_graph",
    "registered_schedule",
]

ExtendGraph = Callable[[PipelineGraph], None]
"""Adds, replaces or removes pipelines of a registered graph (on a copy)."""


@dataclass(frozen=True)
class _Extension:
    extend: ExtendGraph
    optional: bool


_extensions: dict[str, list[_Extension]] = {}
_ever_registered: set[str] = set()
"""Every name a graph was registered under, unregistered since or not: an
extension of another name is a mistake (a typo), not a graph not loaded yet."""


@dataclass(frozen=True)
class GraphPipeline:
    """The registry's builder for a registered graph: builds the schedule, with
    every extension applied, each time the pipeline is added to a pass manager."""

    argument: str
    graph: PipelineGraph
    max_jumps_per_edge: int

    def __call__(self, pm: OpPassManager, options: ScheduleOptions) -> None:
        schedule = self.schedule(options.max_jumps, options.max_runs or None)
        pm.add(
            PipelineSchedulePass(
                schedule, self.argument, registered_max_jumps=self.max_jumps_per_edge
            )
        )

    def schedule(
        self,
        max_jumps_per_edge: int | None = None,
        max_pipeline_runs: int | None = None,
    ) -> PipelineSchedule:
        """The registered graph, extended, as a schedule."""
        _check_extended()
        graph = self.graph.copy()
        for extension in _extensions.get(self.argument, ()):
            try:
                extension.extend(graph)
            except PipelineGraphError:
                raise
            except Exception as err:
                raise PipelineGraphError(
                    f"extension {_name(extension.extend)} of graph "
                    f"'{self.argument}' failed: {type(err).__name__}: {err}"
                ) from err
        cap = (
            self.max_jumps_per_edge
            if max_jumps_per_edge is None
            else max_jumps_per_edge
        )
        return graph.create_schedule(
            max_jumps_per_edge=cap, max_pipeline_runs=max_pipeline_runs
        )


def register_graph(
    graph: PipelineGraph,
    argument: str | None = None,
    summary: str = "",
    *,
    max_jumps_per_edge: int = DEFAULT_MAX_JUMPS_PER_EDGE,
) -> None:
    """Register `graph` as pass pipeline `argument` (default: the graph's name).

    The schedule is built each time the pipeline is used, from the graph as it is
    then plus every `extend_graph` extension, so plugins loaded later still count.
    `<argument>{max-jumps=N}` overrides the jump cap (default:
    `max_jumps_per_edge`). Raises `RegistrationError` if the name is taken.
    """
    if not isinstance(graph, PipelineGraph):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise PipelineGraphError(
            f"register_graph takes a PipelineGraph, got {type(graph).__name__} "
            f"{graph!r}"
        )
    name = argument or graph.name
    registry.register_pipeline(
        name,
        summary or f"Run pipeline graph '{graph.name}'",
        GraphPipeline(name, graph, max_jumps_per_edge),
        options=options_with_default(max_jumps_per_edge),
    )
    _ever_registered.add(name)


def _graph_names() -> list[str]:
    return sorted(
        p.argument
        for p in registry.registered_pipelines()
        if isinstance(p.builder, GraphPipeline)
    )


def _suggest(name: str) -> str:
    """`; did you mean 'x'?`, or the registered graphs when none is close."""
    graphs = _graph_names()
    close = difflib.get_close_matches(name, graphs, n=1)
    if close:
        return f"; did you mean '{close[0]}'?"
    return f" (registered graphs: {', '.join(graphs) or 'none'})"


_OPTIONAL_FIX = (
    "fix: use the name the graph is registered under, or pass optional=True to "
    "extend_graph to extend the graph only when it is installed"
)


def _check_extended() -> None:
    """Refuse to build a schedule while an extension names a graph that was
    never registered: once every plugin has loaded, that is a misspelt name."""
    for name, extensions in _extensions.items():
        required = [e for e in extensions if not e.optional]
        if required and name not in _ever_registered:
            raise UnknownPipelineError(
                f"an extension ({_name(required[0].extend)}) was given for graph "
                f"'{name}', but no pipeline graph was ever registered under that "
                f"name{_suggest(name)}; {_OPTIONAL_FIX}"
            )


def _registered(argument: str) -> GraphPipeline:
    info = registry.lookup_pipeline(argument)
    if info is not None and isinstance(info.builder, GraphPipeline):
        return info.builder
    graphs = _graph_names()
    found = info or registry.lookup_pass(argument)
    kind = "pass pipeline" if isinstance(found, registry.PipelineInfo) else "pass"
    what = f"; '{argument}' is a {kind}, not a graph" if found is not None else ""
    raise UnknownPipelineError(
        f"no pipeline graph is registered as '{argument}'{what} (registered graphs: "
        f"{', '.join(graphs) or 'none'})"
    )


def lookup_graph(argument: str) -> PipelineGraph:
    """The graph registered as `argument`, to read or to extend in place.

    Changes made to it apply to every schedule built afterwards. A plugin should
    use `extend_graph` instead, which does not depend on plugin load order.
    Raises `UnknownPipelineError` listing the registered graphs.
    """
    return _registered(argument).graph


def extend_graph(
    argument: str, extension: ExtendGraph, *, optional: bool = False
) -> None:
    """Run `extension(graph)` on the graph registered as `argument` whenever its
    schedule is built, after the extensions added before it.

    The graph need not be registered yet, so a plugin can call this from its entry
    point whatever the load order. The extension receives a copy of the graph and
    may register, replace or remove pipelines, or edit a stage's builder
    (`graph.source(name)`). Extensions are kept by name for the life of the
    process, as entry-point plugins are.

    A name no graph is registered under is a mistake, unless `optional` (extend
    the graph if it is installed): once every plugin has loaded it raises
    `UnknownPipelineError` at once, and before that, building any registered
    graph's schedule raises it, with the closest registered name.
    """
    if not callable(extension):  # pyright: ignore[reportUnnecessaryComparison]
        raise PipelineGraphError(
            f"an extension of graph '{argument}' must be a function taking the "
            f"PipelineGraph, got {type(extension).__name__} {extension!r}"
        )
    if not optional and registry.plugins_loaded():
        info = registry.lookup_pipeline(argument)
        if info is None or not isinstance(info.builder, GraphPipeline):
            raise UnknownPipelineError(
                f"cannot extend graph '{argument}': no pipeline graph is registered "
                f"under that name{_suggest(argument)}; {_OPTIONAL_FIX}"
            )
    _extensions.setdefault(argument, []).append(_Extension(extension, optional))


def registered_schedule(
    argument: str,
    *,
    max_jumps_per_edge: int | None = None,
    max_pipeline_runs: int | None = None,
) -> PipelineSchedule:
    """The schedule pipeline `argument` runs: its graph with every extension."""
    return _registered(argument).schedule(max_jumps_per_edge, max_pipeline_runs)


def _name(extension: ExtendGraph) -> str:
    module = getattr(extension, "__module__", "?")
    return f"{module}.{getattr(extension, '__qualname__', repr(extension))}"
