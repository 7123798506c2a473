"""Running a schedule: the pass that follows jumps, and the trace of what ran.

`PipelineSchedulePass` runs each scheduled pipeline with `Pass.run_pipeline`,
MLIR's dynamic pass pipeline, on the op the pass runs on. So every stage shares
the enclosing `PassManager.run`: its instrumentation sees each stage as a nested
pipeline whose parent pass is the schedule pass, and timing, IR printing,
statistics, verification and reproducers treat the stages' passes as any other.
The pass runs the schedule's data (`scheduled.ScheduledGraph`); the schedule
that makes it (`schedule.PipelineSchedule.as_pass`) sits above this module.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from xdsl.dialects.builtin import StringAttr

from passflow import ir
from passflow.diagnostics import Diagnostic, Severity
from passflow.graph.errors import (
    ChoiceSelectionError,
    JumpLimitError,
    ScheduleRunError,
    UndeclaredJumpError,
)
from passflow.graph.scheduled import ScheduledChoice, ScheduledGraph, ScheduledPipeline
from passflow.ir import Operation, OperationName
from passflow.manager import OpPassManager
from passflow.pass_base import OperationPass, PassPipeline
from passflow.statistics import Statistic

__all__ = [
    "JUMP_TARGET_ATTRIBUTE",
    "AlternativeChosen",
    "JumpTaken",
    "LoopStopped",
    "PipelineRan",
    "PipelineSchedulePass",
    "ScheduleFailure",
    "ScheduleTrace",
    "TraceEvent",
]

JUMP_TARGET_ATTRIBUTE = "pipeline.jump_target"
"""The string attribute a pass sets on the top-level op to request a jump."""


@dataclass(frozen=True)
class PipelineRan:
    """A pipeline was run; `pipeline` is qualified (`subgraph/member`)."""

    pipeline: str

    def __str__(self) -> str:
        return f"run  {self.pipeline}"


@dataclass(frozen=True)
class JumpTaken:
    """After `source` finished, the run continued at `target` (both qualified)."""

    source: str
    target: str

    def __str__(self) -> str:
        return f"jump {self.source} -> {self.target}"


@dataclass(frozen=True)
class AlternativeChosen:
    """Choice `choice` picked `alternative`, which runs next (both qualified)."""

    choice: str
    alternative: str

    def __str__(self) -> str:
        return f"pick {self.choice} -> {self.alternative}"


@dataclass(frozen=True)
class LoopStopped:
    """`source` requested the jump to `target` once more than the per-edge cap
    allows, and its `on_cap` policy (`warn` or `silent`) stopped the loop there:
    the run went on after `source`. `reason` names why the loop stopped."""

    source: str
    target: str
    jumps: int
    policy: str
    reason: str = "max-jumps"

    def __str__(self) -> str:
        return (
            f"stop {self.source} -> {self.target}: {self.reason} ({self.jumps}), "
            f"on_cap={self.policy}"
        )


TraceEvent = PipelineRan | JumpTaken | AlternativeChosen | LoopStopped


@dataclass
class ScheduleTrace:
    """What one run did, in order: every pipeline run and every jump taken."""

    events: list[TraceEvent] = field(default_factory=lambda: list[TraceEvent]())

    @property
    def executed(self) -> tuple[str, ...]:
        """The qualified names of the pipelines run, in order, repeats included."""
        return tuple(e.pipeline for e in self.events if isinstance(e, PipelineRan))

    @property
    def jumps(self) -> tuple[JumpTaken, ...]:
        return tuple(e for e in self.events if isinstance(e, JumpTaken))

    @property
    def stops(self) -> tuple[LoopStopped, ...]:
        """The loops an `on_cap` policy of `warn` or `silent` stopped, in order."""
        return tuple(e for e in self.events if isinstance(e, LoopStopped))

    @property
    def choices(self) -> tuple[AlternativeChosen, ...]:
        """The alternative each choice picked, in order."""
        return tuple(e for e in self.events if isinstance(e, AlternativeChosen))

    def __str__(self) -> str:
        """One event per line (`run  frontend`, `jump a -> b`, `pick c -> a`,
        `stop b -> a: ...`), for reading and diffing."""
        return "\n".join(str(e) for e in self.events)


@dataclass(frozen=True)
class ScheduleFailure:
    """Why the schedule pass aborted a run, kept so the caller can raise the
    matching `ScheduleRunError` with the run's diagnostics."""

    kind: type[ScheduleRunError]
    pipeline: str | None
    target: str

    def error(self, diagnostics: list[Diagnostic]) -> ScheduleRunError:
        return self.kind(diagnostics, self.pipeline, self.target)


