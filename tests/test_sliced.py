"""Sliced runs: passflow-opt parses, runs and prints top-level ops in the
workers, and what comes out is byte for byte what a serial run prints.

Every comparison runs the same command line twice in this process, once with
`--mlir-disable-threading` (the whole file, serially) and once sliced on two
jobs with the parent forking at once (no serial budget), and checks that the
sliced run really was one (not a fallback) where it should be.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import multiprocessing
import os
import pathlib
import textwrap
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import pytest
from distributed import Client
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import UnitAttr

from passflow import OperationPass, PassManager, ir
from passflow.diagnostics import PassflowError
from passflow.executors import DaskExecutor, ProcessExecutor, make_executor
from passflow.pipeline_text import parse_pass_pipeline
from passflow.sliced import Fallback, SlicedOutcome, run_sliced, scan_slices
from passflow.sliced import run as sliced_run
from passflow.sliced.plan import SlicePlan
from passflow.sliced.shipped import ExecutorLostError, shipped_runner
from passflow.tools import opt, pass_manager_options

HERE = pathlib.Path(__file__).parent
LIT_CORPUS = sorted((HERE / "filecheck").rglob("*.mlir"))

Outcome = SlicedOutcome | Fallback


def function(index: int, body: str = "", calls: str | None = None) -> str:
    call = (
        f"  %r = func.call @{calls}(%a) : (i32) -> i32\n" if calls is not None else ""
    )
    return (
        textwrap.dedent(f"""\
        func.func @f{index}(%a: i32) -> i32 {{
          %c0 = arith.constant 0 : i32
          %x = arith.addi %a, %c0 : i32
          %y = arith.addi %a, %c0 : i32
          %z = arith.muli %x, %y : i32
        """)
        + body
        + call
        + "  func.return %z : i32\n}\n"
    )


def module(count: int, special: dict[int, str] | None = None) -> str:
    special = special or {}
    return "".join(
        function(i, special.get(i, ""), calls=f"f{i - 3}" if i % 5 == 4 else None)
        for i in range(count)
    )


@pytest.fixture
def sliced_outcomes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Outcome]]:
    """passflow-opt's process executor forks at once; the outcomes of its
    sliced runs are recorded."""
    seen: list[Outcome] = []

    def executor(
        kind: str, jobs: int | None = None, scheduler: str | None = None
    ) -> object:
        if kind == "process":
            return ProcessExecutor(2, serial_budget=0)
        return make_executor(kind, jobs, scheduler)

    def recording(*args: object, **kwargs: object) -> Outcome:
        outcome = real(*args, **kwargs)  # type: ignore[arg-type]
        seen.append(outcome)
        return outcome

    real = sliced_run.run_sliced_on
    monkeypatch.setattr(pass_manager_options, "make_executor", executor)
    monkeypatch.setattr(sliced_run, "run_sliced_on", recording)
    yield seen


def run_tool(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = opt.main(argv)
    return status, out.getvalue(), err.getvalue()


def compare(
    path: pathlib.Path,
    pipeline: str,
    executor: tuple[str, ...] = ("--executor=process", "--jobs=2"),
) -> tuple[int, str, str]:
    """Run `path` whole and sliced; assert both print the same; the result."""
    common = [
        str(path),
        f"--pass-pipeline={pipeline}",
        "--allow-unregistered-dialect",
        "--split-input-file",
    ]
    whole = run_tool([*common, "--mlir-disable-threading"])
    sliced = run_tool([*common, *executor])
    assert sliced == whole
    return whole


@pytest.mark.parametrize(
    "pipeline",
    [
        "builtin.module(func.func(canonicalize,cse))",
        "builtin.module(func.func(test-pass-failure))",
        "builtin.module(func.func(test-pass-crash))",
    ],
)
def test_the_lit_corpus_prints_the_same_sliced(
    pipeline: str, sliced_outcomes: list[Outcome]
) -> None:
    for path in LIT_CORPUS:
        compare(path, pipeline)
    sliced = [o for o in sliced_outcomes if isinstance(o, SlicedOutcome)]
    assert len(sliced) >= 40  # most chunks of the corpus slice


CASES: dict[str, tuple[str, str]] = {
    "many functions": (module(60), "canonicalize,cse"),
    "a crash in one function": (
        module(40, {17: '  "test.crash"() : () -> ()\n'}),
        "test-pass-crash-on-op{op=test.crash}",
    ),
    "remarks from every function": (module(30), "test-interface-pass"),
    "a failure with an error in every function": (
        module(20),
        "test-pass-failure{gen-diagnostics=true}",
    ),
    "aliases and comments with brackets": (
        '#zero = 0 : i32\n// { ( [ " @f3\n' + module(12) + '// "}\n',
        "cse",
    ),
    "an explicit module with attributes": (
        "// a comment with a } and a {\n"
        'module attributes {test.top = "{"} { // and {\n' + module(16) + "}\n",
        "canonicalize",
    ),
}


TWO_FUNCTIONS = (
    "func.func @a() {\n  func.return\n}\nfunc.func @b() {\n  func.return\n}\n"
)

UNUSUAL: dict[str, tuple[str, bool]] = {
    # text, whether it runs sliced (else whole, after a fallback)
    "a generic op name that ends its line": (
        '"func.func"\n() <{sym_name = "a", function_type = () -> ()}> ({\n'
        '  "func.return"() : () -> ()\n}) : () -> ()\n'
        "func.func @b() {\n  func.return\n}\n",
        True,
    ),
    "an alias and an op on one line": ("#x = 1 : i32 " + TWO_FUNCTIONS, False),
    "a form feed and a vertical tab first": ("\f\v" + TWO_FUNCTIONS, True),
    "a byte-order mark first": ("\ufeff" + TWO_FUNCTIONS, False),
    "a no-break space first": ("\u00a0" + TWO_FUNCTIONS, False),
    "an alias used before its definition": (
        "func.func @a() attributes {x = #late} {\n  func.return\n}\n"
        "#late = 1 : i32\nfunc.func @b() {\n  func.return\n}\n",
        False,
    ),
    "a location alias defined at the end": (
        "func.func @a() {\n  func.return\n} loc(#loc1)\n"
        'func.func @b() {\n  func.return\n}\n#loc1 = loc("a.mlir":1:2)\n',
        True,
    ),
    "two aliases on one line after an op": (
        "func.func @a() attributes {x = #m} {\n  func.return\n}\n"
        "#t = 1 : i32 #m = 2 : i32\nfunc.func @b() {\n  func.return\n}\n",
        False,
    ),
    "CR LF line ends": (TWO_FUNCTIONS.replace("\n", "\r\n"), True),
    "a call to a function that shares a line with another": (
        "func.func @a() {\n  func.call @c() : () -> ()\n  func.return\n}\n"
        "func.func @b() {\n  func.return\n} func.func @c() {\n  func.return\n}\n",
        True,
    ),
}


@pytest.mark.parametrize("case", sorted(UNUSUAL))
@pytest.mark.parametrize(
    "pipeline",
    [
        "builtin.module(func.func(cse))",
        "builtin.module(func.func(cse),symbol-privatize)",
        "builtin.module(func.func(test-pass-failure{gen-diagnostics=true}))",
    ],
)
def test_unusual_spellings_run_the_same_sliced_and_whole(
    case: str, pipeline: str, tmp_path: pathlib.Path, sliced_outcomes: list[Outcome]
) -> None:
    """Valid text the first line-based scan cut wrongly (dropping `@a` with
    exit status 0), and text that only one of the runs accepted."""
    text, slices = UNUSUAL[case]
    path = tmp_path / "input.mlir"
    path.write_text(text, newline="")
    status, out, _ = compare(path, pipeline)
    assert [type(o) for o in sliced_outcomes] == [SlicedOutcome if slices else Fallback]
    if status == 0:
        assert "@a" in out and "@b" in out


@pytest.mark.parametrize("case", sorted(CASES))
def test_generated_modules_slice_and_print_the_same(
    case: str, tmp_path: pathlib.Path, sliced_outcomes: list[Outcome]
) -> None:
    text, passes = CASES[case]
    path = tmp_path / "input.mlir"
    path.write_text(text)
    status, out, err = compare(path, f"builtin.module(func.func({passes}))")
    assert [type(o) for o in sliced_outcomes] == [SlicedOutcome]
    if case == "many functions":
        assert status == 0 and out.count("func.func @") == 60
    if case == "a crash in one function":
        assert status == 1 and "test-pass-crash-on-op: found 'test.crash'" in err
        assert err.count("error:") == 1 and "input.mlir:" in err
    if case == "remarks from every function":
        assert err.count("remark: Executing interface pass") == 30
    if case == "a failure with an error in every function":
        errors = [
            line for line in err.splitlines() if "error: illegal operation" in line
        ]
        assert len(errors) == 20
        assert errors == sorted(errors, key=lambda line: int(line.split(":")[1]))


def test_a_dask_cluster_runs_batches_shipped_as_text(
    dask_client: object, tmp_path: pathlib.Path, sliced_outcomes: list[Outcome]
) -> None:
    assert isinstance(dask_client, Client)
    scheduler = dask_client.scheduler
    assert scheduler is not None
    address = scheduler.address
    text, passes = CASES["a crash in one function"]
    path = tmp_path / "input.mlir"
    path.write_text(text)
    pipeline = f"builtin.module(func.func({passes}))"
    status, _, err = compare(
        path, pipeline, ("--executor=dask", f"--scheduler={address}")
    )
    assert status == 1 and err.count("error:") == 1
    path.write_text(module(50))
    status, out, _ = compare(
        path, pipeline, ("--executor=dask", f"--scheduler={address}")
    )
    assert status == 0 and out.count("func.func @") == 50
    assert [type(o) for o in sliced_outcomes] == [SlicedOutcome, SlicedOutcome]


@pytest.mark.parametrize(
    "passes",
    [
        "func.func(canonicalize),symbol-privatize",
        "func.func(cse),func.func(test-pass-failure)",
    ],
)
def test_passes_after_the_nested_ones_run_on_the_ops_the_workers_send_back(
    passes: str, tmp_path: pathlib.Path, sliced_outcomes: list[Outcome]
) -> None:
    """The workers run the nested pipelines and send their ops back encoded;
    the rest of the pipeline runs in the parent, its diagnostics after the
    workers'."""
    path = tmp_path / "input.mlir"
    path.write_text(CASES["an explicit module with attributes"][0])
    status, out, err = compare(path, f"builtin.module({passes})")
    (outcome,) = sliced_outcomes
    assert isinstance(outcome, SlicedOutcome)
    if "privatize" in passes:
        assert status == 0 and out.count("func.func private @") == 16
    else:
        assert status == 1 and out == "" and err == ""


FALLBACKS: dict[str, tuple[str, str]] = {
    "a parse error": (module(8) + "func.func @bad( {\n}\n", "cannot parse"),
    "a verifier error": (
        module(8, {5: "  func.return\n"}),
        "verifier",
    ),
    "two functions with one name": (module(6) + function(2), "same symbol"),
    "a call to a missing function": (
        module(6, {3: "  %m = func.call @missing(%a) : (i32) -> i32\n"}),
        "verifier",
    ),
    "values at the top level": (
        '%v = "test.op"() : () -> i32\n' + module(4),
        "scan",
    ),
    "an unnamed result at the top level": (
        "arith.constant 1 : i32\n" + module(4),
        "names values",
    ),
}


@pytest.mark.parametrize("case", sorted(FALLBACKS))
def test_what_a_sliced_run_cannot_vouch_for_runs_whole(
    case: str, tmp_path: pathlib.Path, sliced_outcomes: list[Outcome]
) -> None:
    text, reason = FALLBACKS[case]
    path = tmp_path / "input.mlir"
    path.write_text(text)
    status, _, err = compare(path, "builtin.module(func.func(cse))")
    assert status == 1 or case.endswith("top level")
    (outcome,) = sliced_outcomes
    assert isinstance(outcome, Fallback)
    assert any(word in outcome.reason for word in reason.split()), outcome.reason
    if status == 1:
        assert err.count("error:") == 1


def sliced_pm(
    pipeline: str = "builtin.module(func.func(canonicalize,cse))",
) -> PassManager:
    pm = PassManager("builtin.module", ir.default_context())
    pm.assign(parse_pass_pipeline(pipeline))
    return pm


def whole_run(
    text: str, pipeline: str = "builtin.module(func.func(canonicalize,cse))"
) -> str:
    top = ir.parse_module(text, ir.default_context(), "input.mlir")
    pm = sliced_pm(pipeline)
    pm.run(top)
    return ir.print_op(top)


def test_calls_across_batches_are_verified_against_their_callees() -> None:
    """Each piece is its own batch here: the callee is parsed beside the
    caller as a reference-only op, which the pipeline leaves alone and which
    is not printed twice."""
    text = module(6)  # @f4 calls @f1
    outcome = run_sliced(text, "input.mlir", sliced_pm(), jobs=8, serial_budget=0)
    assert isinstance(outcome, SlicedOutcome)
    assert outcome.output == whole_run(text)
    assert outcome.output is not None and outcome.output.count("func.func @f1(") == 1
    assert outcome.profile.batches == 6


class MarkFunction(OperationPass):
    """Sets an attribute on the function it runs on: a change outside its
    regions, which its callers' verification could depend on."""

    argument = "test-mark-function"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        self.get_operation().attributes["test.marked"] = UnitAttr()


def test_a_callee_changed_outside_its_regions_makes_the_run_whole() -> None:
    """The caller was verified against the callee as it was; if a pass changed
    the callee outside its regions, the sliced run cannot stand for the
    whole one."""
    pm = PassManager("builtin.module", ir.default_context())
    pm.nest("func.func").add(MarkFunction())
    outcome = run_sliced(module(6), "input.mlir", pm, jobs=8, serial_budget=0)
    assert isinstance(outcome, Fallback)
    assert "referenced op changed" in outcome.reason
    alone = run_sliced(module(3), "input.mlir", pm, jobs=8, serial_budget=0)
    assert isinstance(alone, SlicedOutcome)  # no calls: nothing to compare
    assert alone.output is not None and alone.output.count("test.marked") == 3


def test_batches_shipped_as_text_to_a_process_pool(
    process_pool: ProcessPoolExecutor,
) -> None:
    text = module(40, {9: '  "test.crash"() : () -> ()\n'})
    pipeline = (
        "builtin.module(func.func(canonicalize,test-pass-crash-on-op{op=test.crash}))"
    )
    remote = shipped_runner(process_pool, 2, allow_unregistered=True)
    ctx = ir.default_context(allow_unregistered=True)
    pm = PassManager("builtin.module", ctx)
    pm.assign(parse_pass_pipeline(pipeline))
    outcome = run_sliced(text, "input.mlir", pm, jobs=2, remote=remote)
    assert isinstance(outcome, SlicedOutcome)
    assert outcome.output is None  # the crash fails the pipeline
    crashes = [
        event
        for event in outcome.events
        if "test-pass-crash-on-op: found 'test.crash'" in event.message
    ]
    assert len(crashes) == 1
    line = text[: text.index("func.func @f9(")].count("\n") + 1
    assert str(crashes[0].location) == f"input.mlir:{line}:1"


def test_observed_runs_and_other_pipelines_are_not_sliced() -> None:
    text = module(4)
    assert isinstance(
        run_sliced(text, "x", sliced_pm("builtin.module(cse)"), jobs=2), Fallback
    )
    first = sliced_pm("builtin.module(symbol-dce,func.func(cse))")
    assert "start with nested pipelines" in _reason(
        run_sliced(text, "x", first, jobs=2)
    )
    timed = sliced_pm()
    timed.enable_timing()
    assert "observed" in _reason(run_sliced(text, "x", timed, jobs=2))
    unverified = sliced_pm()
    unverified.enable_verifier(False)
    assert "verifier" in _reason(run_sliced(text, "x", unverified, jobs=2))


def _reason(outcome: Outcome) -> str:
    assert isinstance(outcome, Fallback)
    return outcome.reason


# --- the scan ------------------------------------------------------------------


def pieces(text: str) -> list[str]:
    slices = scan_slices(text)
    assert slices is not None
    return [text[p.start : p.end].strip() for p in slices.pieces]


def test_the_scan_finds_top_level_ops_through_strings_comments_and_brackets() -> None:
    text = textwrap.dedent("""\
        #map = affine_map<(d0) -> (d0)>
        // a comment with { and "
        func.func @a(%x: i32,
                     %y: i32) -> i32 attributes {s = "}{ //"} {
          func.return %x : i32
        }
        "test.op"() ({
          "test.inner"() : () -> ()
        }) {callee = @a} : () -> ()
        func.func private @"quoted name"()
        """)
    found = pieces(text)
    assert [p.split("\n")[0] for p in found] == [
        "func.func @a(%x: i32,",
        '"test.op"() ({',
        'func.func private @"quoted name"()',
    ]
    slices = scan_slices(text)
    assert slices is not None
    assert slices.shell.startswith("#map = affine_map")
    assert [p.symbol for p in slices.pieces] == ["a", None, "quoted name"]
    assert slices.pieces[1].references == frozenset({"a"})
    assert slices.line_of == (3, 7, 10)
    assert slices.piece_text(0).text.startswith("func.func @a")


def test_a_batch_parses_neighbouring_pieces_as_one_text() -> None:
    text = textwrap.dedent("""\
        func.func @a() {
          func.return
        }
        // between a and b
          func.func @b() {
            func.return
          }
        #t = !test.type<"x">
        func.func @c() {
          func.call @e() : () -> ()
          func.return
        }
        func.func @d() {
          func.return
        }
        func.func @e() {
          func.return
        }
        """)
    slices = scan_slices(text)
    assert slices is not None
    plan = dataclasses.replace(SlicePlan.of(slices, jobs=1), batches=(range(5),))
    own = plan.own(0)
    # An alias definition separates b from c; e, which c calls, stands alone.
    assert [index for index, _ in own] == [0, 2, 4]
    first, second, third = (piece for _, piece in own)
    assert first.first_line == 1 and first.text.endswith("    func.return\n  }\n")
    assert "// between a and b" in first.text and "#t" not in first.text
    assert second.first_line == 9 and second.text.startswith("func.func @c")
    assert second.text.endswith("}\n") and "func.func @d" in second.text
    assert third.text.startswith("func.func @e") and third.first_line == 16


def test_the_scan_opens_an_explicit_module() -> None:
    text = 'module @m attributes {a = "{"} {\n  func.func @f()\n  func.func @g()\n}\n'
    slices = scan_slices(text, first_line=5)
    assert slices is not None
    assert [p.symbol for p in slices.pieces] == ["f", "g"]
    assert slices.shell == 'module @m attributes {a = "{"} {\n}\n'
    assert slices.line_of == (6, 7)
    assert slices.piece_text(1).text == "  func.func @g()\n"


@pytest.mark.parametrize(
    "text",
    [
        'func.func @f() attributes {s = "unterminated} {\n}\n',
        "func.func @f() {\n",
        "func.func @f() {\n}\n}\n",
        "func.func @f()\n{-#\n#-}\n",
        '"builtin.module"() ({\n}) : () -> ()\n',
        "%0 = arith.constant 1 : i32\n",
        "// only a comment\n",
    ],
)
def test_the_scan_gives_up_on_text_it_cannot_cut(text: str) -> None:
    assert scan_slices(text) is None


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list('func.@%"{}()[]/\n #!=-ab')), max_size=200)
)
def test_the_scan_never_raises_and_pieces_are_ordered_spans(text: str) -> None:
    slices = scan_slices(text)
    if slices is None:
        return
    previous = 0
    for piece in slices.pieces:
        assert previous <= piece.start < piece.end <= len(text)
        previous = piece.end


