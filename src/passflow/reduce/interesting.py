"""Interestingness tests: does a candidate still show the failure?

A reduction keeps a change only while its test still holds. The tests here are
the failures a pass pipeline has: the same error diagnostic, a crash of the same
pass, IR the verifier rejects after the pipeline, or a user command's exit
status (0: interesting, as for `llvm-reduce` and C-Reduce).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, Self

from passflow import ir
from passflow.diagnostics import PassflowError
from passflow.instruments.reproducer import format_reproducer
from passflow.reduce.command import (
    CommandNotRunError,
    ScratchDirectory,
    command_succeeds,
)
from passflow.reduce.outcome import (
    Candidate,
    RunOutcome,
    Stage,
    parse_verified,
    run_candidate,
)

__all__ = [
    "CommandStatus",
    "Interestingness",
    "NotInterestingError",
    "PassCrash",
    "RunSettings",
    "SameDiagnostic",
    "SilentFailure",
    "VerifierFailure",
    "default_test",
]


class NotInterestingError(PassflowError):
    """A reduction that cannot start or go on: the input does not show the
    failure the test looks for, or the test itself cannot run."""


@dataclass(frozen=True)
class RunSettings:
    """How candidates run: what `passflow-opt` was told besides the pipeline."""

    allow_unregistered: bool = False
    verify_each: bool = True

    def run(
        self,
        candidate: Candidate,
        *,
        verify_result: bool = False,
        print_result: bool = False,
    ) -> RunOutcome:
        return run_candidate(
            candidate,
            allow_unregistered=self.allow_unregistered,
            verify_each=self.verify_each,
            verify_result=verify_result,
            print_result=print_result,
        )

    def is_valid(self, candidate: Candidate) -> bool:
        """Whether the candidate's IR parses and verifies."""
        ctx = ir.default_context(allow_unregistered=self.allow_unregistered)
        return not isinstance(parse_verified(candidate, ctx), RunOutcome)


class Interestingness(Protocol):
    """A test a candidate passes while it still shows the failure."""

    @property
    def description(self) -> str:
        """What the test looks for, for the tool's report."""
        ...

    def __call__(self, candidate: Candidate) -> bool: ...


@dataclass(frozen=True)
class SameDiagnostic:
    """The pipeline fails with an error whose message contains `text`."""

    text: str
    settings: RunSettings = RunSettings()

    @property
    def description(self) -> str:
        return f"an error containing '{self.text}'"

    def __call__(self, candidate: Candidate) -> bool:
        outcome = self.settings.run(candidate)
        return outcome.stage is Stage.RUN and any(
            self.text in error for error in outcome.errors
        )


@dataclass(frozen=True)
class PassCrash:
    """Pass `pass_name` raises (an exception of type `exception`, if given)."""

    pass_name: str
    exception: str | None = None
    settings: RunSettings = RunSettings()

    @property
    def description(self) -> str:
        kind = f" with {self.exception}" if self.exception else ""
        return f"a crash of pass '{self.pass_name}'{kind}"

    def __call__(self, candidate: Candidate) -> bool:
        crash = self.settings.run(candidate).crash
        return (
            crash is not None
            and crash.pass_name == self.pass_name
            and self.exception in (None, crash.exception)
        )


@dataclass(frozen=True)
class SilentFailure:
    """The pipeline fails without saying why (a pass signalled failure only)."""

    settings: RunSettings = RunSettings()

    @property
    def description(self) -> str:
        return "a pipeline failure with no error message"

    def __call__(self, candidate: Candidate) -> bool:
        outcome = self.settings.run(candidate)
        return outcome.stage is Stage.RUN and not outcome.errors


@dataclass(frozen=True)
class VerifierFailure:
    """The pipeline succeeds (unverified between passes) and leaves IR the
    verifier rejects, with a message containing `text` if given."""

    text: str | None = None
    settings: RunSettings = RunSettings()

    @property
    def description(self) -> str:
        what = f" containing '{self.text}'" if self.text else ""
        return f"a verifier error{what} after the pipeline"

    def __call__(self, candidate: Candidate) -> bool:
        unverified = RunSettings(self.settings.allow_unregistered, verify_each=False)
        error = unverified.run(candidate, verify_result=True).final_verifier_error
        return error is not None and (self.text is None or self.text in error)


@dataclass(frozen=True)
class CommandStatus:
    """`argv` followed by the path of the candidate, written as a reproducer,
    exits with status 0. The command is the user's, named on the command line;
    it runs with its output discarded, in a process group of its own, and the
    group is killed when the command exits, after `timeout` seconds, or when
    the process testing the candidate goes (`passflow.reduce.command`).

    Candidate files live in one private directory, made with the test and
    removed by `close()` (or with the test: use it in a `with` block).

    IR that does not parse or verify is never shown to the command. For a
    candidate with an execution limit (bisection), the command is given the IR
    the pipeline produced instead: a test of the compiler's output."""

    argv: Sequence[str]
    timeout: float = 60.0
    settings: RunSettings = RunSettings()
    scratch: ScratchDirectory = field(
        default_factory=ScratchDirectory, init=False, repr=False, compare=False
    )

    @property
    def description(self) -> str:
        return f"'{' '.join(self.argv)} FILE' exiting with status 0"

    def __call__(self, candidate: Candidate) -> bool:
        if candidate.execution_limit is not None:
            output = self.settings.run(candidate, print_result=True).output
            if output is None:
                return False
            return self._status(output)
        if not self.settings.is_valid(candidate):
            return False
        return self._status(
            format_reproducer(
                candidate.text(),
                candidate.pipeline,
                disable_threading=True,
                verify_each=self.settings.verify_each,
            )
        )

    def close(self) -> None:
        """Remove the candidate files' directory."""
        self.scratch.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _status(self, content: str) -> bool:
        try:
            return command_succeeds(self.argv, content, self.scratch.path, self.timeout)
        except CommandNotRunError as err:
            raise NotInterestingError(str(err)) from err


def default_test(candidate: Candidate, settings: RunSettings) -> Interestingness:
    """The test that keeps what the original run showed: its crash, else its
    first error, else its silent failure. Raises `NotInterestingError` when the
    original succeeds or never reaches the pipeline."""
    outcome = settings.run(candidate)
    if outcome.stage is Stage.DONE:
        raise NotInterestingError(
            "the pipeline succeeds on the input, so there is no failure to reduce"
        )
    if outcome.stage is not Stage.RUN:
        detail = f": {outcome.first_error}" if outcome.first_error else ""
        raise NotInterestingError(f"{outcome.stage.value}{detail}")
    if outcome.crash is not None:
        return PassCrash(outcome.crash.pass_name, outcome.crash.exception, settings)
    if outcome.first_error is not None:
        return SameDiagnostic(outcome.first_error, settings)
    return SilentFailure(settings)