class PipelineSchedulePass(OperationPass):
    """Runs a schedule (a `ScheduledGraph`, as a `PipelineSchedule` is) on its
    op, following `pipeline.jump_target`.

    Made by `PipelineSchedule.as_pass` (and by a registered schedule's pipeline).
    After a run, `trace` holds what ran and `failure` why the run was aborted,
    if a jump aborted it. While a stage runs, `current_pipeline` names it, so an
    instrumentation can tell stages apart (`parent.parent_pass.current_pipeline`
    in `run_before_pipeline`).
    """

    name = "PipelineSchedule"
    summary = "Run a pipeline schedule, following its run-time jumps"

    pipelines_run = Statistic("pipelines-run", "Number of pipelines run")
    jumps_taken = Statistic("jumps-taken", "Number of jumps taken")

    def __init__(
        self,
        schedule: ScheduledGraph,
        argument: str,
        *,
        registered_max_jumps: int | None = None,
        registered_max_runs: int | None = None,
    ) -> None:
        super().__init__()
        self.schedule = schedule
        self._argument = argument
        self.registered_max_jumps = registered_max_jumps
        """The cap the pipeline registered as `argument` defaults to, if this pass
        came from it: a different cap prints as `{max-jumps=N}`."""
        self.registered_max_runs = registered_max_runs
        """Likewise for the run-wide bound (`{max-runs=N}`); None: derived."""
        self.trace = ScheduleTrace()
        self.failure: ScheduleFailure | None = None
        self.current_pipeline: str | None = None
        self._runs_left = 0

    def can_schedule_on(self, name: OperationName) -> bool:
        anchor = self.schedule.anchor
        return anchor == "any" or name.name == anchor

    def stages(self) -> list[tuple[str, OpPassManager]]:
        """Every stage's pass manager with its qualified name, in schedule order."""
        return list(self.schedule.pass_managers())

    def nested_pipelines(self) -> list[OpPassManager]:
        """The stages' pass managers, in schedule order: the pipelines this pass
        runs dynamically, which walks of the pass tree (statistics, clones)
        descend into."""
        return [pm for _, pm in self.schedule.pass_managers()]

    def pipeline_label(self, pipeline: PassPipeline) -> str:
        """A stage is named by its qualified name in timing and statistics
        (`'gpu/outline' Stage`), so that the report tells stages apart."""
        for name, stage in self.schedule.pass_managers():
            if stage is pipeline:
                return f"'{name}' Stage"
        return super().pipeline_label(pipeline)

    def get_dependent_dialects(self) -> list[str]:
        """Every stage's dialects, loaded before the run as for nested pipelines."""
        return [d for pm in self.nested_pipelines() for d in pm.dependent_dialects()]

    def clone(self) -> PipelineSchedulePass:
        return PipelineSchedulePass(
            self.schedule.clone(),
            self._argument,
            registered_max_jumps=self.registered_max_jumps,
            registered_max_runs=self.registered_max_runs,
        )

    def __str__(self) -> str:
        if self.registered_max_jumps is None:
            return self._argument
        options: list[str] = []
        cap = self.schedule.max_jumps_per_edge
        if cap != self.registered_max_jumps:
            options.append(f"max-jumps={cap}")
        runs = self.schedule.max_pipeline_runs
        if runs != self.registered_max_runs:
            options.append(f"max-runs={runs or 0}")
        return self._argument + (f"{{{' '.join(options)}}}" if options else "")

    def pretty(self, indent: int = 0) -> str:
        """The numbered schedule under this pass's name, as `--dump-pass-pipeline`
        shows it."""
        return self.schedule.pretty(indent, title=self._argument)

    def run_on_operation(self) -> None:
        op = self.get_operation()
        self.trace = ScheduleTrace()
        self.failure = None
        self._runs_left = self.schedule.pipeline_run_limit
        stale = op.attributes.get(JUMP_TARGET_ATTRIBUTE)
        if stale is not None:
            self._fail(
                UndeclaredJumpError,
                None,
                stale,
                f"{JUMP_TARGET_ATTRIBUTE} = {stale} is already set before schedule "
                f"'{self.schedule.name}' started; only its pipelines' passes may set it",
            )
            ok = False
        else:
            ok = self._run_schedule(self.schedule, op, "")
        self.current_pipeline = None
        if not ok:
            self.signal_pass_failure()

    def _run_schedule(
        self, schedule: ScheduledGraph, op: Operation, prefix: str
    ) -> bool:
        """Run `schedule` from its first pipeline, following jumps; False on failure.

        A subgraph (`prefix` set) whose last member requests a target it did not
        declare returns with the request still on the op: the jump then leaves
        from the end of the subgraph, and the subgraph's own targets decide.
        """
        taken: Counter[tuple[str, str]] = Counter()
        pipelines = schedule.pipelines
        index = 0
        while index < len(pipelines):
            ran = self._run_unit(pipelines[index], op, prefix)
            if ran is None:
                return False
            qualified = prefix + ran.name
            requested = op.attributes.get(JUMP_TARGET_ATTRIBUTE)
            if requested is None:
                if self._misplaced_request(op, qualified):
                    return False
                index += 1
                _leave_loops(taken, schedule, index, None)
                continue
            target = requested.data if isinstance(requested, StringAttr) else None
            if target is None or target not in ran.jump_targets:
                if prefix and index == len(pipelines) - 1:
                    return True
                declared = ", ".join(ran.jump_targets) or "none"
                choice = _choice_holding(schedule, target)
                self._fail(
                    UndeclaredJumpError,
                    qualified,
                    requested,
                    f"pipeline '{qualified}' set {JUMP_TARGET_ATTRIBUTE} = "
                    f"{requested}, which is not one of its jump targets ({declared})",
                    note=None
                    if choice is None
                    else f"'{target}' is an alternative of choice '{prefix}{choice}': "
                    "a pass of the choice's own pipeline picks it, or its select",
                )
                return False
            taken[ran.name, target] += 1
            if taken[ran.name, target] > schedule.max_jumps_per_edge:
                loop = _loop(schedule, ran.name, target, prefix)
                if ran.on_cap == "error":
                    self._fail(
                        JumpLimitError,
                        qualified,
                        requested,
                        self._cap_message(qualified, prefix + target, loop),
                    )
                    return False
                self._stop_loop(op, ran.on_cap, qualified, prefix + target, loop)
                index += 1
                _leave_loops(taken, schedule, index, None)
                continue
            del op.attributes[JUMP_TARGET_ATTRIBUTE]
            self.jumps_taken += 1
            self.trace.events.append(JumpTaken(qualified, prefix + target))
            index = schedule.index(target)
            _leave_loops(taken, schedule, index, (ran.name, target))
        return True

    def _stop_loop(
        self, op: Operation, policy: str, source: str, target: str, loop: str
    ) -> None:
        """Stop the loop at its cap and go on after `source`, as the pipeline's
        `on_cap` policy (`warn` or `silent`) asks; the trace records it."""
        del op.attributes[JUMP_TARGET_ATTRIBUTE]
        cap = self.schedule.max_jumps_per_edge
        self.trace.events.append(LoopStopped(source, target, cap, policy))
        if policy == "warn":
            what = loop or f"the jump {source} -> {target}"
            warning = Diagnostic(
                Severity.WARNING,
                f"{what} of schedule '{self.schedule.name}' did not converge in "
                f"{cap} jump{'s' * (cap != 1)}: pipeline '{source}' requested the "
                f"jump to '{target}' again; going on after '{source}' "
                "(on_cap='warn')",
                ir.location(op),
            )
            self.emit_diagnostic(warning)

    def _cap_message(self, source: str, target: str, loop: str | None) -> str:
        """Why the jump `source` -> `target` stops the run, and how to allow more."""
        cap = self.schedule.max_jumps_per_edge
        jumps = f"{cap} jump{'s' * (cap != 1)} per edge"
        edge = f"the jump {source} -> {target} reached the cap of {jumps} of "
        edge += f"schedule '{self.schedule.name}'"
        raise_it = (
            f"raise the cap: create_schedule(max_jumps_per_edge={max(2 * cap, 1)}) "
            f"from Python, or {self._argument}{{max-jumps={max(2 * cap, 1)}}} in "
            "the pipeline text"
        )
        if cap == 0:
            what = f", so {loop} cannot run" if loop else ""
            return (
                f"pipeline '{source}' requested the jump to '{target}', but {edge} "
                f"(jumps are off){what}; to allow it, {raise_it}"
            )
        times = "once" if cap == 1 else f"{cap} times in a row"
        what = f", so {loop} does not converge" if loop else ""
        return (
            f"pipeline '{source}' requested the jump to '{target}' again after "
            f"taking it {times}: {edge}{what}; to allow more, {raise_it}"
        )

    def _run_unit(
        self, pipeline: ScheduledPipeline, op: Operation, prefix: str
    ) -> ScheduledPipeline | None:
        """Run one unit; the pipeline whose jump targets now apply (a choice's
        picked alternative), or None if the run failed."""
        body = pipeline.body
        qualified = prefix + pipeline.name
        if isinstance(body, OpPassManager):
            return pipeline if self._run_stage(body, op, qualified) else None
        if body.kind == "choice":
            return self._run_choice(pipeline.name, body, op, prefix)
        return pipeline if self._run_schedule(body, op, qualified + "/") else None

    def _run_stage(self, body: OpPassManager, op: Operation, qualified: str) -> bool:
        if self._runs_left <= 0:
            self._fail(JumpLimitError, qualified, "", self._bound_message(qualified))
            return False
        self._runs_left -= 1
        self.current_pipeline = qualified
        self.trace.events.append(PipelineRan(qualified))
        self.pipelines_run += 1
        return self.run_pipeline(body, op)

    def _run_choice(
        self, name: str, choice: ScheduledChoice, op: Operation, prefix: str
    ) -> ScheduledPipeline | None:
        """Run the choice's own pipeline, then the one alternative it picks."""
        qualified = prefix + name
        if not self._run_stage(choice.selector, op, qualified):
            return None
        requested = op.attributes.get(JUMP_TARGET_ATTRIBUTE)
        picked: object = None
        if requested is not None:
            picked = requested.data if isinstance(requested, StringAttr) else None
            how = f"set {JUMP_TARGET_ATTRIBUTE} = {requested}"
        elif choice.select is not None:
            if self._misplaced_request(op, qualified):
                return None
            try:
                picked = choice.select(op)
            except Exception as err:
                self._fail(
                    ChoiceSelectionError,
                    qualified,
                    StringAttr(""),
                    f"select of choice '{qualified}' raised {type(err).__name__}: {err}",
                )
                return None
            how = f"select returned {picked!r}"
        else:
            if self._misplaced_request(op, qualified):
                return None
            how = f"picked nothing (its passes did not set {JUMP_TARGET_ATTRIBUTE})"
        alternative = choice.alternative(picked) if isinstance(picked, str) else None
        if alternative is None:
            self._fail(
                ChoiceSelectionError,
                qualified,
                requested if requested is not None else StringAttr(str(picked or "")),
                f"choice '{qualified}' {how}, which is not one of its alternatives "
                f"({', '.join(choice.names)})",
            )
            return None
        if requested is not None:
            del op.attributes[JUMP_TARGET_ATTRIBUTE]
        self.trace.events.append(
            AlternativeChosen(qualified, prefix + alternative.name)
        )
        return self._run_unit(alternative, op, prefix)

    def _bound_message(self, pipeline: str) -> str:
        """Why the run-wide bound stops the run before `pipeline`, and how to
        allow more."""
        limit = self.schedule.pipeline_run_limit
        taken = Counter((j.source, j.target) for j in self.trace.jumps)
        listed = ", ".join(
            f"{source} -> {target} ({count} time{'s' * (count != 1)})"
            for (source, target), count in taken.most_common(5)
        )
        cap = self.schedule.max_jumps_per_edge
        return (
            f"schedule '{self.schedule.name}' reached its run-wide bound of {limit} "
            f"pipeline runs (max_pipeline_runs) before '{pipeline}' could run "
            f"again, every jump still within the cap of {cap} per edge (jumps "
            f"taken: {listed or 'none'}); to allow more, raise the bound: "
            f"create_schedule(max_pipeline_runs={2 * limit}) from Python, or "
            f"{self._argument}{{max-runs={2 * limit}}} in the pipeline text, or "
            "leave it unset: the default never stops a run the per-edge cap allows"
        )

    def _misplaced_request(self, op: Operation, qualified: str) -> bool:
        """Fail if a pass set the jump attribute on an op nested in the
        schedule's op, where no jump would ever read it."""
        nested = next(
            (
                o
                for o in op.walk()
                if o is not op and JUMP_TARGET_ATTRIBUTE in o.attributes
            ),
            None,
        )
        if nested is None:
            return False
        requested = nested.attributes[JUMP_TARGET_ATTRIBUTE]
        self._fail(
            UndeclaredJumpError,
            qualified,
            requested,
            f"pipeline '{qualified}' set {JUMP_TARGET_ATTRIBUTE} = {requested} on a "
            f"nested '{nested.name}' op, where no jump reads it; a jump is "
            f"requested on the '{op.name}' op the schedule runs on",
        )
        here = Diagnostic(
            Severity.ERROR,
            f"{JUMP_TARGET_ATTRIBUTE} set here is ignored",
            ir.location(nested),
        )
        here.attach_note(
            "fix: set it on the schedule's op (from a nested pass, on the ancestor "
            "the schedule runs on), or nest the schedule on this op"
        )
        self.emit_diagnostic(here)
        return True

    def _fail(
        self,
        kind: type[ScheduleRunError],
        pipeline: str | None,
        requested: object,
        message: str,
        note: str | None = None,
    ) -> None:
        """Report `message` (and `note`) at the op and keep what the caller's
        error needs; `requested` is the attribute found (a non-string one keeps
        its text)."""
        error = Diagnostic(Severity.ERROR, message, ir.location(self.get_operation()))
        if note is not None:
            error.attach_note(note)
        self.emit_diagnostic(error)
        target = requested.data if isinstance(requested, StringAttr) else str(requested)
        self.failure = ScheduleFailure(kind, pipeline, target)