def test_an_executor_that_goes_away_is_one_error() -> None:
    """A pool shut down under a sliced run (as a Dask client whose scheduler
    died cancels its futures) ends the run with `ExecutorLostError`."""
    pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    remote = shipped_runner(pool, 1, allow_unregistered=False)
    pool.submit(int).result()  # the worker is up
    pool.shutdown(wait=False, cancel_futures=True)
    pm = sliced_pm("builtin.module(func.func(test-busy-work{rounds=200}))")
    with pytest.raises(ExecutorLostError, match="executor refused the run's tasks"):
        run_sliced(module(40), "input.mlir", pm, jobs=2, remote=remote)


def test_an_unreachable_scheduler_is_one_error_within_the_timeout() -> None:
    with pytest.raises(PassflowError, match="cannot connect to the Dask scheduler"):
        DaskExecutor("tcp://127.0.0.1:1", timeout=0.5)


# --- one owner for parallelism ---------------------------------------------------

_FORK_LOG: list[pathlib.Path] = []


def _log_fork() -> None:
    if _FORK_LOG:
        with _FORK_LOG[0].open("a") as log:
            log.write(f"{os.getpid()} {os.getppid()}\n")


os.register_at_fork(after_in_child=_log_fork)


@pytest.mark.parametrize("jobs", [2, 3])
@pytest.mark.parametrize("whole", [False, True])
def test_jobs_bound_the_processes_of_a_run(
    jobs: int, whole: bool, tmp_path: pathlib.Path, sliced_outcomes: list[Outcome]
) -> None:
    """`--jobs=N` is a bound on the whole process tree: a sliced run's workers
    run their nested pipelines serially (they forked workers of their own
    before), and a whole run forks at most N - 1 workers. Every fork is
    logged by the forked process, with its parent."""
    path = tmp_path / "input.mlir"
    path.write_text(module(40))
    log = tmp_path / "forks"
    log.touch()
    argv = [str(path), f"--jobs={jobs}", "--executor=process"]
    argv.append("--pass-pipeline=builtin.module(func.func(cse,canonicalize))")
    if whole:
        argv.append("--mlir-pass-statistics")  # observed: runs whole
    _FORK_LOG.append(log)
    try:
        status, _, _ = run_tool(argv)
    finally:
        _FORK_LOG.clear()
    assert status == 0
    forks = [line.split() for line in log.read_text().splitlines()]
    parents = {parent for _, parent in forks}
    assert parents == {str(os.getpid())}, forks  # no worker forked another
    assert 1 <= len(forks) <= jobs - 1
    assert [type(o) for o in sliced_outcomes] == [Fallback if whole else SlicedOutcome]
