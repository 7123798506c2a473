"""The IR history of sliced runs and of cached runs: workers send their
records back with their batches and the parent alone writes the file, and a
piece the result cache answers is recorded from the cache. Either way the
history answers `passflow-history`'s questions as a serial run's does."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import cast

import test_sliced
from test_sliced import Outcome

from passflow import HistoryFile
from passflow.sliced import SlicedOutcome
from passflow.sliced.outcome import Fallback
from passflow.tools import history, opt

CALLER = """\
func.func @f{i}(%x: i32) -> i32 {{
  %k = arith.constant {i} : i32
  %0 = func.call @callee(%k) : (i32) -> i32
  %1 = arith.addi %0, %x : i32
  %2 = arith.addi %0, %x : i32
  %3 = arith.muli %1, %2 : i32
  func.return %3 : i32
}}
"""

CALLEE = """\
func.func private @callee(%a: i32) -> i32 {
  %c5 = arith.constant 5 : i32
  %r = arith.addi %a, %c5 : i32
  func.return %r : i32
}
"""

INPUT = CALLEE + "".join(CALLER.format(i=i) for i in range(1, 9))
"""Eight callers of one private callee: eight batches on two jobs. Each
passes a constant, which the inliner's canonicalize folds once inlined."""

TAIL = "builtin.module(func.func(canonicalize,cse),inline,symbol-dce)"
"""Nested pipelines (run in the batches), then module passes (run in the
parent): the inliner's dynamic pipeline and symbol-dce's erasure."""

NESTED = "builtin.module(func.func(canonicalize,cse))"
"""Nested pipelines only: what the result cache serves."""

MULI_LINE = INPUT.splitlines().index("  %3 = arith.muli %1, %2 : i32") + 1
"""The line of @f1's `arith.muli` (1-based)."""


sliced_outcomes = test_sliced.sliced_outcomes
"""A fixture: passflow-opt's process executor forks at
once, and the outcomes of its sliced runs are recorded."""


def _opt(source: Path, db: Path, pipeline: str, *flags: str) -> str:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = opt.main([str(source), "-p", pipeline, f"--ir-history={db}", *flags])
    assert status == 0, err.getvalue()
    return out.getvalue()


