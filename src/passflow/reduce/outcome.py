"""What one run of a candidate did: the facts an interestingness test reads.

A candidate is IR (text, or a module of its own) and a pipeline.
`run_candidate` parses, verifies and runs it as `passflow-opt` would (serially,
so the run is deterministic), and records what the run said rather than
printing it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from passflow import ir, verifier
from passflow.actions import Action, DebugCounter, PassExecutionAction, Transform
from passflow.diagnostics import (
    Diagnostic,
    IRParseError,
    PassflowError,
    PassPipelineError,
    Severity,
)
from passflow.manager import Nesting, OpPassManager, OpToOpPassAdaptor
from passflow.pass_base import Pass
from passflow.pass_manager import PassManager
from passflow.pipeline_text import parse_pass_pipeline

__all__ = [
    "Candidate",
    "CandidateMaker",
    "Crash",
    "Execution",
    "RunOutcome",
    "Stage",
    "parse_verified",
    "run_candidate",
]

_CRASH = re.compile(r"pass '(?P<pass_>[^']+)' crashed on '[^']+' op: (?P<kind>\w+):")


@dataclass(frozen=True)
class Candidate:
    """IR and the pipeline to run on it (MLIR's textual pipeline syntax,
    anchored on the top-level op).

    The IR is text, or a module the run may change (a copy made for it: in a
    forked process, the process's own). `source_name` is the file name
    diagnostics give; `execution_limit`, when set, runs only the first that
    many pass executions and skips the rest, as LLVM's `-opt-bisect-limit`
    does."""

    ir: str | ir.Operation
    pipeline: str
    source_name: str = "<reduce>"
    execution_limit: int | None = None

    def text(self) -> str:
        """The IR as text."""
        return self.ir if isinstance(self.ir, str) else ir.print_op(self.ir) + "\n"


CandidateMaker = Callable[[bool], "Candidate | None"]
"""Makes a candidate when it is tried: with True it may change the reducer's
current IR in place (it runs in a forked copy), with False it must copy it.
None: the edit it stands for cannot be made."""


class Stage(Enum):
    """Where a run stopped."""

    PARSE = "the input does not parse"
    VERIFY = "the input does not verify"
    PIPELINE = "the pipeline is malformed"
    RUN = "the pipeline failed"
    DONE = "the pipeline succeeded"


@dataclass(frozen=True)
class Crash:
    """A pass that raised: its name and the exception's type name."""

    pass_name: str
    exception: str


@dataclass(frozen=True)
class Execution:
    """One pass execution: the pass inside its nests as a one-line pipeline,
    and the op it ran on (its symbol, when it has one, is what a reader finds
    in the file: `@f5` rather than a line number)."""

    pipeline: str
    op_name: str
    location: str
    symbol: str | None = None

    @property
    def op(self) -> str:
        """The op as a reader names it: `'func.func' @f5`, or `'scf.for'`."""
        named = f"'{self.op_name}'"
        return named if self.symbol is None else f"{named} @{self.symbol}"


def _pipeline_to(pm: OpPassManager, target: Pass) -> str | None:
    for pass_ in pm.passes:
        if pass_ is target:
            return f"{pm.textual_anchor}({pass_})"
        if isinstance(pass_, OpToOpPassAdaptor):
            for nested in pass_.managers:
                inner = _pipeline_to(nested, target)
                if inner is not None:
                    return f"{pm.textual_anchor}({inner})"
    return None


class _LimitedExecutions:
    """Runs the first `limit` pass executions and skips the rest, counted by a
    `DebugCounter` as `--mlir-debug-counter=pass-execution-count=N` counts
    them; remembers the last one it ran."""

    def __init__(self, pm: OpPassManager, limit: int) -> None:
        self.pm = pm
        self.counter = DebugCounter()
        self.counter.add_counter(PassExecutionAction.tag, 0, limit)
        self.last: Execution | None = None

    def __call__(self, transform: Transform, action: Action, /) -> None:
        if not self.counter.should_execute(action.tag):
            return
        if isinstance(action, PassExecutionAction) and not action.is_adaptor:
            pipeline = _pipeline_to(self.pm, action.pass_) or str(action.pass_)
            name = ir.operation_name(action.op).name
            self.last = Execution(
                pipeline,
                name,
                str(ir.location(action.op)),
                ir.symbol_name(action.op),
            )
        transform()

    @property
    def seen(self) -> int:
        return self.counter.counters[PassExecutionAction.tag].count


@dataclass(frozen=True)
class RunOutcome:
    """The run of one candidate.

    `stage` is where it stopped (`Stage.DONE`: every pass succeeded);
    `errors` the messages of its error diagnostics, in order; `crash` the first
    pass that raised; `final_verifier_error` the verifier's message on the IR
    the pipeline left (only when the run was asked to check it); `output` that
    IR printed (only when asked for). With an execution limit, `executions`
    counts the pass executions the run reached and `last_execution` is the
    last one it ran."""

    stage: Stage
    errors: tuple[str, ...] = ()
    crash: Crash | None = None
    final_verifier_error: str | None = None
    output: str | None = None
    executions: int = 0
    last_execution: Execution | None = None

    @property
    def first_error(self) -> str | None:
        return self.errors[0] if self.errors else None


def _crash_of(diagnostic: Diagnostic) -> Crash | None:
    match = _CRASH.match(diagnostic.message)
    if match is None:
        return None
    return Crash(match["pass_"], match["kind"])


def parse_verified(candidate: Candidate, ctx: ir.Context) -> ir.Operation | RunOutcome:
    """The candidate's IR, parsed and verified as `passflow-opt` does before
    the pipeline, or the outcome of a run that stops there."""
    if isinstance(candidate.ir, str):
        try:
            top = ir.parse_module(candidate.ir, ctx, candidate.source_name)
        except IRParseError as err:
            return RunOutcome(Stage.PARSE, (err.diagnostic.message,))
    else:
        top = candidate.ir
    problem = verifier.verify(top)
    if problem is not None:
        return RunOutcome(Stage.VERIFY, (problem.message,))
    return top


def run_candidate(
    candidate: Candidate,
    *,
    allow_unregistered: bool = False,
    verify_each: bool = True,
    verify_result: bool = False,
    print_result: bool = False,
) -> RunOutcome:
    """Run `candidate` and say what happened; never raises for bad input."""
    ctx = ir.default_context(allow_unregistered=allow_unregistered)
    top = parse_verified(candidate, ctx)
    if isinstance(top, RunOutcome):
        return top
    try:
        pipeline = parse_pass_pipeline(candidate.pipeline)
    except PassflowError as err:
        return RunOutcome(Stage.PIPELINE, (str(err),))
    pm = PassManager(ir.operation_name(top).name, ctx, nesting=Nesting.IMPLICIT)
    errors: list[str] = []
    crashes: list[Crash] = []

    def collect(diagnostic: Diagnostic) -> None:
        if diagnostic.severity is Severity.ERROR:
            errors.append(diagnostic.message)
            crash = _crash_of(diagnostic)
            if crash is not None:
                crashes.append(crash)

    pm.add_diagnostic_handler(collect)
    pm.enable_verifier(verify_each)
    pm.assign(pipeline)
    limited = None
    if candidate.execution_limit is not None:
        limited = _LimitedExecutions(pm, candidate.execution_limit)
        pm.register_action_handler(limited)
    stage = Stage.DONE
    try:
        pm.run(top)
    except PassPipelineError:
        stage = Stage.RUN
    except PassflowError as err:
        return RunOutcome(Stage.PIPELINE, (str(err),))
    final = verifier.verify(top) if verify_result and stage is Stage.DONE else None
    printed = print_result and stage is Stage.DONE
    return RunOutcome(
        stage,
        tuple(errors),
        crashes[0] if crashes else None,
        final.message if final is not None else None,
        ir.print_op(top) + "\n" if printed else None,
        0 if limited is None else limited.seen,
        None if limited is None else limited.last,
    )
