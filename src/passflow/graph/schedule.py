"""`PipelineSchedule`: a pipeline graph in run order, runnable like a pass manager.

The schedule is a list of pipelines (each an `OpPassManager`, or a nested schedule
for a subgraph) with the jump targets each may request. It runs as a single pass,
`PipelineSchedulePass`, that executes each pipeline as a dynamic pipeline, so a
`PassManager` drives the whole run: instrumentation, timing, IR printing,
statistics, verification and crash reproducers see every stage, exactly as they
see any other pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Literal, cast

from passflow import ir, registry
from passflow.diagnostics import PassPipelineError
from passflow.graph import export
from passflow.graph.declaration import SelectAlternative
from passflow.graph.errors import PipelineGraphError
from passflow.graph.execution import PipelineSchedulePass, ScheduleTrace
from passflow.manager import OpPassManager
from passflow.options import UNSIGNED, Option, PipelineOptions
from passflow.pass_manager import PassManager

__all__ = [
    "DEFAULT_MAX_JUMPS_PER_EDGE",
    "Dependency",
    "PipelineSchedule",
    "ScheduleOptions",
    "ScheduledChoice",
    "ScheduledPipeline",
    "options_with_default",
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
    body: OpPassManager | PipelineSchedule | ScheduledChoice

    @property
    def is_empty(self) -> bool:
        """An anchor: no passes (or, for a subgraph, no members)."""
        body = self.body
        if isinstance(body, PipelineSchedule):
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
        elif isinstance(body, PipelineSchedule):
            yield from body.pass_managers(f"{prefix}{self.name}/")
        else:
            yield prefix + self.name, body.selector
            for alternative in body.alternatives:
                yield from alternative.pass_managers(prefix)

    def clone(self) -> ScheduledPipeline:
        return ScheduledPipeline(self.name, self.jump_targets, self.body.clone())


@dataclass(eq=False)
class PipelineSchedule:
    """The pipelines of a graph in run order (what `create_schedule` returns).

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
        jump edge going over `max_jumps_per_edge` when loops nest: each pipeline
        counts (cap + 1) times for each backward jump whose loop holds it.

        It is a backstop behind the per-edge cap, so a loop shape that cap does
        not stop still ends, with `JumpLimitError`.
        """
        if self.max_pipeline_runs is not None:
            return self.max_pipeline_runs
        return _run_bound(self, self.max_jumps_per_edge + 1)

    def pass_managers(self, prefix: str = "") -> Iterator[tuple[str, OpPassManager]]:
        """Each pipeline's pass manager with its qualified name (`sub/member`), in
        run order, subgraphs flattened."""
        for pipeline in self.pipelines:
            yield from pipeline.pass_managers(prefix)

    def clone(self) -> PipelineSchedule:
        """A copy with every pass cloned, so two runs never share pass state."""
        return PipelineSchedule(
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

    # --- running --------------------------------------------------------------

    def as_pass(self, argument: str | None = None) -> PipelineSchedulePass:
        """A pass that runs this schedule, to add to any pass manager.

        It prints as `argument` (default: the schedule's name) in textual
        pipelines and reproducers, which parse back when the schedule is
        registered under that name (`register`).
        """
        return PipelineSchedulePass(self.clone(), argument or self.name)

    def run(
        self, op: ir.Operation, pass_manager: PassManager | None = None
    ) -> ScheduleTrace:
        """Run the schedule on `op` and return what ran, jumps included.

        The run is `pass_manager.run(op)` with this schedule as its only pass, so
        the manager's configuration (context, instrumentation, timing, IR
        printing, statistics, verifier, diagnostic handlers, reproducers) applies
        to every pipeline; without one, a default `PassManager` anchored on `op`'s
        name is used. `pass_manager` must hold no passes (to combine a schedule
        with other passes, add `as_pass()` to it and run it yourself); it is left
        empty afterwards.

        After each pipeline, a `pipeline.jump_target` string attribute on `op`
        sends the run to that pipeline and is removed. A target the pipeline did
        not declare raises `UndeclaredJumpError`; taking one jump more than
        `max_jumps_per_edge` times raises `JumpLimitError` (both are
        `PassPipelineError`s). A failing pass raises `PassPipelineError`.
        """
        given = cast(object, op)  # callers may be untyped
        if not isinstance(given, ir.Operation):
            shown = f"{type(given).__name__} {given!r}"
            raise PipelineGraphError(
                f"schedule '{self.name}': run() takes an Operation, got "
                f"{shown[:80]}; fix: parse it first, run(ir.parse_module(text))"
            )
        if pass_manager is None:
            pass_manager = PassManager(ir.operation_name(op).name)
        elif pass_manager.passes:
            raise PipelineGraphError(
                f"cannot run schedule '{self.name}' with a pass manager that already "
                f"holds passes ({pass_manager}); add schedule.as_pass() to it instead"
            )
        runner = self.as_pass()
        pass_manager.add(runner)
        try:
            pass_manager.run(op)
        except PassPipelineError as err:
            if runner.failure is None:
                raise
            raise runner.failure.error(err.diagnostics) from None
        finally:
            pass_manager.clear()
        return runner.trace

    def register(self, argument: str | None = None, summary: str = "") -> None:
        """Register the schedule as a pass pipeline named `argument` (default: its name).

        `builtin.module(<argument>)` then runs it from textual pipelines and
        `passflow-opt --pass-pipeline`, jumps included; each use gets its own copy
        of the passes. `<argument>{max-jumps=50}` overrides the cap on each jump
        edge (default: this schedule's `max_jumps_per_edge`). Raises
        `RegistrationError` if the name is taken.
        """
        name = argument or self.name
        options = options_with_default(self.max_jumps_per_edge)

        def add_schedule(pm: OpPassManager, chosen: ScheduleOptions) -> None:
            schedule = self.clone()
            schedule.max_jumps_per_edge = chosen.max_jumps
            schedule.max_pipeline_runs = chosen.max_runs or self.max_pipeline_runs
            pm.add(
                PipelineSchedulePass(
                    schedule,
                    name,
                    registered_max_jumps=self.max_jumps_per_edge,
                    registered_max_runs=self.max_pipeline_runs,
                )
            )

        registry.register_pipeline(
            name,
            summary or f"Run pipeline schedule '{self.name}'",
            add_schedule,
            options=options,
        )

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

    def to_dot(self) -> str:
        """The graph in Graphviz DOT: dependencies solid, jumps dashed, subgraphs
        as clusters, nodes numbered in run order. Deterministic, for diffing."""
        return export.to_dot(self)

    def to_json(self) -> str:
        """The graph as indented JSON (run order, pass pipelines, dependency and
        jump edges, nested subgraphs). Deterministic, for diffing."""
        return export.to_json(self)


def _run_bound(schedule: PipelineSchedule, factor: int) -> int:
    """The most stage runs of one entry into `schedule` (see `pipeline_run_limit`)."""
    loops = list(schedule.loops())
    total = 0
    for position, pipeline in enumerate(schedule.pipelines):
        around = sum(1 for first, last in loops if first <= position <= last)
        total += _unit_runs(pipeline, factor) * factor**around
    return total


def _unit_runs(pipeline: ScheduledPipeline, factor: int) -> int:
    body = pipeline.body
    if isinstance(body, OpPassManager):
        return 1
    if isinstance(body, PipelineSchedule):
        return _run_bound(body, factor)
    return 1 + sum(_unit_runs(a, factor) for a in body.alternatives)


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
            f" [jumps: {', '.join(pipeline.jump_targets)}]"
            if pipeline.jump_targets
            else ""
        )
        line = f"{pad}  {position} {pipeline.name}: "
        if isinstance(body, PipelineSchedule):
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


def _max_jumps_option(default: int) -> Option[int]:
    return Option(
        default,
        type=UNSIGNED,
        argument="max-jumps",
        help="how many times in a row each jump edge may be taken",
    )


class ScheduleOptions(PipelineOptions):
    """The options of a registered pipeline schedule: `name{max-jumps=50}`, and
    `name{max-runs=1000}` for the run-wide bound (0: the default, derived)."""

    max_jumps = _max_jumps_option(DEFAULT_MAX_JUMPS_PER_EDGE)
    max_runs = Option(
        0,
        type=UNSIGNED,
        argument="max-runs",
        help="how many pipelines one run may run in all (0: derived from the "
        "pipelines, their loops and max-jumps)",
    )


def options_with_default(max_jumps: int) -> type[ScheduleOptions]:
    """`ScheduleOptions` whose `max-jumps` defaults to `max_jumps`."""
    return type(
        "ScheduleOptions",
        (ScheduleOptions,),
        {
            "__doc__": ScheduleOptions.__doc__,
            "max_jumps": _max_jumps_option(max_jumps),
        },
    )
