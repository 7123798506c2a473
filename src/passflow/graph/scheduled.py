"""The data of a schedule: a pipeline graph's units in run order.

`ScheduledGraph` lists the pipelines of one graph level (each an
`OpPassManager`, a nested level for a subgraph, or a `ScheduledChoice`) with
the jump targets each may request. It is what the runner (`execution`) runs and
the exporter (`export`) draws, and it imports neither: `schedule.PipelineSchedule`,
the schedule `create_schedule` returns, adds running, registering and exporting
on top of it, as `PassManager` adds running to `OpPassManager`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Literal, Self

from passflow.graph.declaration import ConvergencePolicy, SelectAlternative
from passflow.manager import OpPassManager

__all__ = [
    "DEFAULT_MAX_JUMPS_PER_EDGE",
    "Dependency",
    "ScheduledChoice",
    "ScheduledGraph",
    "ScheduledPipeline",
]

DEFAULT_MAX_JUMPS_PER_EDGE = 10
"""How often one jump may be taken per run of its graph, unless configured.

MLIR's own bounded loop over a pipeline, `createCompositeFixedPointPass`, stops
after 10 iterations by default; a jump loop is the same idea, so the same bound.
"""


@dataclass(frozen=True)
class Dependency:
    """An ordering edge: `source` runs before `target` (from either side's list)."""

    source: str
    target: str


@dataclass(frozen=True, eq=False)
class ScheduledChoice:
    """The body of a choice: its own pipeline, which may pick an alternative with
    `pipeline.jump_target`, the alternatives in declared order, and the `select`
    function that picks one otherwise."""

    selector: OpPassManager
    alternatives: tuple[ScheduledPipeline, ...]
    select: SelectAlternative | None
    kind: ClassVar[Literal["choice"]] = "choice"

    def alternative(self, name: str) -> ScheduledPipeline | None:
        """The alternative called `name`, if there is one."""
        return next((a for a in self.alternatives if a.name == name), None)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(a.name for a in self.alternatives)

    def describe(self) -> str:
        """How the choice picks: `choice builtin.module(pick)`, `, select=f` added."""
        select = (
            f", select={getattr(self.select, '__name__', repr(self.select))}"
            if self.select is not None
            else ""
        )
        return f"choice {self.selector}{select}"

    def clone(self) -> ScheduledChoice:
        return ScheduledChoice(
            self.selector.clone(),
            tuple(a.clone() for a in self.alternatives),
            self.select,
        )


@dataclass(frozen=True, eq=False)
class ScheduledPipeline:
    """One scheduled unit: a pipeline, a subgraph run as a whole, or a choice
    (which runs its own pipeline, then one of its alternatives)."""

    name: str
    jump_targets: tuple[str, ...]
    body: OpPassManager | ScheduledGraph | ScheduledChoice
    on_cap: ConvergencePolicy = "error"
    """What its loops do when a jump reaches the per-edge cap."""

    @property
    def is_empty(self) -> bool:
        """An anchor: no passes (or, for a subgraph, no members)."""
        body = self.body
        if isinstance(body, ScheduledGraph):
            return not body.pipelines
        if isinstance(body, ScheduledChoice):
            return not body.selector.passes and all(
                a.is_empty for a in body.alternatives
            )
        return not body.passes

    def pass_managers(self, prefix: str) -> Iterator[tuple[str, OpPassManager]]:
        """The pass managers this unit may run, qualified by `prefix`: a choice's
        own pipeline (under its name), then its alternatives'."""
        body = self.body
        if isinstance(body, OpPassManager):
            yield prefix + self.name, body
        elif isinstance(body, ScheduledGraph):
            yield from body.pass_managers(f"{prefix}{self.name}/")
        else:
            yield prefix + self.name, body.selector
            for alternative in body.alternatives:
                yield from alternative.pass_managers(prefix)

    def clone(self) -> ScheduledPipeline:
        return ScheduledPipeline(
            self.name, self.jump_targets, self.body.clone(), self.on_cap
        )


@dataclass(eq=False)
class ScheduledGraph:
    """The pipelines of a graph in run order: the data of a `PipelineSchedule`
    (what `create_schedule` returns) and of each subgraph in it.

    `pipelines` is the linear order; `dependencies` the declared ordering edges
    (deduplicated); `max_jumps_per_edge` the run-time cap on each jump edge.
    """

    name: str
    anchor: str
    pipelines: tuple[ScheduledPipeline, ...]
    dependencies: tuple[Dependency, ...]
    max_jumps_per_edge: int
    max_pipeline_runs: int | None = None
    """The run-wide bound on pipeline runs, or None for `pipeline_run_limit`'s
    default, derived from the pipelines, their loops and the per-edge cap."""
    _index: dict[str, int] = field(init=False, repr=False)
    kind: ClassVar[Literal["subgraph"]] = "subgraph"

    def __post_init__(self) -> None:
        self._index = {}
        for i, pipeline in enumerate(self.pipelines):
            self._index[pipeline.name] = i
            if isinstance(pipeline.body, ScheduledChoice):
                self._index |= dict.fromkeys(pipeline.body.names, i)

    @property
    def order(self) -> tuple[str, ...]:
        """The pipeline names in run order (subgraphs as one name)."""
        return tuple(p.name for p in self.pipelines)

    def index(self, name: str) -> int:
        """The 0-based position of pipeline `name` in the run order (for an
        alternative, its choice's)."""
        return self._index[name]

    @property
    def pipeline_run_limit(self) -> int:
        """How many pipelines one run may run in all, subgraph members included:
        `max_pipeline_runs`, or by default the most a run can take without any
        jump edge going over `max_jumps_per_edge`, whatever its loops' shape
        (nested, overlapping, sharing pipelines): so the default never stops a
        run that every per-edge cap allows, and the per-edge cap alone ends
        every run. Only a `max_pipeline_runs` the user sets can stop one first.
        """
        if self.max_pipeline_runs is not None:
            return self.max_pipeline_runs
        return _run_bound(self, self.max_jumps_per_edge)

    def pass_managers(self, prefix: str = "") -> Iterator[tuple[str, OpPassManager]]:
        """Each pipeline's pass manager with its qualified name (`sub/member`), in
        run order, subgraphs flattened."""
        for pipeline in self.pipelines:
            yield from pipeline.pass_managers(prefix)

    def clone(self) -> Self:
        """A copy, of the same class, with every pass cloned, so two runs never
        share pass state."""
        return type(self)(
            self.name,
            self.anchor,
            tuple(p.clone() for p in self.pipelines),
            self.dependencies,
            self.max_jumps_per_edge,
            self.max_pipeline_runs,
        )

    def loops(self) -> Iterator[tuple[int, int]]:
        """(first, last) positions of the loop each backward jump closes: from its
        target to its source (an alternative's jumps leave from its choice)."""
        for pipeline in self.pipelines:
            units = [pipeline]
            if isinstance(pipeline.body, ScheduledChoice):
                units.extend(pipeline.body.alternatives)
            for unit in units:
                last = self.index(unit.name)
                for target in unit.jump_targets:
                    if self.index(target) <= last:
                        yield self.index(target), last

    # --- printing -------------------------------------------------------------

    def __str__(self) -> str:
        return self.pretty()

    def pretty(self, indent: int = 0, title: str | None = None) -> str:
        """The numbered run order in braces, one pipeline per line, with jump targets.

        The first line starts with `title` (default: the schedule's name);
        subgraph members are numbered `5.1.`, `5.2.` in their subgraph's braces.
        """
        pad = " " * indent
        header = (
            f"{pad}{title or self.name}: pipeline schedule, at most "
            f"{self.max_jumps_per_edge} jumps per edge"
        )
        return "\n".join(_block(header, self.pipelines, pad, ""))


def _run_bound(schedule: ScheduledGraph, cap: int) -> int:
    """The most stage runs of one entry into `schedule` when no jump edge goes
    over `cap` (see `pipeline_run_limit`), for any nesting or overlap of loops.

    A loop (first, last) is visited afresh only after the run left it (went on
    past `last`) and came back, which takes a jump from further on landing at or
    before `last`, or after a jump of a loop strictly enclosing it: either way a
    jump of a loop that comes later in the order (last, -first). So, taking the
    loops from the last one back, a loop is taken at most `cap` times per visit
    and visited at most once more than those later loops were taken. A pipeline
    runs once, and once more per jump of a loop holding it.
    """
    loops = sorted(schedule.loops(), key=lambda loop: (loop[1], -loop[0]), reverse=True)
    jumps: list[int] = []
    for i, (first, last) in enumerate(loops):
        restarts = sum(
            jumps[j]
            for j, (other_first, other_last) in enumerate(loops[:i])
            if other_first <= last
            and (other_last > last or (other_last == last and other_first < first))
        )
        jumps.append(cap * (1 + restarts))
    total = 0
    for position, pipeline in enumerate(schedule.pipelines):
        runs = 1 + sum(
            taken
            for (first, last), taken in zip(loops, jumps, strict=True)
            if first <= position <= last
        )
        total += _unit_runs(pipeline, cap) * runs
    return total


def _unit_runs(pipeline: ScheduledPipeline, cap: int) -> int:
    body = pipeline.body
    if isinstance(body, OpPassManager):
        return 1
    if isinstance(body, ScheduledGraph):
        return _run_bound(body, cap)
    return 1 + max(_unit_runs(a, cap) for a in body.alternatives)


def _block(
    header: str, pipelines: tuple[ScheduledPipeline, ...], pad: str, prefix: str
) -> list[str]:
    """`header {`, one numbered line (or block) per pipeline, `}`."""
    if not pipelines:
        return [header + " {}"]
    lines = [header + " {"]
    for number, pipeline in enumerate(pipelines, start=1):
        position = f"{prefix}{number}."
        body = pipeline.body
        jumps = (
            f" [jumps: {', '.join(pipeline.jump_targets)}"
            + ("" if pipeline.on_cap == "error" else f"; on_cap={pipeline.on_cap}")
            + "]"
            if pipeline.jump_targets
            else ""
        )
        line = f"{pad}  {position} {pipeline.name}: "
        if isinstance(body, ScheduledGraph):
            lines.extend(
                _block(line + "subgraph" + jumps, body.pipelines, pad + "  ", position)
            )
        elif isinstance(body, ScheduledChoice):
            lines.extend(
                _block(line + body.describe(), body.alternatives, pad + "  ", position)
            )
        else:
            lines.append(f"{line}{body}{jumps}")
    lines.append(pad + "}")
    return lines
