"""`print-ir`: the dump mlir-opt 22.1.8 prints, header included."""

from __future__ import annotations

import pytest
from transforms_support import Recorder, normalized, run_pipeline

from passflow import ir
from passflow.registry import lookup_pass
from passflow.transforms import PrintIRPass

INPUT = "func.func @f(%a: i32) -> i32 {\n  func.return %a : i32\n}"


def test_prints_the_op_under_the_header(capsys: pytest.CaptureFixture[str]) -> None:
    module = run_pipeline(INPUT, "builtin.module(print-ir)")
    assert capsys.readouterr().err == (
        "// -----// IR Dump //----- //\n" + ir.print_op(module) + "\n"
    )


def test_label_goes_into_the_header(capsys: pytest.CaptureFixture[str]) -> None:
    run_pipeline(INPUT, "builtin.module(func.func(print-ir{label='after x'}))")
    function = ir.print_op(next(iter(ir.parse_module(INPUT).body.ops)))
    assert capsys.readouterr().err == (
        "// -----// IR Dump after x //----- //\n" + function + "\n"
    )


def test_keeps_every_analysis(capsys: pytest.CaptureFixture[str]) -> None:
    recorder = Recorder()
    run_pipeline(INPUT, "builtin.module(func.func(cse,print-ir,cse))", None, [recorder])
    assert [name for name, _, _ in recorder.analyses] == ["DominanceInfo"]
    assert normalized(INPUT) in normalized(capsys.readouterr().err.split("\n", 1)[1])


def test_declaration_matches_mlir_opt() -> None:
    info = lookup_pass("print-ir")
    assert info is not None and info.pass_class is PrintIRPass
    assert PrintIRPass.name == "PrintIRPass"
    assert PrintIRPass.summary == "Print IR on the debug stream"
    assert str(PrintIRPass()) == "print-ir{label=}"
    assert str(info.create("label={a b}")) == "print-ir{label={a b}}"
