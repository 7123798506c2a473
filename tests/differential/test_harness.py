"""The differential suite's own parts: RUN-line reading, normalisations, error
keys and traceback detection, on small inputs."""

from __future__ import annotations

from pathlib import Path

import pytest

from passflow.tools import opt

from .compare import Kind, compare, constant_placement, error_key
from .corpus import CORPUS, Case, NotApplicable, RunLine, classify, split_chunks
from .tools import Outcome, passflow_pipeline, run_passflow


def _run(command: str, path: str = "transforms/cse.mlir") -> Case | NotApplicable:
    return classify(RunLine(path, 1, command))


def test_a_pipeline_run_line_is_a_case() -> None:
    case = _run("xdsl-opt -p 'cse,dce' --split-input-file %s | filecheck %s")
    assert isinstance(case, Case)
    assert case.pipeline == "cse,dce"
    assert case.split
    assert case.input == CORPUS / "transforms/cse.mlir"


def test_lit_substitutions_reach_pass_options() -> None:
    case = _run("xdsl-opt %s -p 'apply-pdl{pdl_file=\"%p/x.mlir\"}'")
    assert isinstance(case, Case)
    assert f'pdl_file="{CORPUS / "transforms"}/x.mlir"' in case.pipeline


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("xdsl-opt %s | filecheck %s", "no pass pipeline"),
        ("xdsl-opt -p cse -t riscv-asm %s", "-t/--target"),
        ("xdsl-opt -p cse --print-between-passes %s", "--print-between-passes"),
        ("xdsl-run %s", "not an xdsl-opt run"),
        ("xdsl-opt %s | xdsl-opt -p cse", "reads another tool's output"),
    ],
)
def test_other_run_lines_are_counted_with_a_reason(command: str, reason: str) -> None:
    found = _run(command)
    assert isinstance(found, NotApplicable)
    assert reason in found.reason


def test_chunks_split_as_xdsl_opt_splits_them() -> None:
    chunks = split_chunks(b"a\n// -----\nb\n  // ----- c\nd", split=True)
    assert [(c.number, c.line, c.text) for c in chunks] == [
        (1, 1, "a\n"),
        (2, 2, "\nb\n  "),
        (3, 4, " c\nd"),
    ]


def test_pipelines_become_anchored_with_passflow_names() -> None:
    assert passflow_pipeline("licm,cse,dce") == (
        "builtin.module(loop-invariant-code-motion,cse,dce)"
    )
    assert passflow_pipeline("x86-set-arch{arch=avx2}") == (
        'builtin.module(x86-set-arch{arch="avx2"})'
    )


def test_constant_placement_hoists_and_merges_per_isolated_region() -> None:
    xdsl = """builtin.module {
  func.func @f(%a: i32) -> i32 {
    %x = arith.addi %a, %a : i32
    %c1 = arith.constant 1 : i32
    %y = arith.addi %x, %c1 : i32
    %c1_1 = arith.constant 1 : i32
    %z = arith.addi %y, %c1_1 : i32
    func.return %z : i32
  }
}
"""
    passflow = """builtin.module {
  func.func @f(%a: i32) -> i32 {
    %one = arith.constant 1 : i32
    %x = arith.addi %a, %a : i32
    %y = arith.addi %x, %one : i32
    %z = arith.addi %y, %one : i32
    func.return %z : i32
  }
}
"""
    assert constant_placement(xdsl) == constant_placement(passflow)


def test_constant_placement_keeps_a_missed_fold_visible() -> None:
    folded = 'builtin.module {\n  %c = arith.constant 2 : i32\n  "t.use"(%c) : (i32) -> ()\n}\n'
    unfolded = (
        "builtin.module {\n  %a = arith.constant 1 : i32\n"
        "  %c = arith.addi %a, %a : i32\n"
        '  "t.use"(%c) : (i32) -> ()\n}\n'
    )
    assert constant_placement(folded) != constant_placement(unfolded)


def test_constant_placement_leaves_allocated_registers_in_place() -> None:
    text = (
        "builtin.module {\n"
        '  "test.op"() : () -> ()\n'
        "  %r = rv32.li 5 : !riscv.reg<a0>\n"
        "}\n"
    )
    normalised = constant_placement(text)
    assert normalised is not None
    assert normalised.index("test.op") < normalised.index("rv32.li")


@pytest.mark.parametrize(
    ("line", "key"),
    [
        ("'arith.addi' op operand types differ", "operand types differ"),
        ("VerifyException: operand types differ", "operand types differ"),
        (
            "pass 'P' crashed on 'builtin.module' op: ValueError: boom",
            "ValueError: boom",
        ),
        (
            "pass 'P' crashed on 'builtin.module' op: PassFailedException: no",
            "no",
        ),
    ],
)
def test_error_keys_drop_how_the_error_is_reported(line: str, key: str) -> None:
    assert error_key(line) == key


def test_an_op_note_counts_only_if_it_keeps_the_reason() -> None:
    xdsl = Outcome(
        None,
        "InterpretationError: no dynamic tile sizes",
        annotations=("Error while interpreting op",),
    )
    lost = Outcome(None, "Error while interpreting op")
    kept = Outcome(None, "no dynamic tile sizes")
    assert compare(xdsl, lost, ()).kind is Kind.DIFFER
    assert compare(xdsl, kept, ()).kind is Kind.BOTH_ERROR
    pattern = Outcome(
        None,
        "DiagnosticException: bad",
        annotations=("Error while applying pattern: bad",),
    )
    wrapped = Outcome(None, "Error while applying pattern: bad")
    assert compare(pattern, wrapped, ()).kind is Kind.BOTH_ERROR


def _case(pipeline: str) -> Case:
    return Case(
        run=RunLine("inline.mlir", 1, f"xdsl-opt -p {pipeline} %s"),
        input=Path("inline.mlir"),
        xdsl_argv=("-p", pipeline),
        pipeline=pipeline,
        split=False,
        allow_unregistered=False,
        generic=False,
        no_implicit_module=False,
    )


def test_a_traceback_passflow_opt_prints_is_caught() -> None:
    chunk = split_chunks(b"func.func @f() {\n  func.return\n}\n", split=False)
    [outcome] = run_passflow(_case("test-pass-crash"), chunk)
    assert outcome.traceback is not None
    assert "Traceback (most recent call last)" in outcome.traceback


def test_an_exception_out_of_main_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(argv: list[str]) -> int:
        raise RuntimeError(f"boom {len(argv)}")

    monkeypatch.setattr(opt, "main", explode)
    [outcome] = run_passflow(_case("cse"), split_chunks(b"", split=False))
    assert outcome.traceback is not None
    assert "RuntimeError: boom" in outcome.traceback
    assert not outcome.ok
