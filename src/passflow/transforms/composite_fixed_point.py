"""`composite-fixed-point-pass`: run a pipeline until the IR stops changing
(MLIR's CompositeFixedPointPass)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from passflow.diagnostics import (
    Diagnostic,
    OptionError,
    PipelineParseError,
    Severity,
)
from passflow.ir import fingerprint
from passflow.manager import OpPassManager
from passflow.options import INT, Option
from passflow.pass_base import OperationPass
from passflow.pipeline_text import parse_pass_pipeline_into

__all__ = ["CompositeFixedPointPass"]

_P = TypeVar("_P", bound="CompositeFixedPointPass")


class CompositeFixedPointPass(OperationPass):
    """Run the `pipeline` option's passes on the op again and again until a run
    leaves the IR as it found it, at most `max-iterations` + 1 runs.

    The pipeline is parsed when the options are (a pipeline that does not parse
    fails the pipeline's construction, as in mlir-opt) and runs as a dynamic
    pipeline, so instrumentation, timing and action logging see each round. The
    IR is compared by `passflow.ir.fingerprint`, MLIR's OperationFingerPrint.
    When the pipeline has run `max-iterations` + 1 times, MLIR's warning is
    emitted on the op whether or not the last run changed it, as mlir-opt does.
    Reports name the pass by its `name` option.
    """

    name = "CompositeFixedPointPass"
    argument = "composite-fixed-point-pass"
    summary = "Composite fixed point pass"
    description = """\
Composite pass runs provided set of passes until fixed point or maximum
number of iterations reached.
"""

    display = Option(
        "CompositeFixedPointPass", argument="name", help="Composite pass display name"
    )
    pipeline = Option("", help="Composite pass inner pipeline")
    max_iterations = Option(
        10, type=INT, help="Maximum number of iterations if inner pipeline"
    )

    _parsed: tuple[str, OpPassManager] | None = None

    def initialize_options(self, text: str) -> None:
        """Apply the options, then parse the pipeline so a bad one fails now."""
        super().initialize_options(text)
        try:
            self.inner_pipeline()
        except PipelineParseError as err:
            raise OptionError(
                f"{str(err).rstrip()}\n"
                "<unknown>:0: error: Failed to parse composite pass pipeline",
                printed_by_cl=True,  # mlir-opt writes both straight to stderr
            ) from err

    @property
    def display_name(self) -> str:
        return self.display

    def inner_pipeline(self) -> OpPassManager:
        """The `pipeline` option as a pass manager on any op (parsed once per text)."""
        parsed = self._parsed
        if parsed is None or parsed[0] != self.pipeline:
            pm = OpPassManager("any")
            parse_pass_pipeline_into(self.pipeline, pm)
            parsed = self._parsed = (self.pipeline, pm)
        return parsed[1]

    def get_dependent_dialects(self) -> Iterable[str]:
        return self.inner_pipeline().dependent_dialects()

    def run_on_operation(self) -> None:
        if self.max_iterations <= 0:
            # mlir-opt reports this once, from `initialize`, and prints the value
            # as garbage; passflow reports it on each op, at unknown location.
            message = f"Invalid maxIterations value: {self.max_iterations}"
            self.emit_diagnostic(Diagnostic(Severity.ERROR, message))
            self.signal_pass_failure()
            return
        op = self.get_operation()
        pipeline = self.inner_pipeline()
        before = fingerprint(op)
        runs = 0
        while True:
            if not self.run_pipeline(pipeline, op):
                self.signal_pass_failure()
                return
            if runs >= self.max_iterations:
                self.emit_warning(
                    op,
                    f'Composite pass "{self.display}"+ didn\'t converge in '
                    f"{self.max_iterations} iterations",
                )
                return
            runs += 1
            after = fingerprint(op)
            if after == before:
                return
            before = after

    def clone(self: _P) -> _P:
        new = super().clone()
        new._parsed = None  # each copy parses its own, never sharing passes
        return new
