"""`PipelineSchedule`: a pipeline graph in run order, runnable like a pass manager.

The schedule's data, the pipelines in run order (each an `OpPassManager`, a
nested schedule for a subgraph, or a choice) with the jump targets each may
request, is a `ScheduledGraph` (`scheduled`). `PipelineSchedule` adds what uses
it: it runs as a single pass, `PipelineSchedulePass` (`execution`), that
executes each pipeline as a dynamic pipeline, so a `PassManager` drives the
whole run: instrumentation, timing, IR printing, statistics, verification and
crash reproducers see every stage, exactly as they see any other pass. It
registers as a pass pipeline, and exports as DOT and JSON (`export`).
"""

from __future__ import annotations

from typing import cast

from passflow import ir, registry
from passflow.diagnostics import PassPipelineError
from passflow.graph import export
from passflow.graph.errors import PipelineGraphError
from passflow.graph.execution import PipelineSchedulePass, ScheduleTrace
from passflow.graph.scheduled import DEFAULT_MAX_JUMPS_PER_EDGE, ScheduledGraph
from passflow.manager import OpPassManager
from passflow.options import UNSIGNED, Option, PipelineOptions
from passflow.pass_manager import PassManager

__all__ = [
    "PipelineSchedule",
    "ScheduleOptions",
    "options_with_default",
]


class PipelineSchedule(ScheduledGraph):
    """The pipelines of a graph in run order (what `create_schedule` returns),
    runnable: `run`, `as_pass`, `register`, `to_dot`, `to_json`.

    A subgraph's schedule inside it is a `PipelineSchedule` too. The data and
    its printing (`order`, `index`, `pretty`, ...) are `ScheduledGraph`'s.
    """

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

    # --- exporting ------------------------------------------------------------

    def to_dot(self) -> str:
        """The graph in Graphviz DOT: dependencies solid, jumps dashed, subgraphs
        as clusters, nodes numbered in run order. Deterministic, for diffing."""
        return export.to_dot(self)

    def to_json(self) -> str:
        """The graph as indented JSON (run order, pass pipelines, dependency and
        jump edges, nested subgraphs). Deterministic, for diffing."""
        return export.to_json(self)


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
