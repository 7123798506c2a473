"""passflow-reduce: the command line, end to end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from passflow.testing.seeded_bugs import CRASHING_OP, PIPELINE, seeded_module

BIN = Path(sys.executable).parent
REDUCE = BIN / "passflow-reduce"
OPT = BIN / "passflow-opt"


def run(*args: object, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], capture_output=True, text=True, cwd=cwd, check=False
    )


@pytest.fixture
def crash_reproducer(tmp_path: Path) -> Path:
    """The crash reproducer passflow-opt writes for the seeded bug."""
    (tmp_path / "in.mlir").write_text(seeded_module(20, culprit=13))
    failed = run(
        OPT,
        "in.mlir",
        f"--pass-pipeline={PIPELINE}",
        "--mlir-pass-pipeline-crash-reproducer=crash.mlir",
        "-o",
        "out.mlir",
        cwd=tmp_path,
    )
    assert failed.returncode == 1 and "reproducer generated" in failed.stderr
    return tmp_path / "crash.mlir"


def test_a_crash_reproducer_reduces_to_one_that_replays(crash_reproducer: Path) -> None:
    where = crash_reproducer.parent
    reduced = run(REDUCE, crash_reproducer, "-o", "reduced.mlir", "-j", "2", cwd=where)
    assert reduced.returncode == 0, reduced.stderr
    assert "kept: a crash of pass 'TestPassCrashOnOp'" in reduced.stderr
    assert "-> 1 pass, 1 top-level op, " in reduced.stderr
    assert "removed passes: canonicalize, cse, canonicalize" in reduced.stderr
    text = (where / "reduced.mlir").read_text()
    assert text.startswith("// Reduced by passflow-reduce from ")
    assert "@f13" in text and "@f12" not in text
    assert (
        f'pipeline: "builtin.module(func.func(test-pass-crash-on-op{{op={CRASHING_OP}}}))"'
        in text
    )
    replay = run(OPT, "reduced.mlir", "--run-reproducer", "-o", "out.mlir", cwd=where)
    assert replay.returncode == 1
    assert "pass 'TestPassCrashOnOp' crashed on 'func.func' op" in replay.stderr


def test_the_seeded_crash_in_250_functions_reduces_to_one_function_and_pass(
    tmp_path: Path,
) -> None:
    # In a process of its own, as users run it (a trial forks the process, and
    # a test worker's heap would make every fork the cost); bench/reduce.py
    # reduces the same bug in 1,000 functions.
    (tmp_path / "big.mlir").write_text(seeded_module(250, culprit=187))
    reduced = run(REDUCE, "big.mlir", "-p", PIPELINE, "-j", "2", cwd=tmp_path)
    assert reduced.returncode == 0, reduced.stderr
    assert reduced.stderr.splitlines()[:3] == [
        "passflow-reduce: kept: a crash of pass 'TestPassCrashOnOp' with RuntimeError",
        "passflow-reduce: reduced: 4 passes, 250 top-level ops, 5250 ops"
        " -> 1 pass, 1 top-level op, 3 ops",
        "passflow-reduce: removed passes: canonicalize, cse, canonicalize",
    ]
    body = reduced.stdout.split("{-#")[0].splitlines()[1:]
    assert body == [
        "builtin.module {",
        "  func.func @f187(%a: i32, %c: i32) -> i32 {",
        f"    %v9 = {CRASHING_OP} %a, %c : i32",
        "    func.return %v9 : i32",
        "  }",
        "}",
        "",
    ]
    assert (
        f'pipeline: "builtin.module(func.func(test-pass-crash-on-op{{op={CRASHING_OP}}}))"'
        in reduced.stdout
    )


def test_the_reduced_reproducer_goes_to_stdout_by_default(
    crash_reproducer: Path,
) -> None:
    reduced = run(REDUCE, crash_reproducer, "-j", "1", cwd=crash_reproducer.parent)
    assert reduced.returncode == 0
    assert "mlir_reproducer" in reduced.stdout and "@f13" in reduced.stdout
    assert "reproducer written to stdout" in reduced.stderr


def test_bisect_prints_the_pass_and_the_op(tmp_path: Path) -> None:
    (tmp_path / "in.mlir").write_text(seeded_module(4, culprit=2, ops=3))
    found = run(REDUCE, "in.mlir", "-p", PIPELINE, "--bisect", cwd=tmp_path)
    assert found.returncode == 0, found.stderr
    assert found.stdout == (
        f"builtin.module(func.func(test-pass-crash-on-op{{op={CRASHING_OP}}}))\n"
        "in.mlir:16:3: on 'func.func' @f2 (pass execution 8 of 10)\n"
    )
    assert "--mlir-debug-counter=pass-execution-count=8" in found.stderr


def test_a_user_command_decides_what_is_interesting(tmp_path: Path) -> None:
    (tmp_path / "in.mlir").write_text(seeded_module(6, culprit=4, ops=6))
    # Interesting: the file still holds a multiplication (exit status 0).
    (tmp_path / "has_muli.py").write_text(
        "import sys\nsys.exit(0 if 'arith.muli' in open(sys.argv[1]).read() else 1)\n"
    )
    reduced = run(
        REDUCE,
        "in.mlir",
        "-p",
        "builtin.module(cse,canonicalize)",
        "--test-command",
        sys.executable,
        "--test-arg",
        "has_muli.py",
        "-o",
        "reduced.mlir",
        cwd=tmp_path,
    )
    assert reduced.returncode == 0, reduced.stderr
    text = (tmp_path / "reduced.mlir").read_text()
    body = text.split("{-#")[0]
    assert "arith.muli" in body
    assert body.count("func.func") == 1
    assert 'pipeline: "builtin.module()"' in text


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["in.mlir"], "in.mlir has no 'mlir_reproducer' pipeline; name one with -p"),
        (
            ["in.mlir", "-p", "builtin.module(cse)"],
            "the pipeline succeeds on the input, so there is no failure to reduce",
        ),
        (["in.mlir", "-p", "builtin.module(nope)"], "'nope' does not refer to"),
        (["missing.mlir", "-p", "builtin.module(cse)"], "No such file or directory"),
        (
            ["in.mlir", "-p", "builtin.module(cse)", "--test-command", "./absent"],
            "cannot run the test command './absent': No such file or directory",
        ),
        (["evil.mlir"], "refusing to run pass 'mlir-opt' from a reproducer"),
    ],
)
def test_errors_are_one_line_and_exit_1(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    (tmp_path / "in.mlir").write_text(seeded_module(2, culprit=-1, ops=2))
    (tmp_path / "evil.mlir").write_text(
        "builtin.module {\n}\n{-#\n  external_resources: {\n    mlir_reproducer: {\n"
        '      pipeline: "builtin.module(mlir-opt{executable=sh arguments=-c,touch,pwned})",\n'
        "      disable_threading: true,\n      verify_each: true\n    }\n  }\n#-}\n"
    )
    failed = run(REDUCE, *arguments, cwd=tmp_path)
    assert failed.returncode == 1
    assert failed.stderr.startswith("passflow-reduce: error: ")
    assert message in failed.stderr
    assert "Traceback" not in failed.stderr
    assert not (tmp_path / "pwned").exists()


@pytest.mark.parametrize(
    ("pipeline", "note"),
    [
        ("builtin.module(func.func(cannonicalize))", "did you mean 'canonicalize'?"),
        (
            "cse",
            "a pass pipeline starts with the op it runs on: write `builtin.module(cse)`",
        ),
    ],
)
def test_a_pipeline_mistake_gets_the_fix_after_the_error(
    tmp_path: Path, pipeline: str, note: str
) -> None:
    (tmp_path / "in.mlir").write_text(seeded_module(2, culprit=-1, ops=2))
    failed = run(REDUCE, "in.mlir", "-p", pipeline, cwd=tmp_path)
    assert failed.returncode == 1
    assert failed.stderr.startswith("passflow-reduce: error: ")
    assert failed.stderr.splitlines()[-1] == f"passflow-reduce: note: {note}"


def test_help_is_enough_to_start() -> None:
    shown = run(REDUCE, "--help", cwd=Path.cwd())
    assert shown.returncode == 0
    for needed in ("--bisect", "--test-command", "--run-reproducer", "-o reduced.mlir"):
        assert needed in shown.stdout
