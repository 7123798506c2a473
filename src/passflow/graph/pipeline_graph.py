"""`PipelineGraph`: named pipelines with dependencies, compiled into a schedule.

A compiler is declared as named pipelines, each listing the pipelines it must
follow (`predecessors`), the ones it must precede (`successors`) and the ones it
may jump to at run time (`jump_targets`). A choice declares alternatives of which
exactly one runs. Nothing runs until `create_schedule`, so an extension can add,
replace or remove a stage by name, without the original author having planned an
extension point.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import NoReturn, TypeVar, cast

from passflow.graph.compile import compile_schedule
from passflow.graph.declaration import (
    CONVERGENCE_POLICIES,
    ConvergencePolicy,
    Declaration,
    Expanded,
    Kind,
    PopulatePipeline,
    SelectAlternative,
)
from passflow.graph.errors import ChoiceError, PipelineGraphError, PipelineNameError
from passflow.graph.schedule import PipelineSchedule
from passflow.graph.scheduled import DEFAULT_MAX_JUMPS_PER_EDGE
from passflow.graph.stage_source import StageSource, as_populate, copy_source
from passflow.manager import OpPassManager

__all__ = ["PipelineGraph", "PopulateSubgraph"]

_T = TypeVar("_T")


PopulateSubgraph = Callable[["PipelineGraph"], None]
"""Registers the members of a subgraph in the (empty) graph it is given."""


class PipelineGraph:
    """Named pipelines and their ordering constraints (the "PipelineGraph" RFC).

    `name` names the schedule built from the graph (its pass text, its registered
    pipeline, its picture); `anchor` is the op every pipeline runs on, the
    top-level op whose `pipeline.jump_target` attribute requests jumps.
    """

    def __init__(
        self, name: str = "pipeline-graph", *, anchor: str = "builtin.module"
    ) -> None:
        self.name = name
        self.anchor = anchor
        self._declarations: dict[str, Declaration] = {}
        self._removed: dict[str, Declaration] = {}

    @property
    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order (the tie-breaking order)."""
        return tuple(self._declarations)

    @property
    def declarations(self) -> tuple[Declaration, ...]:
        """Every registration as given, in registration order."""
        return tuple(self._declarations.values())

    @property
    def removed(self) -> Mapping[str, Declaration]:
        """The pipelines taken out with `remove_pipeline`, whose edges still order
        their neighbours."""
        return dict(self._removed)

    def register_pipeline(
        self,
        name: str,
        predecessors: Sequence[str] = (),
        successors: Sequence[str] = (),
        jump_targets: Sequence[str] = (),
        populate: StageSource | None = None,
        *,
        on_cap: ConvergencePolicy = "error",
    ) -> None:
        """Declare pipeline `name`; `populate` gives its passes.

        `populate` is a function filling the pipeline's pass manager, pipeline
        text (`"func.func(cse)"` or `"builtin.module(func.func(cse))"`: text
        anchored on the graph's anchor is not nested again), or an object with
        `build()` returning a pass manager, such as a `PipelineBuilder`. Without
        it the pipeline is empty, which makes it an anchor: other pipelines order
        themselves before or after it (`high-to-middle`). Names in the edges and
        jump targets may be registered later; `create_schedule` checks them.
        Raises `PipelineNameError` for a taken or malformed name.

        `on_cap` says what the loops its jumps close do when a jump reaches the
        per-edge cap: `"error"` aborts the run with `JumpLimitError`; `"warn"`
        and `"silent"` stop looping there and go on after this pipeline, with a
        warning or without, as MLIR's composite fixed-point pass does with
        `on-convergence-failure`. The trace records the stop either way.
        """
        self._declare(
            name,
            "pipeline",
            predecessors,
            successors,
            jump_targets,
            populate=as_populate(populate, self.name, _checked(self.name, name)),
            source=populate,
            on_cap=on_cap,
        )

    def register_subgraph(
        self,
        name: str,
        predecessors: Sequence[str] = (),
        successors: Sequence[str] = (),
        jump_targets: Sequence[str] = (),
        *,
        populate: PopulateSubgraph,
        on_cap: ConvergencePolicy = "error",
    ) -> None:
        """Declare `name` as a subgraph; `populate(graph)` registers its members.

        The subgraph runs as one unit: it is scheduled as a single node, its
        members are ordered among themselves only, and no edge or jump reaches a
        member from outside or leaves from one. The graph passed to `populate`
        has the subgraph's name and this graph's anchor. (The RFC overloads
        `registerPipeline` on the callback's parameter type, which Python cannot
        dispatch on, hence a second method.) `on_cap` is as for
        `register_pipeline`, for the jumps that leave from the subgraph's end.
        """
        _check_callback(self.name, _checked(self.name, name), populate)
        self._declare(
            name,
            "subgraph",
            predecessors,
            successors,
            jump_targets,
            subgraph=populate,
            source=populate,
            on_cap=on_cap,
        )

    def register_choice(
        self,
        name: str,
        alternatives: Sequence[str],
        predecessors: Sequence[str] = (),
        successors: Sequence[str] = (),
        *,
        populate: StageSource | None = None,
        select: SelectAlternative | None = None,
    ) -> None:
        """Declare `name` as a choice: exactly one of `alternatives` runs, then
        the run continues at the join, after the choice.

        The alternatives are pipelines or subgraphs of this graph, registered
        before or after the choice in any order. They run inside the choice, so
        their own predecessors and successors order the choice, and any edge
        that names one of them orders the choice. When the run reaches the
        choice, its pipeline (`populate`, like a stage's) runs first; a pass in
        it picks an alternative by setting `pipeline.jump_target` to its name.
        If none did, `select(op)` (on the top-level op) names it. Picking
        nothing, or a name that is not an alternative, aborts the run with
        `ChoiceSelectionError`.

        `create_schedule` refuses (`ChoiceError`) an edge between two
        alternatives, and a jump into an alternative or from one to another, so
        that "exactly one runs" holds whatever the registration order.
        """
        checked = _checked(self.name, name)
        where = f"choice '{name}' of graph '{self.name}'"
        given = _names("alternatives", alternatives)
        if len(given) < 2:
            raise ChoiceError(
                f"{where} needs at least two alternatives, got {len(given)}; to make "
                "a stage optional, add an empty pipeline as the other alternative"
            )
        if name in given:
            raise ChoiceError(f"{where} lists itself among its alternatives")
        if select is not None and not callable(cast(object, select)):
            raise PipelineGraphError(
                f"select of {where} must be a function taking the top-level op, got "
                f"{type(cast(object, select)).__name__} {select!r}"
            )
        if populate is None and select is None:
            raise ChoiceError(
                f"{where} has no way to pick an alternative; give it populate (passes "
                "that set pipeline.jump_target to an alternative) or select"
            )
        self._declare(
            name,
            "choice",
            predecessors,
            successors,
            (),
            populate=as_populate(populate, self.name, checked),
            alternatives=given,
            select=select,
            source=populate,
        )

    def replace_pipeline(
        self, name: str, populate: StageSource | PopulateSubgraph | None
    ) -> None:
        """Give registered `name` new contents, keeping its edges, jump targets
        and alternatives: new passes for a pipeline or a choice's own pipeline
        (any `populate` `register_pipeline` takes), new members for a subgraph."""
        old = self._registered(name, "replace")
        if old.kind == "subgraph":
            _check_callback(self.name, name, populate)
            subgraph = cast(PopulateSubgraph, populate)
            changed = replace(old, subgraph=subgraph, source=populate)
        else:
            made = as_populate(populate, self.name, name)
            changed = replace(old, populate=made, source=populate)
        self._declarations[name] = changed

    def remove_pipeline(self, name: str) -> None:
        """Take pipeline, subgraph or choice `name` out of the graph.

        Its ordering is kept: whatever had to run before it still runs before
        whatever had to run after it, and edges that name it are not errors. A
        jump to it, or a choice listing it, is refused by `create_schedule`.
        Removing a choice removes its alternatives too, so that they do not all
        run.
        """
        removed = self._registered(name, "remove")
        del self._declarations[name]
        self._removed[name] = removed
        for alternative in removed.alternatives:
            if alternative in self._declarations:
                self.remove_pipeline(alternative)

    def source(self, name: str) -> object:
        """What registered `name`'s `populate` was given: a function, pipeline text
        or a builder, which an extension can edit until the schedule is built."""
        return self._registered(name, "look up").source

    def copy(self) -> PipelineGraph:
        """A graph with the same registrations, to extend without changing this one.

        A stage given as a builder (anything with `build()` and `copy()`, such as
        a `PipelineBuilder`) gets a copy of it, so an extension inserting a pass
        inside the stage (`copy.source(name)`) edits the copy only.
        """
        new = PipelineGraph(self.name, anchor=self.anchor)
        new._declarations = {
            name: self._own(decl) for name, decl in self._declarations.items()
        }
        new._removed = dict(self._removed)
        return new

    def _own(self, decl: Declaration) -> Declaration:
        copied = copy_source(decl.source)
        if copied is None:
            return decl
        populate = as_populate(copied, self.name, decl.name)
        return replace(decl, populate=populate, source=copied)

    def run(self, *args: object, **kwargs: object) -> NoReturn:
        """A graph does not run: its schedule does. Raises `PipelineGraphError`
        saying so, rather than an `AttributeError`."""
        raise PipelineGraphError(
            f"graph '{self.name}' is a declaration and does not run; fix: create its "
            "schedule first, graph.create_schedule().run(op)"
        )

    def _registered(self, name: str, action: str) -> Declaration:
        found = self._declarations.get(name)
        if found is None:
            known = ", ".join(self._declarations) or "none"
            raise PipelineNameError(
                f"cannot {action} pipeline '{name}': graph '{self.name}' has no "
                f"pipeline of that name (registered: {known})"
            )
        return found

    def _declare(
        self,
        name: str,
        kind: Kind,
        predecessors: Sequence[str],
        successors: Sequence[str],
        jump_targets: Sequence[str],
        *,
        populate: PopulatePipeline | None = None,
        subgraph: PopulateSubgraph | None = None,
        alternatives: tuple[str, ...] = (),
        select: SelectAlternative | None = None,
        source: object = None,
        on_cap: ConvergencePolicy = "error",
    ) -> None:
        if on_cap not in CONVERGENCE_POLICIES:
            raise PipelineGraphError(
                f"on_cap of pipeline '{name}' in graph '{self.name}' must be one of "
                f"{', '.join(map(repr, CONVERGENCE_POLICIES))}, got {on_cap!r}"
            )
        if not name or "/" in name:
            raise PipelineNameError(
                f"invalid pipeline name {name!r} in graph '{self.name}': names must "
                "be non-empty and must not contain '/' (it separates subgraph members)"
            )
        if name in self._declarations:
            raise PipelineNameError(
                f"pipeline '{name}' is already registered in graph '{self.name}'; "
                f"fix: to give it other passes, graph.replace_pipeline('{name}', "
                f"populate); to add a stage beside it, register it under a new name"
            )
        declaration = Declaration(
            name,
            kind,
            _names("predecessors", predecessors),
            _names("successors", successors),
            _names("jump_targets", jump_targets),
            populate,
            subgraph,
            alternatives,
            select,
            source,
            on_cap,
        )
        self._removed.pop(name, None)
        self._declarations[name] = declaration

    def create_schedule(
        self,
        *,
        max_jumps_per_edge: int = DEFAULT_MAX_JUMPS_PER_EDGE,
        max_pipeline_runs: int | None = None,
    ) -> PipelineSchedule:
        """Check the graph, populate every pipeline and order them.

        The order satisfies every predecessor and successor edge; among the
        pipelines whose constraints are met, the one registered first runs first,
        so the schedule is deterministic and a graph without edges runs in
        registration order. Jumps are not ordering edges, so a loop through a
        jump target is allowed. Each call populates fresh pass managers.

        `max_jumps_per_edge` caps how often one jump (source to target) may be
        taken in a row, in one visit to the loop it closes; see
        `PipelineSchedule.run`. `max_pipeline_runs` bounds the pipelines one run
        runs in all (default: derived, `PipelineSchedule.pipeline_run_limit`).

        Raises `UnknownPipelineError`, `SubgraphBoundaryError`, `ChoiceError`,
        `SkippedPredecessorError` or `PipelineCycleError` naming the pipelines
        involved.
        """
        _check_count(self.name, "max_jumps_per_edge", max_jumps_per_edge, 0)
        if max_pipeline_runs is not None:
            _check_count(self.name, "max_pipeline_runs", max_pipeline_runs, 1)
        schedule = compile_schedule(_expand(self), max_jumps_per_edge)
        schedule.max_pipeline_runs = max_pipeline_runs
        return schedule


