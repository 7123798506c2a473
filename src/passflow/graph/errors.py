"""The errors of `passflow.graph`, each naming the pipelines involved.

Building a graph fails early and by name, where numba-mlir's registry threw
generic exceptions and silently ignored bad jumps::

    PassflowError
    └── PipelineGraphError            any misuse of a PipelineGraph or its schedule
        ├── PipelineNameError         a name is empty, malformed or registered twice
        ├── UnknownPipelineError      an edge or jump target names no pipeline
        ├── SubgraphBoundaryError     an edge or jump crosses into or out of a subgraph
        ├── ChoiceError               an edge or jump would let two alternatives of
        │                             a choice run, or a choice is malformed
        ├── AmbiguousJumpError        a jump whose meaning depends on the
        │   │                         registration order (a branch: use register_choice)
        │   └── SkippedPredecessorError   a forward jump skips a predecessor of its target
        ├── PipelineCycleError        predecessors/successors form a cycle
        └── ScheduleRunError          a run stopped because of a jump (also a
            │                         PassPipelineError, so `except PassPipelineError`
            │                         still catches every failed run)
            ├── UndeclaredJumpError   pipeline.jump_target names an undeclared target
            ├── ChoiceSelectionError  a choice picked no alternative, or a wrong one
            └── JumpLimitError        a jump edge was taken more often than allowed
"""

from __future__ import annotations

from passflow.diagnostics import Diagnostic, PassflowError, PassPipelineError

__all__ = [
    "AmbiguousJumpError",
    "ChoiceError",
    "ChoiceSelectionError",
    "JumpLimitError",
    "PipelineCycleError",
    "PipelineGraphError",
    "PipelineNameError",
    "ScheduleRunError",
    "SkippedPredecessorError",
    "SubgraphBoundaryError",
    "UndeclaredJumpError",
    "UnknownPipelineError",
]


class PipelineGraphError(PassflowError):
    """Base of every error raised by `passflow.graph`."""


class PipelineNameError(PipelineGraphError):
    """A pipeline name is empty, contains `/`, or is already registered in the graph."""


class UnknownPipelineError(PipelineGraphError):
    """A predecessor, successor or jump target names no pipeline of the graph."""


class SubgraphBoundaryError(PipelineGraphError):
    """An edge or jump names a pipeline inside another subgraph, or outside this one.

    A subgraph runs as one unit: other pipelines may depend on it or jump to it,
    never to one of its members, and its members see only each other.
    """


class ChoiceError(PipelineGraphError):
    """A choice is malformed, or an edge or jump would break its promise that
    exactly one alternative runs and the run then continues at its join: two
    alternatives ordered against each other, a jump into an alternative, a
    jump from one alternative to another."""


class AmbiguousJumpError(PipelineGraphError):
    """A jump would mean different things in different registration orders: it
    goes back in some and ahead in others, it is a branch (it skips a pipeline in
    some orders and not in others: declare a choice with `register_choice`), or
    the loop it closes reruns a pipeline in some orders only."""


class SkippedPredecessorError(AmbiguousJumpError):
    """A forward jump would skip a pipeline declared to run before its target, so
    the target could run without it (what `register_choice` is for)."""


class PipelineCycleError(PipelineGraphError):
    """Predecessors and successors form a cycle, so no order satisfies them.

    `cycle` lists the pipelines along the cycle, first one repeated at the end
    (`("a", "b", "a")`). A loop that is meant to happen is a jump target.
    """

    def __init__(self, message: str, cycle: tuple[str, ...]) -> None:
        super().__init__(message)
        self.cycle = cycle


class ScheduleRunError(PassPipelineError, PipelineGraphError):
    """A schedule's run was aborted by a jump rather than by a failing pass.

    `pipeline` is the qualified name (`subgraph/member`) of the pipeline after
    which the jump was requested, or None when `pipeline.jump_target` was already
    set before the first pipeline ran; `target` is the requested target.
    `diagnostics` holds every diagnostic of the run, as in `PassPipelineError`.
    """

    def __init__(
        self, diagnostics: list[Diagnostic], pipeline: str | None, target: str
    ) -> None:
        super().__init__(diagnostics)
        self.pipeline = pipeline
        self.target = target


class UndeclaredJumpError(ScheduleRunError):
    """`pipeline.jump_target` named a pipeline that is not one of the jump targets
    declared by the pipeline that just ran (numba-mlir ignored these silently)."""


class ChoiceSelectionError(ScheduleRunError):
    """A choice picked no alternative, or something that is not one of its
    alternatives; `pipeline` is the choice, `target` what was picked."""


class JumpLimitError(ScheduleRunError):
    """A jump edge was taken more times than the schedule's `max_jumps_per_edge`,
    which turns a loop that never converges into an error instead of a hang."""
