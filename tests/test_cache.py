"""The result cache (`--cache`, `passflow.cache`): a warm run prints
byte for byte what a run without the cache prints, a key changes with
everything that can change a result, and the store survives concurrency and
damage."""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import json
import math
import os
import sqlite3
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar

import pytest
from test_sliced import LIT_CORPUS, module, run_tool

from passflow import OperationPass, PassManager, ir
from passflow.cache import sources
from passflow.cache.code import pipeline_code
from passflow.cache.keys import RunKeys, run_keys
from passflow.cache.store import RENEW_AFTER, CachedPiece, ResultCache, parse_size
from passflow.executors import ProcessExecutor, make_executor
from passflow.pipeline_text import parse_pass_pipeline
from passflow.sliced import SlicedOutcome, run_sliced, scan_slices
from passflow.sliced.batch import BatchResult, BatchRunner
from passflow.sliced.plan import SlicePlan
from passflow.tools import pass_manager_options

T = TypeVar("T")

PIPELINES = [
    "builtin.module(func.func(canonicalize,cse))",
    "builtin.module(func.func(test-pass-failure{gen-diagnostics=true}))",
]


@pytest.fixture
def in_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """passflow-opt's process executor runs every batch in this process."""

    def executor(
        kind: str, jobs: int | None = None, scheduler: str | None = None
    ) -> object:
        if kind == "process":
            return ProcessExecutor(2, serial_budget=math.inf)
        return make_executor(kind, jobs, scheduler)

    monkeypatch.setattr(pass_manager_options, "make_executor", executor)


def tool(argv: list[str]) -> tuple[int, str, str]:
    collecting = gc.isenabled()
    try:
        return run_tool(argv)
    finally:
        if collecting:
            gc.enable()


def stats(directory: Path) -> dict[str, int]:
    with contextlib.closing(ResultCache(directory)) as cache:
        found = cache.stats()
    return {"entries": found.entries, "hits": found.hits, "misses": found.misses}


