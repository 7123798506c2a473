"""Diagnostics and the exception tree.

Every error passflow raises derives from `PassflowError`::

    PassflowError
    ├── PassPipelineError        a run failed; carries every diagnostic of the run
    ├── PipelineParseError       textual pipeline text is malformed or names nothing
    │                            (also a ValueError, as in MLIR's Python bindings)
    ├── PassNestingError         an op-restricted pass added to the wrong pass manager
    ├── OptionError              a pass or pipeline option string is invalid
    ├── RegistrationError        a pass or pipeline name is taken or malformed
    ├── IRParseError             .mlir text does not parse
    ├── InstrumentationError     a hook of a PassInstrumentation raised
    ├── BuilderError             a PipelineBuilder mis-composition (passflow.builder):
    │                            AnchorNotFoundError, AmbiguousAnchorError,
    │                            OrderingError ─ ContradictionError
    └── PipelineGraphError       misuse of a PipelineGraph (see passflow.graph.errors)

Diagnostics mirror MLIR's: a severity, a message, a location and attached notes.
They print as mlir-opt prints them (`file:line:col: error: message`), so tools and
tests can match them with the same patterns as upstream.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from enum import Enum


class Severity(Enum):
    ERROR = "error"
    WARNING = "warning"
    REMARK = "remark"
    NOTE = "note"


@dataclass(frozen=True)
class Location:
    """A source position; `file=None` is MLIR's unknown location (`<unknown>:0`)."""

    file: str | None = None
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        if self.file is None:
            return "<unknown>:0"
        return f"{self.file}:{self.line}:{self.column}"


UNKNOWN_LOCATION = Location()


@dataclass
class Diagnostic:
    """One message, as MLIR's `Diagnostic`: severity, location, text, notes."""

    severity: Severity
    message: str
    location: Location = UNKNOWN_LOCATION
    notes: list[Diagnostic] = field(default_factory=lambda: list[Diagnostic]())
    operation: object | None = field(default=None, repr=False, compare=False)
    """The op the diagnostic is about, if any (an xDSL `Operation`), for the
    notes an `annotating` block adds; never sent to another process."""

    def __post_init__(self) -> None:
        if _annotators and self.severity is not Severity.NOTE:
            _annotators[-1](self)

    def __getstate__(self) -> dict[str, object]:
        state = dict(self.__dict__)
        state["operation"] = None
        return state

    def attach_note(self, message: str, location: Location | None = None) -> Diagnostic:
        note = Diagnostic(Severity.NOTE, message, location or self.location)
        self.notes.append(note)
        return note

    def __str__(self) -> str:
        lines = [f"{self.location}: {self.severity.value}: {self.message}"]
        lines.extend(str(note) for note in self.notes)
        return "\n".join(lines)


DiagnosticHandler = Callable[[Diagnostic], None]

Annotator = Callable[[Diagnostic], None]
"""Adds notes to a diagnostic as it is made (`annotating`)."""

_annotators: list[Annotator] = []


@contextlib.contextmanager
def annotating(annotator: Annotator) -> Generator[None]:
    """While the block runs, every diagnostic (not a note) gets `annotator`'s
    notes when it is made, in this process and in the processes it forks.

    This is MLIR's context-wide diagnostic printing (`printOpOnDiagnostic`,
    `printStackTraceOnDiagnostic`, set from mlir-opt's flags): the notes are
    made where the diagnostic is, before it travels from a worker, with the op
    as it is then.
    """
    _annotators.append(annotator)
    try:
        yield
    finally:
        _annotators.pop()


class DiagnosticEngine:
    """Routes diagnostics to handlers; with none registered, prints non-errors to stderr.

    Errors are always also returned to the caller of `PassManager.run` inside
    `PassPipelineError`, so a library user never has to register a handler to see
    why a run failed.
    """

    def __init__(self) -> None:
        self.handlers: list[DiagnosticHandler] = []

    def deliver(self, diagnostic: Diagnostic) -> None:
        if self.handlers:
            for handler in self.handlers:
                handler(diagnostic)
        elif diagnostic.severity is not Severity.ERROR:
            print(diagnostic, file=sys.stderr)


class PassflowError(Exception):
    """Base of every error passflow raises."""


class PassPipelineError(PassflowError):
    """A pass pipeline failed; `diagnostics` holds every diagnostic of the run in order."""

    def __init__(self, diagnostics: list[Diagnostic]) -> None:
        self.diagnostics = diagnostics
        body = "\n".join(str(d) for d in diagnostics)
        super().__init__(
            "Failure while executing pass pipeline" + (f":\n{body}" if body else "")
        )

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity is Severity.ERROR]


class PassNestingError(PassflowError):
    """An op-restricted pass was added to a pass manager anchored on another op."""


class OptionError(PassflowError):
    """A pass or pipeline option string could not be parsed.

    `printed_by_cl` marks llvm::cl's own lines (`for the --x option: ...`), which
    mlir-opt writes straight to stderr rather than into the error it reports.
    """

    def __init__(self, message: str, *, printed_by_cl: bool = False) -> None:
        super().__init__(message)
        self.printed_by_cl = printed_by_cl


class RegistrationError(PassflowError):
    """A pass or pipeline could not be registered (duplicate or malformed name)."""


class IRParseError(PassflowError):
    """The input IR text is malformed; the message holds xDSL's located error,
    rendered with its source line, and `diagnostic` the same error as a
    `Diagnostic` (for handlers such as `--verify-diagnostics`)."""

    def __init__(self, message: str, diagnostic: Diagnostic | None = None) -> None:
        super().__init__(message)
        self.diagnostic = diagnostic or Diagnostic(Severity.ERROR, message)


class PipelineParseError(PassflowError, ValueError):
    """A textual pass pipeline is malformed.

    Also a `ValueError`, as MLIR's Python bindings raise for the same text
    (`PassManager.parse`, `pm.add("cse")`), so code catching either works.

    `text` is the text the position refers to (for anchored pipelines, the text
    inside `anchor(...)`, as in MLIR) and `column` is 0-based; `None` means the
    error has no position (for example a missing anchor, or a chain of "failed to
    add" lines). `cl_messages` are llvm::cl lines that mlir-opt prints raw before
    the error.
    """

    def __init__(
        self,
        message: str,
        text: str = "",
        column: int | None = None,
        *,
        cl_messages: tuple[str, ...] = (),
    ) -> None:
        self.message = message
        self.text = text
        self.column = column
        self.cl_messages = cl_messages
        super().__init__("".join(f"{line}\n" for line in cl_messages) + self.render())

    def render(self) -> str:
        """MLIR's SourceMgr rendering: buffer name, 1-based line:col, the line, a caret.

        Tabs expand to 8-column stops in the line and the caret, as LLVM draws them.
        """
        if self.column is None:
            return self.message
        line_start = self.text.rfind("\n", 0, self.column) + 1
        line_end = self.text.find("\n", self.column)
        if line_end < 0:
            line_end = len(self.text)
        line_no = self.text.count("\n", 0, self.column) + 1
        col = self.column - line_start
        caret = len(self.text[line_start : self.column].expandtabs(8))
        line = self.text[line_start:line_end].expandtabs(8)
        return (
            f"MLIR Textual PassPipeline Parser:{line_no}:{col + 1}: error: "
            f"{self.message}\n{line}\n{' ' * caret}^\n"
        )
