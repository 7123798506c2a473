"""What a `register_*` call records, and the graph once its callbacks have run.

`PipelineGraph` only records declarations; `create_schedule` expands them (runs
every populate callback) and hands the result to `compile`, which checks names,
choices and jumps and orders the pipelines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from passflow.ir import Operation
from passflow.manager import OpPassManager

__all__ = [
    "CONVERGENCE_POLICIES",
    "ConvergencePolicy",
    "Declaration",
    "Expanded",
    "PopulatePipeline",
    "SelectAlternative",
]

PopulatePipeline = Callable[[OpPassManager], None]
"""Fills the (empty) pass manager of one pipeline."""

SelectAlternative = Callable[[Operation], str]
"""Given the top-level op when a choice runs, names the alternative to run."""

Kind = Literal["pipeline", "subgraph", "choice"]

ConvergencePolicy = Literal["error", "warn", "silent"]
"""What a loop does when its jump reaches the per-edge cap (`on_cap`): abort the
run (`error`), or stop looping and go on after the jump's source with a warning
(`warn`) or without one (`silent`): the choice MLIR's composite fixed-point pass
offers as `on-convergence-failure`."""

CONVERGENCE_POLICIES: tuple[ConvergencePolicy, ...] = ("error", "warn", "silent")


@dataclass(frozen=True)
class Declaration:
    """One `register_*` call, as given; checked when the schedule is created.

    A choice's `populate` fills its selecting pipeline, whose passes may pick an
    alternative with `pipeline.jump_target`; `select` picks one otherwise.
    A subgraph's `subgraph` registers its members in the `PipelineGraph` it is
    given: a `PopulateSubgraph`, as `register_subgraph` types it. The record
    sits below `pipeline_graph`, so its field does not name the graph's type.
    """

    name: str
    kind: Kind
    predecessors: tuple[str, ...]
    successors: tuple[str, ...]
    jump_targets: tuple[str, ...]
    populate: PopulatePipeline | None = None
    subgraph: Callable[..., None] | None = None
    alternatives: tuple[str, ...] = ()
    select: SelectAlternative | None = None
    source: object = None
    """What `populate` was given (text, a builder, a function), for `source()`."""
    on_cap: ConvergencePolicy = "error"
    """What the loops this pipeline's jumps close do at the per-edge cap."""


@dataclass(frozen=True)
class Expanded:
    """A graph whose populate callbacks have run, recursively.

    `removed` maps each pipeline taken out with `remove_pipeline` to its
    declaration, whose edges still order its neighbours.
    """

    name: str
    anchor: str
    declarations: tuple[Declaration, ...]
    bodies: Mapping[str, OpPassManager | Expanded]
    removed: Mapping[str, Declaration]

    def members(self) -> Iterable[tuple[str, str]]:
        """(member name, the subgraph of this graph that holds it), at any depth."""
        for name, body in self.bodies.items():
            if isinstance(body, Expanded):
                for member in body.bodies:
                    yield member, name
                for member, _ in body.members():
                    yield member, name