@pytest.mark.usefixtures("in_process")
@pytest.mark.parametrize("pipeline", PIPELINES)
def test_the_lit_corpus_runs_the_same_cold_and_warm(
    pipeline: str, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    runs: dict[str, dict[str, int]] = {}
    for run in ("cold", "warm"):
        for path in LIT_CORPUS:
            common = [
                str(path),
                f"--pass-pipeline={pipeline}",
                "--allow-unregistered-dialect",
                "--split-input-file",
            ]
            plain = tool([*common, "--mlir-disable-threading"])
            assert tool([*common, f"--cache={cache}"]) == plain, (run, path)
        runs[run] = stats(cache)
    cold, warm = runs["cold"], runs["warm"]
    assert cold["hits"] == 0 and cold["entries"] > 100
    # Every op the cold run stored is a hit; what ran sliced but was not
    # stored (a chunk that fell back) misses again.
    assert warm["hits"] == cold["entries"] == warm["entries"]
    assert warm["misses"] - cold["misses"] == cold["misses"] - cold["entries"]


@pytest.mark.usefixtures("in_process")
def test_a_line_added_moves_the_results_below_it(tmp_path: Path) -> None:
    """A line added in one function of 40, under a pipeline that reports an
    error and a note on every function: that function misses, the 39 others
    (the 20 below it moved down a line) hit, and their diagnostics and the
    source lines under them are the uncached run's."""
    cache = tmp_path / "cache"
    path = tmp_path / "input.mlir"
    text = module(40)
    path.write_text(text)
    argv = [str(path), "-p", PIPELINES[1], f"--cache={cache}"]
    assert tool(argv)[0] == 1 and stats(cache)["misses"] == 40
    header = text.index("\n", text.index("func.func @f19(")) + 1
    edited = text[:header] + "  %added = arith.constant 1 : i32\n" + text[header:]
    path.write_text(edited)
    plain = tool([str(path), "-p", PIPELINES[1], "--mlir-disable-threading"])
    moved = edited[: edited.index("func.func @f20(")].count("\n") + 1
    assert f"{path}:{moved}:1: error" in plain[2]
    assert tool(argv) == plain
    assert stats(cache) == {"entries": 41, "hits": 39, "misses": 41}
    assert tool(argv) == plain


@pytest.mark.usefixtures("in_process")
def test_a_location_written_in_the_text_pins_its_result(tmp_path: Path) -> None:
    """A function whose text writes `loc(...)` reports that location
    wherever it stands: moved by a line, it misses rather than re-base."""
    cache = tmp_path / "cache"
    path = tmp_path / "input.mlir"
    pinned = 'func.func @p() {\n  func.return\n} loc("input.mlir":2:1)\n'
    text = module(3) + pinned
    path.write_text(text)
    argv = [str(path), "-p", PIPELINES[1], f"--cache={cache}"]
    tool(argv)
    path.write_text("\n" + text)
    plain = tool([str(path), "-p", PIPELINES[1], "--mlir-disable-threading"])
    assert "input.mlir:2:1: error" in plain[2]
    assert tool(argv) == plain
    assert stats(cache)["hits"] == 3  # the three functions, not @p
    assert tool(argv) == plain


@pytest.mark.usefixtures("in_process")
def test_a_warm_run_runs_only_what_changed(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = tmp_path / "input.mlir"
    path.write_text(module(40))
    argv = [str(path), "-p", PIPELINES[0], f"--cache={cache}"]
    first = tool(argv)
    assert first[0] == 0 and stats(cache)["misses"] == 40
    tool(argv)
    assert stats(cache)["hits"] == 40
    edited = module(40).replace("arith.constant 0", "arith.constant 7", 1)
    path.write_text(edited)
    plain = tool([str(path), "-p", PIPELINES[0], "--mlir-disable-threading"])
    assert tool(argv) == plain
    assert stats(cache)["misses"] == 41  # the edited function, nothing else


def _cold_run(tmp_path: Path, functions: int) -> tuple[Path, Path, list[str]]:
    """A cold cached run of `module(functions)`: the cache, the input, and
    the command line to run it again."""
    cache = tmp_path / "cache"
    path = tmp_path / "input.mlir"
    path.write_text(module(functions))
    argv = [str(path), "-p", PIPELINES[0], f"--cache={cache}"]
    tool(argv)
    return cache, path, argv


COUNTING_DRIVER = """
import contextlib, io, json, sys
from passflow.cache import keys, store
from passflow.sliced import scan
from passflow.tools import opt

calls = {}

def counting(name, real):
    def count(*args):
        calls[name] = calls.get(name, 0) + 1
        return real(*args)
    return count

scan._scan = counting("scan", scan._scan)
keys._run_keys = counting("keys", keys._run_keys)
store.CachedPiece.from_json = staticmethod(counting("decode", store.CachedPiece.from_json))
with contextlib.redirect_stdout(io.StringIO()):
    opt.main(sys.argv[1:])
json.dump(calls, sys.stdout)
"""


def test_a_full_run_takes_over_what_the_warm_path_read(tmp_path: Path) -> None:
    """After one function was edited, the warm path misses and the full run
    goes on with its work: the text is scanned once, the keys computed once
    and each stored entry decoded once. (In a process of its own, whose
    registry holds passflow's passes alone, as passflow-opt's does.)"""
    cache = tmp_path / "cache"
    path = tmp_path / "input.mlir"
    path.write_text(module(20))
    argv = [str(path), "-p", PIPELINES[0], f"--cache={cache}"]

    def counted_run() -> dict[str, int]:
        # Both runs in processes of their own: this one's registry (what earlier
        # tests registered) is in the cache's key.
        done = subprocess.run(
            [sys.executable, "-c", COUNTING_DRIVER, *argv],
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        return json.loads(done.stdout)

    counted_run()
    edited = module(20).replace("arith.constant 0", "arith.constant 7", 1)
    path.write_text(edited)
    assert counted_run() == {"scan": 1, "keys": 1, "decode": 19}
    assert stats(cache)["misses"] == 21  # the edited function, nothing else


@pytest.mark.usefixtures("in_process")
def test_a_hit_renews_only_a_use_time_an_hour_old(tmp_path: Path) -> None:
    """Eviction needs the order of use to the hour (`RENEW_AFTER`): a warm
    run rewrites the use time of the entries last used longer ago, and
    leaves the others as they are."""
    cache, _, argv = _cold_run(tmp_path, 10)
    with contextlib.closing(sqlite3.connect(cache / "results.sqlite3")) as db:
        db.execute("UPDATE entries SET used = 1000 WHERE rowid % 2 = 0")
        db.commit()
        before = dict(db.execute("SELECT key, used FROM entries").fetchall())
    assert tool(argv)[0] == 0
    with contextlib.closing(sqlite3.connect(cache / "results.sqlite3")) as db:
        after = dict(db.execute("SELECT key, used FROM entries").fetchall())
    old = {key for key, used in before.items() if used == 1000}
    assert len(old) == 5 and all(after[key] > time.time() - RENEW_AFTER for key in old)
    assert all(after[key] == before[key] for key in before.keys() - old)
    assert stats(cache)["hits"] == 10


def _run_keys(text: str, pipeline: str, salt: str) -> RunKeys:
    slices = scan_slices(text)
    assert slices is not None
    pm = PassManager("builtin.module", ir.default_context())
    pm.assign(parse_pass_pipeline(pipeline))
    code = pipeline_code(pm)
    assert not isinstance(code, str)
    return run_keys(None, code, "input.mlir", slices, salt)


def _keys(text: str, pipeline: str = PIPELINES[0], salt: str = "") -> list[str]:
    return list(_run_keys(text, pipeline, salt).pieces)


def _anchors(text: str) -> list[str]:
    return list(_run_keys(text, PIPELINES[0], "").anchors)


CALLER = "func.func @caller() {\n  func.call @callee() : () -> ()\n  func.return\n}\n"
CALLEE = "func.func @callee() {\n  func.return\n}\n"
OTHER = "func.func @other() attributes {a = #a} {\n  func.return\n}\n"


def test_a_key_changes_with_what_can_change_the_result(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text = "#a = 1 : i32\n" + CALLER + CALLEE + OTHER
    base = _keys(text)
    assert base == _keys(text)  # deterministic
    # An option of a pass: every key.
    changed = _keys(
        text, "builtin.module(func.func(canonicalize{max-iterations=3},cse))"
    )
    assert not set(changed) & set(base)
    # A referenced callee: the caller's key and the callee's, not the other's.
    callee = CALLEE.replace("@callee() {", "@callee() attributes {x} {")
    edited = _keys("#a = 1 : i32\n" + CALLER + callee + OTHER)
    assert [a != b for a, b in zip(edited, base, strict=True)] == [True, True, False]
    # An alias (the shell): every key.
    assert not set(_keys("#a = 2 : i32\n" + CALLER + CALLEE + OTHER)) & set(base)
    # A flag the caller hashes into the salt: every key.
    assert not set(_keys(text, salt="generic")) & set(base)
    # A line moved: no key (the results move with the pieces), the anchors of
    # the ops below it.
    moved_text = "#a = 1 : i32\n\n" + CALLER + CALLEE + OTHER
    assert _keys(moved_text) == base
    assert not set(_anchors(moved_text)) & set(_anchors(text))
    # Another xDSL (its source, by content): every key.
    other = tmp_path / "xdsl"
    other.mkdir()
    (other / "__init__.py").write_text("# another xDSL\n")
    monkeypatch.setattr(sources, "xdsl_source", lambda: other)
    assert not set(_keys(text)) & set(base)


PLUGIN = '''
from xdsl.dialects.builtin import UnitAttr

from passflow import OperationPass

class Tagger(OperationPass):
    """Tags every function."""

    argument = "test-cache-tagger"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        for op in self.get_operation().walk():
            if op.name == "arith.constant":
                op.attributes["tag"] = UnitAttr()
'''


def test_an_edited_plugin_pass_misses(tmp_path: Path) -> None:
    source = tmp_path / "cache_plugin.py"
    source.write_text(PLUGIN)
    spec = importlib.util.spec_from_file_location("cache_plugin", source)
    assert spec is not None and spec.loader is not None
    plugin = importlib.util.module_from_spec(spec)
    sys.modules["cache_plugin"] = plugin
    try:
        spec.loader.exec_module(plugin)
        tagger = plugin.Tagger
        assert issubclass(tagger, OperationPass)
        text = module(6)

        def run(cache: ResultCache) -> SlicedOutcome:
            pm = PassManager("builtin.module", ir.default_context())
            pm.nest("func.func").add(tagger())
            outcome = run_sliced(
                text, "in.mlir", pm, jobs=1, serial_budget=math.inf, cache=cache
            )
            assert isinstance(outcome, SlicedOutcome)
            return outcome

        directory = tmp_path / "cache"
        hits = 0
        # A store serves one run: each run opens its own, as passflow-opt does.
        outputs: list[str | None] = []
        for _ in range(2):
            with contextlib.closing(ResultCache(directory)) as cache:
                outputs.append(run(cache).output)
                hits = cache.stats().hits
        assert outputs[0] and outputs[0] == outputs[1] and hits == 6
        source.write_text(PLUGIN + "\n# edited\n")
        with contextlib.closing(ResultCache(directory)) as cache:
            run(cache)
            assert cache.stats().misses == 12  # all six ran again
    finally:
        del sys.modules["cache_plugin"]


def test_only_misses_travel_to_a_remote_executor(tmp_path: Path) -> None:
    shipped: list[int] = []

    def remote(plan: SlicePlan, runner: BatchRunner) -> list[BatchResult]:
        results: list[BatchResult] = []
        for batch, pieces in enumerate(plan.batches):
            shipped.extend(pieces)
            results.append(
                runner.run(
                    batch,
                    plan.own(batch),
                    plan.references(batch),
                    plan.watched,
                    separately=plan.separately,
                )
            )
        return results

    text = module(12)
    with contextlib.closing(ResultCache(tmp_path)) as cache:
        for expected in (12, 0):
            shipped.clear()
            pm = PassManager("builtin.module", ir.default_context())
            pm.assign(parse_pass_pipeline(PIPELINES[0]))
            outcome = run_sliced(
                text, "in.mlir", pm, jobs=2, remote=remote, cache=cache
            )
            assert isinstance(outcome, SlicedOutcome) and outcome.output
            assert len(shipped) == expected


@pytest.mark.usefixtures("in_process")
def test_a_damaged_entry_is_a_miss_and_a_warning(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = tmp_path / "input.mlir"
    path.write_text(module(8))
    argv = [str(path), "-p", PIPELINES[0], f"--cache={cache}"]
    plain = tool([str(path), "-p", PIPELINES[0], "--mlir-disable-threading"])
    tool(argv)
    with contextlib.closing(sqlite3.connect(cache / "results.sqlite3")) as db:
        db.execute(
            "UPDATE entries SET value = substr(value, 1, 20) WHERE rowid % 2 = 0"
        )
        db.execute(
            "UPDATE entries SET value = replace(value, 'func', 'FUNC') WHERE rowid = 1"
        )
        db.commit()
    status, out, err = tool(argv)
    assert (status, out) == plain[:2]
    assert (
        err
        == "passflow-opt: warning: 5 damaged cache entries dropped: the ops run again\n"
    )
    assert tool(argv) == plain  # rewritten


@pytest.mark.usefixtures("in_process")
def test_a_cache_that_cannot_be_used_is_one_note(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    path = tmp_path / "input.mlir"
    path.write_text(module(4))
    plain = tool([str(path), "-p", PIPELINES[0], "--mlir-disable-threading"])
    status, out, err = tool([str(path), "-p", PIPELINES[0], f"--cache={blocker}/sub"])
    assert (status, out) == plain[:2]
    assert err.count("\n") == 1
    assert err.startswith(
        "passflow-opt: note: running without the cache: cannot use the cache in"
    )
    truncated = tmp_path / "broken"
    truncated.mkdir()
    (truncated / "results.sqlite3").write_bytes(b"SQLite format 3\x00" + b"\xff" * 200)
    status, out, err = tool([str(path), "-p", PIPELINES[0], f"--cache={truncated}"])
    assert (status, out) == plain[:2]
    assert err.count("\n") == 1 and "running without the cache" in err


@pytest.mark.usefixtures("in_process")
def test_the_size_cap_evicts_the_least_recently_used(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = tmp_path / "input.mlir"
    path.write_text(module(20))
    argv = [str(path), "-p", PIPELINES[0], f"--cache={cache}", "--cache-max-size=4K"]
    tool(argv)
    with contextlib.closing(ResultCache(cache, parse_size("4K"))) as store:
        counted = store.stats()
    assert 0 < counted.entries < 20 and counted.size <= 4096
    assert parse_size("2G") == 2 << 30 and parse_size("512MiB") == 512 << 20
    with pytest.raises(ValueError):
        parse_size("lots")


def test_stats_and_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cache = tmp_path / "cache"
    with contextlib.closing(ResultCache(cache)) as store:
        store.put_many({"k": CachedPiece((), False, "body", ("f",), ("f",), None)})
    assert tool([f"--cache={cache}", "--cache-stats"])[0] == 0
    status, out, _ = tool([f"--cache={cache}", "--cache-stats", "--cache-clear"])
    assert status == 0 and "entries: 0\n" in out
    assert stats(cache)["entries"] == 0


@pytest.mark.usefixtures("in_process")
def test_observed_runs_bypass_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = tmp_path / "input.mlir"
    path.write_text(module(4))
    for flag in (
        "--mlir-timing",
        "--mlir-pass-statistics",
        "--mlir-print-ir-after-all",
    ):
        tool([str(path), "-p", PIPELINES[0], f"--cache={cache}", flag])
    assert stats(cache)["entries"] == 0


def test_two_processes_share_a_cache(tmp_path: Path) -> None:
    """Two passflow-opt processes fill and read one cache at once: both
    print what a run without the cache prints."""
    cache = tmp_path / "cache"
    inputs: list[Path] = []
    for index in range(2):
        path = tmp_path / f"input{index}.mlir"
        path.write_text(module(120 + index))
        inputs.append(path)
    tool_path = Path(sys.executable).parent / "passflow-opt"
    env = {**os.environ, "PASSFLOW_CACHE_DIR": str(cache)}

    def start(path: Path) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(tool_path), str(path), "-p", PIPELINES[0], "--jobs=2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    for _ in range(2):  # cold (all three filling it at once), then warm
        running = [start(inputs[0]), start(inputs[1]), start(inputs[0])]
        outputs = [process.communicate(timeout=300) for process in running]
        for process, path, (out, err) in zip(
            running, [*inputs, inputs[0]], outputs, strict=True
        ):
            plain = tool([str(path), "-p", PIPELINES[0], "--mlir-disable-threading"])
            assert (process.returncode, out, err) == plain
    assert stats(cache)["entries"] == 241


GENERATED = [
    module(30, {3: '  "test.crash"() : () -> ()\n'}),
    '#zero = 0 : i32\n// { ( [ " @f3\n' + module(12) + '// "}\n',
    'module attributes {test.top = "{"} {\n' + module(10) + "}\n",
    textwrap.dedent("""\
        func.func @a() {
          func.call @b() : () -> ()
          func.return
        }
        func.func @b() {
          func.call @a() : () -> ()
          func.return
        }
        """),
]
"""Modules that stress the scan and the stitching: a crash in one function,
aliases and comments with brackets, an explicit module, mutual recursion."""


def test_generated_modules_run_the_same_cold_and_warm(tmp_path: Path) -> None:
    for index, text in enumerate(GENERATED):
        path = tmp_path / f"case{index}.mlir"
        path.write_text(text)
        for pipeline in (
            *PIPELINES,
            "builtin.module(func.func(test-pass-crash-on-op{op=test.crash}))",
        ):
            common = [str(path), "-p", pipeline, "--allow-unregistered-dialect"]
            plain = tool([*common, "--mlir-disable-threading"])
            cached = [*common, "--mlir-disable-threading", f"--cache={tmp_path / 'c'}"]
            assert tool(cached) == plain
            assert tool(cached) == plain


@pytest.fixture(autouse=True)
def _no_cache_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("PASSFLOW_CACHE_DIR", raising=False)
    yield