def _choice_holding(schedule: ScheduledGraph, name: str | None) -> str | None:
    """The choice of `schedule` that has an alternative called `name`, if any."""
    for pipeline in schedule.pipelines:
        body = pipeline.body
        if (
            not isinstance(body, OpPassManager)
            and body.kind == "choice"
            and name in body.names
        ):
            return pipeline.name
    return None


def _leave_loops(
    taken: Counter[tuple[str, str]],
    schedule: ScheduledGraph,
    index: int,
    jump: tuple[str, str] | None,
) -> None:
    """Forget the count of every loop the run has left, now at `index`.

    A backward jump from `source` to `target` loops over the pipelines between
    them; its cap counts the iterations of one visit to that loop. A visit
    ends when the run goes on past `source`, or when a jump (`jump`, as
    (source, target)) of an enclosing loop, one that holds this loop and more,
    is taken: that starts the next iteration of the outer loop, which enters the
    inner one afresh. A jump back from a loop that only overlaps this one does
    not end the visit, so two overlapping loops cannot keep restarting each
    other's count: some loop always reaches its cap (the loop with the last
    source, and of those the one reaching furthest back, is never restarted by
    another, so the run cannot go on forever).
    """
    outer = None
    if jump is not None:
        outer = (schedule.index(jump[1]), schedule.index(jump[0]))
    for edge in list(taken):
        first, last = schedule.index(edge[1]), schedule.index(edge[0])
        if index > last or (
            outer is not None
            and edge != jump
            and outer[0] <= first <= last <= outer[1]
            and outer != (first, last)
        ):
            del taken[edge]


def _loop(schedule: ScheduledGraph, source: str, target: str, prefix: str) -> str:
    """`the loop from 'b' to 'c'` for a backward jump, "" for a forward one."""
    if schedule.index(target) > schedule.index(source):
        return ""
    first = schedule.pipelines[schedule.index(target)].name
    last = schedule.pipelines[schedule.index(source)].name
    return f"the loop from '{prefix}{first}' to '{prefix}{last}'"