def _ask(db: Path, *question: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert history.main([str(db), *question]) == 0
    return out.getvalue()


def _untimed(answer: object, origin: bool = True) -> object:
    """`answer` without its times (and, unless `origin`, where it came from)."""
    dropped = {"wall"} if origin else {"wall", "origin"}
    if isinstance(answer, dict):
        items = cast("dict[str, object]", answer).items()
        return {k: _untimed(v, origin) for k, v in items if k not in dropped}
    if isinstance(answer, list):
        return [_untimed(v, origin) for v in cast("list[object]", answer)]
    return answer


QUESTIONS = [
    ("@f5", "--first", "--json"),
    ("@f5", "--json"),
    ("--pass", "cse", "--json"),
    ("--pass", "canonicalize", "--json"),
    ("@callee", "--json"),
    ("--from", f"input.mlir:{MULI_LINE}", "--json"),
]


def _answers(db: Path, origin: bool = True) -> list[object]:
    return [_untimed(json.loads(_ask(db, *q)), origin) for q in QUESTIONS]


def test_a_sliced_run_answers_as_a_serial_run(
    tmp_path: Path, sliced_outcomes: list[Outcome]
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(INPUT)
    serial = _opt(source, tmp_path / "serial.db", TAIL, "--mlir-disable-threading")
    parallel = _opt(source, tmp_path / "jobs.db", TAIL, "--jobs=2")
    assert [type(o) for o in sliced_outcomes] == [SlicedOutcome]
    outcome = sliced_outcomes[0]
    assert isinstance(outcome, SlicedOutcome)
    assert outcome.profile.workers >= 1  # some batches sent their records back
    assert parallel == serial
    answers = _answers(tmp_path / "jobs.db")
    assert answers == _answers(tmp_path / "serial.db")
    first, f5, cse, canonicalize, callee, origins = answers
    # The first pass that changed @f5 ran in a batch; the inliner (a module
    # pass, in the parent) changed it alone, not as the whole module.
    assert [c["path"] for c in first["changes"]] == ["func.func/cse"]  # type: ignore[index]
    assert [c["path"] for c in f5["changes"]] == [  # type: ignore[index]
        "func.func/cse",
        "inline",
        "inline/func.func/canonicalize",
    ]
    assert {c["symbol"] for c in cse["changes"]} == {f"@f{i}" for i in range(1, 9)}  # type: ignore[index]
    # Changes inside the inliner's dynamic pipeline, and the erasure.
    assert "inline/func.func/canonicalize" in {
        c["path"]
        for c in canonicalize["changes"]  # type: ignore[index]
    }
    assert ("inline", "erased") in {
        (c["path"], c["what"])
        for c in callee["changes"]  # type: ignore[index]
    }
    assert [o["symbol"] for o in origins["ops"]] == ["@f1"]  # type: ignore[index]
    summary = json.loads(_ask(tmp_path / "jobs.db", "--json"))
    assert summary == json.loads(_ask(tmp_path / "serial.db", "--json")) | {
        "passes": summary["passes"]
    }
    assert [_untimed(row) for row in summary["passes"]] == [
        _untimed(row)
        for row in json.loads(_ask(tmp_path / "serial.db", "--json"))["passes"]
    ]


def test_a_sliced_run_without_module_passes_writes_its_history(
    tmp_path: Path, sliced_outcomes: list[Outcome]
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(INPUT)
    _opt(source, tmp_path / "serial.db", NESTED, "--mlir-disable-threading")
    _opt(source, tmp_path / "jobs.db", NESTED, "--jobs=2")
    assert [type(o) for o in sliced_outcomes] == [SlicedOutcome]
    assert _answers(tmp_path / "jobs.db") == _answers(tmp_path / "serial.db")
    runs = HistoryFile(str(tmp_path / "jobs.db")).runs()
    assert [p.startswith("builtin.module(func.func(") for _, p in runs] == [True]
    # One execution of the adaptor, as in a serial run, however many batches.
    adaptors = [
        e
        for e in HistoryFile(str(tmp_path / "jobs.db")).executions()
        if e.kind == "adaptor"
    ]
    assert len(adaptors) == 1


def test_a_fallback_records_the_whole_run_once(
    tmp_path: Path, sliced_outcomes: list[Outcome]
) -> None:
    source = tmp_path / "input.mlir"
    # Two ops define @f1: the sliced run cannot vouch for it, the whole run
    # reports the error.
    source.write_text(INPUT + CALLER.format(i=1).replace("@f1", "@g1"))
    _opt(source, tmp_path / "jobs.db", NESTED, "--jobs=2")
    assert [type(o) for o in sliced_outcomes] in ([SlicedOutcome], [Fallback])
    found = HistoryFile(str(tmp_path / "jobs.db"))
    assert [run for run, _ in found.runs()] == [1]
    assert len({c.symbol for c in found.changes(pass_name="cse")}) == 9


def test_a_warm_run_answers_from_the_cache(tmp_path: Path) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(INPUT)
    cache = f"--cache={tmp_path / 'cache'}"
    serial = "--mlir-disable-threading"
    plain = _opt(source, tmp_path / "plain.db", NESTED, serial)
    assert _opt(source, tmp_path / "cold.db", NESTED, serial, cache) == plain
    assert _opt(source, tmp_path / "warm.db", NESTED, serial, cache) == plain
    assert _answers(tmp_path / "cold.db") == _answers(tmp_path / "plain.db")
    assert _answers(tmp_path / "warm.db", origin=False) == _answers(
        tmp_path / "plain.db", origin=False
    )
    warm = HistoryFile(str(tmp_path / "warm.db"))
    changes = warm.changes()
    assert changes
    assert {(c.execution.origin, c.execution.wall) for c in changes} == {("cache", 0.0)}
    assert "changed @f5 (from cache)" in _ask(tmp_path / "warm.db", "@f5", "--first")
    assert "func.func/cse  (9 from cache)" in _ask(tmp_path / "warm.db")  # summary
    first = json.loads(_ask(tmp_path / "warm.db", "@f5", "--first", "--json"))
    assert first["changes"][0]["origin"] == "cache"


def test_a_cached_piece_moved_down_answers_where_it_stands(tmp_path: Path) -> None:
    source = tmp_path / "input.mlir"
    cache = f"--cache={tmp_path / 'cache'}"
    source.write_text(INPUT)
    _opt(source, tmp_path / "cold.db", NESTED, "--mlir-disable-threading", cache)
    source.write_text("// a line above\n" + INPUT)
    _opt(source, tmp_path / "warm.db", NESTED, "--mlir-disable-threading", cache)
    warm = HistoryFile(str(tmp_path / "warm.db"))
    assert {c.execution.origin for c in warm.changes("@f1")} == {"cache"}
    assert [o.symbol for o in warm.origins("input.mlir", MULI_LINE + 1)] == ["@f1"]
    assert warm.origins("input.mlir", MULI_LINE) == []


def test_a_cold_run_without_history_is_rerun_for_one(tmp_path: Path) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(INPUT)
    cache = f"--cache={tmp_path / 'cache'}"
    serial = "--mlir-disable-threading"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert opt.main([str(source), "-p", NESTED, serial, cache]) == 0
    _opt(source, tmp_path / "plain.db", NESTED, serial)
    _opt(source, tmp_path / "warm.db", NESTED, serial, cache)
    # The entries hold no history: the pieces ran again, and say so.
    assert _answers(tmp_path / "warm.db") == _answers(tmp_path / "plain.db")
    assert {
        c.execution.origin for c in HistoryFile(str(tmp_path / "warm.db")).changes()
    } == {"run"}