def _check_count(graph: str, name: str, value: object, least: int) -> None:
    """Refuse a cap that is not an int >= `least` (callers may be untyped)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise PipelineGraphError(
            f"{name} of graph '{graph}' must be an int >= {least}, got "
            f"{type(value).__name__} {value!r}"
        )


def _checked(graph: str, name: str) -> str:
    """`name`, refused unless it is a string (callers may be untyped)."""
    given = cast(object, name)
    if not isinstance(given, str):
        raise PipelineNameError(
            f"a pipeline name in graph '{graph}' must be a string, got "
            f"{type(given).__name__} {given!r}"
        )
    return given


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


def _check_callback(graph: str, name: str, callback: object) -> None:
    """Refuse a subgraph's populate that is not callable, naming the pipeline."""
    if callable(callback):
        return
    raise PipelineGraphError(
        f"populate of subgraph '{name}' in graph '{graph}' must be a function "
        f"taking the subgraph's PipelineGraph, got {type(callback).__name__} "
        f"{callback!r}"
    )


# --- expanding: run every populate callback --------------------------------------


def _expand(graph: PipelineGraph) -> Expanded:
    """Run every populate callback, in registration order, depth first.

    Everything is populated before anything is checked, so a misplaced name can
    be told apart from a missing one: inside a subgraph, or in an enclosing graph.
    """
    bodies: dict[str, OpPassManager | Expanded] = {}
    declarations = graph.declarations
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
    return Expanded(
        graph.name,
        graph.anchor,
        declarations,
        bodies,
        graph.removed,
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
