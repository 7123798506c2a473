"""A reproducer cannot start a program or read a file the command line didn't name."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from passflow import registry
from passflow.tools import opt
from passflow.trust import UnsafePassError, untrusted
from passflow.xdsl_passes import UNSAFE_XDSL_PASSES, adapter_for, xdsl_pass_names

BODY = "func.func @f() {\n  func.return\n}\n"


def reproducer(tmp_path: Path, pipeline: str) -> Path:
    escaped = pipeline.replace("\\", "\\\\").replace('"', '\\"')
    path = tmp_path / "repro.mlir"
    path.write_text(
        f"{BODY}\n{{-#\n  external_resources: {{\n    mlir_reproducer: {{\n"
        f'      pipeline: "{escaped}",\n      disable_threading: true,\n'
        "      verify_each: true\n    }\n  }\n#-}\n"
    )
    return path


def test_reproducer_cannot_start_a_program(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "PWNED"
    path = reproducer(
        tmp_path,
        f'builtin.module(mlir-opt{{executable="sh" arguments="-c","touch {marker}"}})',
    )
    assert opt.main([str(path), "--run-reproducer", "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert not marker.exists()
    assert "error: refusing to run pass 'mlir-opt' from a reproducer: it starts" in err
    assert "note: if you trust this file, pass --allow-unsafe-passes" in err
    assert "Traceback" not in err


def test_reproducer_cannot_read_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("the first line is secret\n")
    path = reproducer(tmp_path, f'builtin.module(apply-pdl{{pdl_file="{secret}"}})')
    assert opt.main([str(path), "--run-reproducer", "-o", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert "refusing to run pass 'apply-pdl' from a reproducer: it reads" in err
    assert "secret" not in err.replace(str(secret), "")


def test_nested_pipeline_options_are_checked_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "PWNED"
    path = reproducer(
        tmp_path,
        'builtin.module(inline{default-pipeline=mlir-opt{executable="sh" '
        f'arguments="-c","touch {marker}"}}}})',
    )
    assert opt.main([str(path), "--run-reproducer", "-o", str(tmp_path / "o")]) == 1
    assert not marker.exists()
    assert "refusing to run pass 'mlir-opt'" in capsys.readouterr().err


def test_safe_use_of_an_unsafe_pass_is_allowed(tmp_path: Path) -> None:
    # apply-pdl without a file only reads the module itself.
    path = reproducer(tmp_path, "builtin.module(apply-pdl)")
    assert opt.main([str(path), "--run-reproducer", "-o", str(tmp_path / "o")]) == 0


def test_the_user_can_opt_in(tmp_path: Path) -> None:
    pdl = tmp_path / "rules.mlir"
    pdl.write_text("builtin.module {}\n")
    path = reproducer(tmp_path, f'builtin.module(apply-pdl{{pdl_file="{pdl}"}})')
    out = tmp_path / "o"
    argv = [str(path), "--run-reproducer", "--allow-unsafe-passes", "-o", str(out)]
    assert opt.main(argv) == 0
    assert "func.func @f()" in out.read_text()


def test_command_line_pipelines_are_trusted(tmp_path: Path) -> None:
    source = tmp_path / "in.mlir"
    source.write_text(BODY)
    pdl = tmp_path / "rules.mlir"
    pdl.write_text("builtin.module {}\n")
    pipeline = f'builtin.module(apply-pdl{{pdl_file="{pdl}"}})'
    assert opt.main([str(source), "-p", pipeline, "-o", str(tmp_path / "o")]) == 0


def test_untrusted_scope_refuses_creation_and_ends() -> None:
    info = registry.lookup_pass("mlir-opt")
    assert info is not None
    with untrusted("a test"), pytest.raises(UnsafePassError) as caught:
        info.create()
    assert str(caught.value).startswith("refusing to run pass 'mlir-opt' from a test")
    assert info.create().unsafe_effect() is not None  # outside the scope: allowed


def _reads_files_or_runs_programs(source: str) -> bool:
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else ""
            attr = func.attr if isinstance(func, ast.Attribute) else ""
            if name == "open" or attr in ("run", "Popen", "system", "read_text"):
                return True
        if isinstance(node, ast.Name) and node.id == "MLIROptPass":
            return True
    return False


def test_every_xdsl_pass_that_reads_files_or_runs_programs_is_listed() -> None:
    # An xDSL upgrade that adds such a pass fails here until it is reviewed.
    flagged: set[str] = set()
    for name in xdsl_pass_names():
        adapter = adapter_for(name)
        assert adapter is not None
        source = inspect.getsource(inspect.getmodule(adapter.xdsl_class))  # type: ignore[arg-type]
        if _reads_files_or_runs_programs(source):
            flagged.add(name)
    assert flagged == set(UNSAFE_XDSL_PASSES)
