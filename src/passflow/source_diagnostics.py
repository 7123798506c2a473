"""Diagnostics shown against the source they point into, and checked against it.

Two handlers, as MLIR's `SourceMgrDiagnosticHandler` and
`SourceMgrDiagnosticVerifierHandler`:

- `SourceDiagnosticPrinter` prints `file:line:col: severity: message`, then the
  source line and a caret, then the notes;
- `DiagnosticVerifier` is what `--verify-diagnostics` installs: it reads the
  `expected-error|warning|remark|note` comments of the source and checks every
  diagnostic against them, printing only the mismatches. A test of bad input states
  the diagnostics it expects next to the line that causes them::

      // expected-error @below {{'func.return' op has 0 operands}}
      func.return

  The designators are MLIR's: `@+N`, `@-N`, `@above`, `@below`, `@unknown`; the
  `-re` suffix makes `{{regex}}` parts of the text regular expressions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum
from typing import TextIO

from passflow.diagnostics import Diagnostic, Location, Severity

__all__ = [
    "DiagnosticVerifier",
    "ExpectedDiagnostic",
    "SourceDiagnosticPrinter",
    "VerifyLevel",
]


class SourceDiagnosticPrinter:
    """Prints diagnostics as mlir-opt does: location, severity, message, and the
    source line with a caret when the location is in the source."""

    def __init__(self, stream: TextIO, name: str, text: str) -> None:
        self.stream = stream
        self.name = name
        self.text = text
        self._lines: list[str] | None = None

    def source_line(self, number: int) -> str | None:
        """Line `number` (from 1) of the source, or None past its end. The
        source is cut into lines when a message first shows one: a run without
        diagnostics does not keep a string per line (85 bytes a line)."""
        if self._lines is None:
            self._lines = self.text.splitlines()
        return self._lines[number - 1] if 1 <= number <= len(self._lines) else None

    def __call__(self, diagnostic: Diagnostic) -> None:
        self.print(diagnostic)

    def print(self, diagnostic: Diagnostic) -> None:
        """`diagnostic` and its notes; as MLIR, a note at the location just
        shown does not show the source line again."""
        self.message(diagnostic.location, diagnostic.severity, diagnostic.message)
        shown = diagnostic.location
        for note in diagnostic.notes:
            if note.location == shown and not note.notes:
                self.message(None, note.severity, note.message, located=note.location)
            else:
                self.print(note)
            shown = note.location

    def message(
        self,
        loc: Location | None,
        severity: Severity,
        text: str,
        width: int = 1,
        *,
        located: Location | None = None,
    ) -> None:
        """One message; `width` characters of the source are underlined (`^~~`).
        A message with no location at all (`None`) has no location prefix;
        one `located` has that prefix but no source line."""
        where = f"{loc or located}: " if (loc or located) is not None else ""
        self.stream.write(f"{where}{severity.value}: {text}\n")
        line = None
        if loc is not None and loc.file == self.name:
            line = self.source_line(loc.line)
        if loc is not None and line is not None:
            marker = "^" + "~" * (width - 1)
            self.stream.write(f"{line}\n{' ' * (loc.column - 1)}{marker}\n")


class VerifyLevel(Enum):
    """`--verify-diagnostics=all|only-expected`."""

    ALL = "all"
    """Expected diagnostics must appear, and no other may."""
    ONLY_EXPECTED = "only-expected"
    """Expected diagnostics must appear; others are ignored."""


EXPECTED = re.compile(
    r"expected-(error|note|remark|warning)(-re)? *"
    r"(@([+-][0-9]+|above|below|unknown))? *\{\{(.*)\}\}$"
)


@dataclass
class ExpectedDiagnostic:
    """One `expected-*` comment: what it expects, on which line, and where it is
    written (for the errors that point back at it)."""

    severity: Severity
    line: int
    """The line the diagnostic must be on (0 for `@unknown`)."""
    text: str
    written_at: Location
    pattern: re.Pattern[str] | None = None
    matched: bool = False

    def matches(self, message: str) -> bool:
        if self.pattern is not None:
            return self.pattern.search(message) is not None
        return self.text in message


def _pattern(text: str) -> re.Pattern[str] | str:
    """The regex of an `expected-*-re` text; a string is why it is invalid."""
    parts: list[str] = []
    rest = text
    while rest:
        start = rest.find("{{")
        if start < 0:
            parts.append(re.escape(rest))
            break
        parts.append(re.escape(rest[:start]))
        rest = rest[start + 2 :]
        end = rest.find("}}")
        if end < 0:
            return "found start of regex with no end '}}'"
        try:
            re.compile(rest[:end])
        except re.error as err:
            return f"invalid regex: {err}"
        parts.append(f"({rest[:end]})")
        rest = rest[end + 2 :]
    return re.compile("".join(parts))


@dataclass
class DiagnosticVerifier:
    """Checks diagnostics against the `expected-*` comments of one source text.

    `text` starts at line `first_line` of the file `name` (a `--split-input-file`
    chunk); lines are the file's. Call it as a diagnostic handler, then `verify()`.
    """

    name: str
    text: str
    report: SourceDiagnosticPrinter
    level: VerifyLevel = VerifyLevel.ALL
    first_line: int = 1
    expected: list[ExpectedDiagnostic] = field(
        default_factory=lambda: list[ExpectedDiagnostic]()
    )
    unknown: list[ExpectedDiagnostic] = field(
        default_factory=lambda: list[ExpectedDiagnostic]()
    )
    ok: bool = True

    def __post_init__(self) -> None:
        self._scan()

    def _scan(self) -> None:
        lines = self.text.split("\n")
        last_plain = 0
        below: list[ExpectedDiagnostic] = []
        for index, raw in enumerate(lines):
            line = index + self.first_line
            found = EXPECTED.search(raw.rstrip())
            if found is None:
                for record in below:
                    record.line = line
                below.clear()
                last_plain = line
                continue
            kind, regex, _, designator, text = found.groups()
            record = ExpectedDiagnostic(
                Severity(kind), line, text, Location(self.name, line, found.start() + 1)
            )
            if regex:
                pattern = _pattern(text)
                if isinstance(pattern, str):
                    self._error_at(record, pattern)
                    continue
                record.pattern = pattern
            if designator is None:
                pass
            elif designator[0] in "+-":
                offset = int(designator[1:])
                record.line += offset if designator[0] == "+" else -offset
            elif designator == "unknown":
                record.line = 0
                self.unknown.append(record)
                continue
            elif designator == "above":
                record.line = last_plain
            else:
                below.append(record)
                record.line = len(lines) + self.first_line - 1
            self.expected.append(record)

    def _error_at(self, record: ExpectedDiagnostic, message: str) -> None:
        self.ok = False
        location = record.written_at if record.line else None
        self.report.message(location, Severity.ERROR, message, max(len(record.text), 1))

    def __call__(self, diagnostic: Diagnostic) -> None:
        self.process(diagnostic)
        for note in diagnostic.notes:
            self.process(note)

    def process(self, diagnostic: Diagnostic) -> None:
        """Match one diagnostic (not its notes) against the expectations."""
        loc = diagnostic.location
        known = loc.file is not None
        candidates = self.expected if known else self.unknown
        near_miss: ExpectedDiagnostic | None = None
        for record in candidates:
            if known and (loc.file != self.name or loc.line != record.line):
                continue
            if record.matches(diagnostic.message):
                if record.severity is diagnostic.severity:
                    record.matched = True
                    return
                near_miss = record
        if self.level is VerifyLevel.ONLY_EXPECTED:
            return
        self.ok = False
        severity = diagnostic.severity.value
        if near_miss is not None:
            self.report.message(
                near_miss.written_at,
                Severity.ERROR,
                f"'{severity}' diagnostic emitted when expecting a "
                f"'{near_miss.severity.value}'",
            )
        else:
            self.report.message(
                loc, Severity.ERROR, f"unexpected {severity}: {diagnostic.message}"
            )

    def verify(self) -> bool:
        """Report every expectation no diagnostic met; whether all went as expected."""
        for record in [*self.expected, *self.unknown]:
            if not record.matched:
                self._error_at(
                    record,
                    f'expected {record.severity.value} "{record.text}" was not produced',
                )
        self.expected.clear()
        self.unknown.clear()
        return self.ok
