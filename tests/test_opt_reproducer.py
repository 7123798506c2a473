"""passflow-opt --run-reproducer says what it reproduced, and exits as the run
that wrote the reproducer did."""

from __future__ import annotations

from pathlib import Path

import pytest

from passflow.tools import opt

FUNCTIONS = "func.func @a() {\n  func.return\n}\nfunc.func @b() {\n  func.return\n}\n"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, list[str]]:
    status = opt.main(list(argv))
    return status, capsys.readouterr().err.splitlines()


def write_reproducer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pipeline: str
) -> tuple[Path, int]:
    source = tmp_path / "input.mlir"
    source.write_text(FUNCTIONS)
    reproducer = tmp_path / "reproducer.mlir"
    status, _ = run(
        capsys,
        str(source),
        "-p",
        pipeline,
        f"--mlir-pass-pipeline-crash-reproducer={reproducer}",
        "-o",
        str(tmp_path / "out.mlir"),
    )
    return reproducer, status


def test_a_silent_failure_is_reported_as_an_error_at_the_failing_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipeline = "builtin.module(func.func(test-pass-failure))"
    reproducer, original = write_reproducer(tmp_path, capsys, pipeline)
    status, lines = run(capsys, str(reproducer), "--run-reproducer")
    assert status == original == 1
    assert lines == [
        f"{reproducer}:2:3: error: reproduced the failure: the pipeline failed while "
        "executing `TestFailurePass` on 'func.func' operation: @a",
        "  func.func @a() {",
        "  ^",
    ]


def test_a_failure_with_errors_gets_a_note_after_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipeline = "builtin.module(func.func(test-pass-failure{gen-diagnostics}))"
    reproducer, _ = write_reproducer(tmp_path, capsys, pipeline)
    status, lines = run(capsys, str(reproducer), "--run-reproducer")
    assert status == 1
    # Each error also shows its op (--mlir-print-op-on-diagnostic, on by default).
    shown = [line for line in lines if "see current operation" not in line]
    messages = [line.split(": ", 1)[1] for line in shown if line.startswith("/")]
    assert messages == [
        "error: illegal operation",
        "error: illegal operation",
        "note: reproduced the failure: the pipeline failed while executing "
        "`TestFailurePass` on 'func.func' operation: @a",
    ]


def test_a_reproducer_that_succeeds_prints_its_output_and_no_verdict(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(FUNCTIONS)
    generated = tmp_path / "generated.mlir"
    out = str(tmp_path / "out.mlir")
    argv = ["-p", "builtin.module(func.func(cse))", "-o", out]
    assert (
        run(capsys, str(source), *argv, f"--mlir-generate-reproducer={generated}")[0]
        == 0
    )
    assert run(capsys, str(generated), "--run-reproducer", "-o", out) == (0, [])


def test_the_verdict_stays_out_of_verify_diagnostics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pipeline = "builtin.module(func.func(test-pass-failure{gen-diagnostics}))"
    reproducer, _ = write_reproducer(tmp_path, capsys, pipeline)
    text = reproducer.read_text().replace(
        "func.func @a() {", "func.func @a() { // expected-error {{illegal operation}}"
    )
    text = text.replace(
        "func.func @b() {", "func.func @b() { // expected-error {{illegal operation}}"
    )
    reproducer.write_text(text)
    out = str(tmp_path / "out.mlir")
    status, lines = run(
        capsys, str(reproducer), "--run-reproducer", "--verify-diagnostics", "-o", out
    )
    assert (status, lines) == (0, [])
