"""The diagnostic verifier reads MLIR's `expected-*` designators and reports
mismatches as mlir-opt's `-verify-diagnostics` does."""

from __future__ import annotations

import io

from passflow.diagnostics import Diagnostic, Location, Severity
from passflow.source_diagnostics import (
    DiagnosticVerifier,
    SourceDiagnosticPrinter,
    VerifyLevel,
)

SOURCE = """\
op_a
// expected-error @above {{at a}}
// expected-warning @below {{at b}}
// expected-remark @below {{also at b}}

op_b // expected-note {{same line}}
// expected-error @-6 {{{{^}}first}}
// expected-error-re @+1 {{x{{[0-9]+}}y}}
op_c
// expected-error @unknown {{nowhere}}
"""


def make(
    text: str = SOURCE,
    level: VerifyLevel = VerifyLevel.ALL,
    first_line: int = 1,
) -> tuple[DiagnosticVerifier, io.StringIO]:
    out = io.StringIO()
    printer = SourceDiagnosticPrinter(out, "f.mlir", text)
    return DiagnosticVerifier("f.mlir", text, printer, level, first_line), out


def at(line: int, severity: Severity, message: str) -> Diagnostic:
    return Diagnostic(severity, message, Location("f.mlir", line, 1))


def test_designators_resolve_to_lines() -> None:
    verifier, _ = make()
    lines = {record.text: record.line for record in verifier.expected}
    assert lines == {
        "at a": 1,
        "at b": 5,  # the blank line: @below takes the next non-designator line
        "also at b": 5,
        "same line": 6,
        "{{^}}first": 1,
        "x{{[0-9]+}}y": 9,
    }
    assert [record.text for record in verifier.unknown] == ["nowhere"]


def test_all_expected_met_verifies() -> None:
    verifier, out = make()
    verifier(at(1, Severity.ERROR, "error at a!"))
    verifier(at(5, Severity.WARNING, "at b"))
    verifier(at(5, Severity.REMARK, "also at b"))
    verifier(at(6, Severity.NOTE, "same line"))
    verifier(at(1, Severity.ERROR, "{{^}}first"))
    verifier(at(9, Severity.ERROR, "x42y"))
    verifier(Diagnostic(Severity.ERROR, "it is nowhere"))
    assert verifier.verify()
    assert out.getvalue() == ""


def test_regex_is_searched_not_literal() -> None:
    verifier, _ = make()
    verifier(at(9, Severity.ERROR, "xy"))
    assert not verifier.expected[-1].matched
    verifier(at(9, Severity.ERROR, "prefix x7y suffix"))
    assert verifier.expected[-1].matched


def test_wrong_line_is_unexpected_and_expected_is_missing() -> None:
    text = "op\n// expected-error @above {{boom}}\nother\n"
    verifier, out = make(text)
    verifier(at(3, Severity.ERROR, "boom"))
    assert not verifier.verify()
    assert out.getvalue() == (
        "f.mlir:3:1: error: unexpected error: boom\nother\n^\n"
        'f.mlir:2:4: error: expected error "boom" was not produced\n'
        "// expected-error @above {{boom}}\n   ^~~~\n"
    )


def test_near_miss_names_both_severities() -> None:
    text = "op // expected-warning {{careful}}\n"
    verifier, out = make(text)
    verifier(at(1, Severity.ERROR, "careful"))
    assert not verifier.ok
    assert out.getvalue().startswith(
        "f.mlir:1:7: error: 'error' diagnostic emitted when expecting a 'warning'\n"
    )


def test_notes_are_checked_too() -> None:
    text = "op // expected-error {{main}}\n"
    verifier, out = make(text)
    diagnostic = at(1, Severity.ERROR, "main")
    diagnostic.attach_note("extra")
    verifier(diagnostic)
    assert not verifier.verify()
    assert "unexpected note: extra" in out.getvalue()


def test_only_expected_ignores_unexpected_but_not_missing() -> None:
    text = "op // expected-error {{wanted}}\n"
    verifier, out = make(text, VerifyLevel.ONLY_EXPECTED)
    verifier(at(1, Severity.ERROR, "something else"))
    assert verifier.ok
    assert not verifier.verify()
    assert 'expected error "wanted" was not produced' in out.getvalue()
    assert "unexpected" not in out.getvalue()


def test_unknown_expectation_missing_has_no_location() -> None:
    verifier, out = make("// expected-remark @unknown {{gone}}\n")
    assert not verifier.verify()
    assert out.getvalue() == 'error: expected remark "gone" was not produced\n'


def test_chunk_lines_are_the_files() -> None:
    verifier, _ = make("op // expected-error {{here}}\n", first_line=10)
    verifier(at(10, Severity.ERROR, "here"))
    assert verifier.verify()


def test_bad_regex_is_reported_where_written() -> None:
    verifier, out = make("op // expected-error-re {{a{{(}}b}}\n")
    assert not verifier.ok
    assert out.getvalue().startswith("f.mlir:1:7: error: invalid regex: ")
    verifier2, out2 = make("op // expected-error-re {{a{{b}}\n")
    assert not verifier2.ok
    assert "found start of regex with no end '}}'" in out2.getvalue()
