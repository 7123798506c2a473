"""Depth: passflow goes as deep as mlir-opt (1,000 nested regions, 20,000 nested
pipelines) and, beyond its own limits, reports an error instead of crashing."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

from passflow import PassManager, ir
from passflow.deep_stack import RECURSION_LIMIT, call_with_deep_stack
from passflow.pipeline_text import MAX_NESTING, parse_pass_pipeline
from passflow.tools import opt


def nested_regions(depth: int) -> str:
    return '"test.a"() ({\n' * depth + "}) : () -> ()\n" * depth


def nested_pipeline(depth: int, innermost: str = "cse") -> str:
    """`depth` levels of pipelines: the module's, then `any(...)` inside it."""
    return "builtin.module(" + "any(" * (depth - 1) + innermost + ")" * depth


def test_a_thousand_nested_regions_parse_run_and_print() -> None:
    def go() -> str:
        module = ir.parse_module(nested_regions(1000))
        pm = PassManager()
        pm.assign(parse_pass_pipeline("builtin.module(canonicalize,cse)"))
        pm.run(module)
        assert ir.verify(module) is None
        return ir.print_op(module)

    printed = call_with_deep_stack(go)
    assert printed.count('"test.a"()') == 1000


def test_opt_handles_mlir_opts_depths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "deep.mlir"
    source.write_text(nested_regions(1000))
    out = tmp_path / "out.mlir"
    pipeline = nested_pipeline(MAX_NESTING)
    assert opt.main([str(source), f"--pass-pipeline={pipeline}", "-o", str(out)]) == 0
    assert out.read_text().count('"test.a"()') == 1000
    assert capsys.readouterr().err == ""


def test_a_deeper_pipeline_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.mlir"
    source.write_text("")
    pipeline = nested_pipeline(MAX_NESTING + 1)
    assert opt.main([str(source), f"--pass-pipeline={pipeline}"]) == 1
    first = capsys.readouterr().err.splitlines()[0]
    assert first == (
        "<unknown>:0: error: MLIR Textual PassPipeline Parser:1:80000: error: "
        f"pipeline nested more than {MAX_NESTING} levels deep"
    )


def test_ir_beyond_the_recursion_limit_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.mlir"
    source.write_text(nested_regions(30_000))
    out = tmp_path / "out.mlir"
    assert opt.main([str(source), "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[0].endswith(
        "error: 'test.a' op nested too deeply to parse: the recursion limit was reached"
    )
    assert not out.exists()


def test_the_deep_call_returns_raises_and_restores_the_limit() -> None:
    before = sys.getrecursionlimit()
    assert call_with_deep_stack(sys.getrecursionlimit) == max(before, RECURSION_LIMIT)
    assert sys.getrecursionlimit() == before

    def fail() -> None:
        raise ValueError("from the deep thread")

    with pytest.raises(ValueError, match="from the deep thread"):
        call_with_deep_stack(fail)
    assert sys.getrecursionlimit() == before


@pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(),
    reason="signals reach the main thread only",
)
def test_an_interrupt_reaches_the_deep_call_and_its_cleanup_runs() -> None:
    cleaned: list[bool] = []

    def interrupted() -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            while True:  # the interrupt arrives while this runs
                time.sleep(0.01)
        finally:
            cleaned.append(True)

    with pytest.raises(KeyboardInterrupt):
        call_with_deep_stack(interrupted)
    assert cleaned == [True]
