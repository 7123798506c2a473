"""passflow.reduce: reduction and bisection on seeded bugs, through the API."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from passflow import ir
from passflow.pipeline_text import parse_pass_pipeline
from passflow.reduce import (
    Candidate,
    NotInterestingError,
    PassCrash,
    Reducer,
    RunSettings,
    SameDiagnostic,
    VerifierFailure,
    bisect,
    default_test,
    parse_input,
)
from passflow.reduce.candidates import CandidateRunner
from passflow.reduce.outcome import CandidateMaker
from passflow.reduce.pipeline_tree import keep_passes, reset_options, tree_of
from passflow.testing.seeded_bugs import CRASHING_OP, PIPELINE, seeded_module

PASSFLOW_OPT = Path(sys.executable).parent / "passflow-opt"
SETTINGS = RunSettings()


def test_ops_are_erased_with_results_forwarded_to_operands_or_arguments() -> None:
    current = parse_input(seeded_module(1, culprit=0, ops=6), "one.mlir")
    test = PassCrash("TestPassCrashOnOp", settings=SETTINGS)
    reduction = Reducer(test, jobs=1).reduce(current, PIPELINE)
    # %c became an argument, the chain before the culprit became %a.
    assert reduction.candidate.text() == (
        "builtin.module {\n"
        "  func.func @f0(%a: i32, %c: i32) -> i32 {\n"
        f"    %v3 = {CRASHING_OP} %a, %c : i32\n"
        "    func.return %v3 : i32\n"
        "  }\n"
        "}\n"
    )


def test_parallel_reduction_gives_what_the_serial_one_gives() -> None:
    text = seeded_module(12, culprit=5, ops=9)
    test = PassCrash("TestPassCrashOnOp", settings=SETTINGS)
    results = [
        Reducer(test, jobs=jobs).reduce(parse_input(text, "x.mlir"), PIPELINE)
        for jobs in (1, 3)
    ]
    assert results[0].candidate == results[1].candidate
    assert results[0].tests == results[1].tests or results[1].tests > 0


@dataclass(frozen=True)
class NeedsPass:
    """A test only the pipeline matters to: `argument` must stay in it."""

    argument: str

    @property
    def description(self) -> str:
        return f"'{self.argument}' in the pipeline"

    def __call__(self, candidate: Candidate) -> bool:
        return self.argument in candidate.pipeline


def test_the_pipeline_loses_passes_nests_and_options_it_does_not_need() -> None:
    pipeline = (
        "builtin.module(cse,func.func(canonicalize,test-options-pass{string=x}),"
        "func.func(cse),symbol-dce)"
    )
    current = parse_input("func.func @f() {\n  func.return\n}\n", "f.mlir")
    reduction = Reducer(NeedsPass("test-options-pass"), reduce_ir=False).reduce(
        current, pipeline
    )
    assert (
        reduction.candidate.pipeline == "builtin.module(func.func(test-options-pass))"
    )
    assert reduction.removed_passes == ["cse", "canonicalize", "cse", "symbol-dce"]
    [reset] = reduction.reset_options
    assert reset.startswith("test-options-pass{") and "string=x" in reset


def test_keep_and_reset_rebuild_the_pipeline_text() -> None:
    tree = tree_of(
        parse_pass_pipeline(
            "builtin.module(cse,func.func(test-options-pass{string=x}))"
        )
    )
    assert str(keep_passes(tree, lambda i: i == 0)) == "builtin.module(cse)"
    kept = str(keep_passes(tree, lambda i: i == 1))
    assert kept.startswith("builtin.module(func.func(test-options-pass{")
    assert "string=x" in kept
    assert reset_options(tree, 0) is None  # cse has no options set
    assert (
        str(reset_options(tree, 1))
        == "builtin.module(cse,func.func(test-options-pass))"
    )


def test_a_diagnostic_test_keeps_the_message() -> None:
    text = "func.func @f() {\n  func.return\n}\nfunc.func @g() {\n  func.return\n}\n"
    pipeline = "builtin.module(func.func(cse,test-pass-failure{gen-diagnostics=true}))"
    current = parse_input(text, "d.mlir")
    test = default_test(Candidate(ir.clone(current.top), pipeline), SETTINGS)
    assert test == SameDiagnostic("illegal operation", SETTINGS)
    reduction = Reducer(test, jobs=2).reduce(current, pipeline)
    # The option is what makes the message: it stays.
    assert reduction.candidate.pipeline == (
        "builtin.module(func.func(test-pass-failure{gen-diagnostics=true}))"
    )
    assert reduction.reduced.top_level_ops == 1


def test_a_verifier_failure_reduces_to_the_pass_that_breaks_the_ir() -> None:
    text = "func.func @f() {\n  func.return\n}\n"
    pipeline = "builtin.module(cse,func.func(test-pass-create-invalid-ir),symbol-dce)"
    test = VerifierFailure(settings=SETTINGS)
    reduction = Reducer(test).reduce(parse_input(text, "v.mlir"), pipeline)
    assert reduction.candidate.pipeline == (
        "builtin.module(func.func(test-pass-create-invalid-ir))"
    )


def test_an_input_that_does_not_fail_is_refused() -> None:
    text = "func.func @f() {\n  func.return\n}\n"
    current = parse_input(text, "ok.mlir")
    with pytest.raises(NotInterestingError, match="the pipeline succeeds on the input"):
        default_test(Candidate(current.top, "builtin.module(cse)"), SETTINGS)
    with pytest.raises(NotInterestingError, match="does not show the failure"):
        Reducer(PassCrash("CSE", settings=SETTINGS)).reduce(
            current, "builtin.module(cse)"
        )


def test_bisection_finds_the_seeded_execution_as_the_debug_counter_numbers_it(
    tmp_path: Path,
) -> None:
    text = seeded_module(3, culprit=1, ops=6)
    current = parse_input(text, "small.mlir")
    test = PassCrash("TestPassCrashOnOp", settings=SETTINGS)
    found = bisect(
        Candidate(current.top, PIPELINE, "small.mlir"), test, SETTINGS, jobs=2
    )
    # canonicalize, the adaptor, then cse and the crashing pass per function:
    # the crash is on @f1, the 6th execution of 8.
    assert (found.index, found.total) == (6, 8)
    assert found.execution.pipeline == (
        f"builtin.module(func.func(test-pass-crash-on-op{{op={CRASHING_OP}}}))"
    )
    assert found.execution.op_name == "func.func"
    assert found.execution.location == "small.mlir:12:3"
    # passflow-opt's own counter stops the run at the same place.
    source = tmp_path / "small.mlir"
    source.write_text(text)

    def crashes(count: int) -> bool:
        run = subprocess.run(
            [
                PASSFLOW_OPT,
                source,
                f"--pass-pipeline={PIPELINE}",
                "--mlir-disable-threading",
                f"--mlir-debug-counter=pass-execution-count={count}",
                "-o",
                tmp_path / "out.mlir",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        return "crashed" in run.stderr

    assert crashes(found.index) and not crashes(found.index - 1)


def test_bisection_refuses_a_failure_that_needs_no_pass() -> None:
    current = parse_input("func.func @f() {\n  func.return\n}\n", "f.mlir")
    with pytest.raises(NotInterestingError, match="before any pass runs"):
        bisect(
            Candidate(current.top, "builtin.module(cse)"), NeedsPass("cse"), SETTINGS
        )


def _hangs_on_first(candidate: Candidate) -> bool:
    if candidate.pipeline == "first":
        time.sleep(60)
    return True


def _makers(pipelines: Sequence[str]) -> list[CandidateMaker]:
    def maker(pipeline: str) -> CandidateMaker:
        return lambda in_place: Candidate("", pipeline)

    return [maker(p) for p in pipelines]


def test_a_candidate_that_overruns_the_timeout_is_killed_and_not_interesting() -> None:
    runner = CandidateRunner(_hangs_on_first, jobs=2, timeout=0.5)
    makers = _makers(["first", "second"])
    started = time.monotonic()
    assert runner.first_interesting(makers) == 1
    assert time.monotonic() - started < 30  # not the 60 s the first one sleeps
    assert runner.tests == 2


def test_in_process_trials_give_the_isolated_answer() -> None:
    def judge(candidate: Candidate) -> bool:
        return candidate.pipeline in ("c", "d")

    makers = _makers(list("abcd"))
    answers = [
        CandidateRunner(judge, jobs=jobs, isolate=isolate).first_interesting(makers)
        for jobs, isolate in ((1, False), (1, True), (3, True))
    ]
    assert answers == [2, 2, 2]
