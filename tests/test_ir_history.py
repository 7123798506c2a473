"""The IR history (`--ir-history=FILE`, `pm.enable_ir_history`) and its query
command (`passflow-history`): every pass execution recorded with what it did
to each top-level symbol, module passes per symbol, changes made inside
dynamic pipelines, statistics and diagnostics beside their pass."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from passflow import HistoryFile, PassManager, ir
from passflow.diagnostics import PassPipelineError
from passflow.instruments.history_store import HistoryFileError
from passflow.pass_base import OperationPass
from passflow.pipeline_text import parse_pass_pipeline
from passflow.tools import history, opt

PIPELINE = "builtin.module(inline,func.func(canonicalize,cse),symbol-dce)"

INPUT = """\
func.func private @callee(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %r = arith.addi %a, %c0 : i32
  func.return %r : i32
}
func.func @f1(%x: i32) -> i32 {
  %0 = func.call @callee(%x) : (i32) -> i32
  %1 = arith.addi %0, %x : i32
  %2 = arith.addi %0, %x : i32
  %3 = arith.muli %1, %2 : i32
  func.return %3 : i32
}
func.func @f2(%x: i32) -> i32 {
  func.return %x : i32
}
"memref.global"() <{sym_name = "unused", sym_visibility = "private", type = memref<i32>, initial_value}> : () -> ()
"""


def _record(tmp_path: Path, text: str = INPUT, pipeline: str = PIPELINE) -> HistoryFile:
    path = tmp_path / "history.db"
    pm = PassManager(context=ir.default_context())
    pm.assign(parse_pass_pipeline(pipeline))
    pm.enable_ir_history(str(path))
    pm.run(ir.parse_module(text, pm.context))
    return HistoryFile(str(path))


def test_a_module_pass_is_recorded_per_symbol_it_changed(tmp_path: Path) -> None:
    found = _record(tmp_path)
    inline = [c for c in found.changes(pass_name="inline")]
    assert {(c.symbol, c.what) for c in inline} == {
        ("@f1", "changed"),
        ("@callee", "erased"),  # inlined everywhere, and private
    }
    f1 = next(c for c in inline if c.symbol == "@f1")
    assert f1.before is not None and "func.call @callee" in f1.before
    assert f1.after is not None and "func.call" not in f1.after
    assert f1.after.startswith("func.func @f1")  # the function, not the module
    assert "@f2" not in {c.symbol for c in found.changes()}


def test_changes_inside_a_dynamic_pipeline_name_their_spawner(tmp_path: Path) -> None:
    found = _record(tmp_path)
    nested = found.changes("@callee", "canonicalize")
    assert [c.execution.path for c in nested] == ["inline/func.func/canonicalize"]
    parent = nested[0].execution.parent
    by_id = {e.id: e for e in found.executions()}
    assert parent is not None and by_id[parent].argument == "inline"
    assert nested[0].after is not None and "arith.addi" not in nested[0].after


def test_an_erased_symbol_and_the_first_change(tmp_path: Path) -> None:
    found = _record(tmp_path)
    callee = found.changes("@callee")
    # In the order the executions started: the inliner, then its pipeline.
    assert [(c.execution.path, c.what) for c in callee] == [
        ("inline", "erased"),
        ("inline/func.func/canonicalize", "changed"),
    ]
    (unused,) = found.changes("@unused")
    assert (unused.execution.path, unused.what) == ("symbol-dce", "erased")
    assert unused.after is None and unused.before is not None
    assert found.changes("@f1")[0].execution.argument == "inline"


def test_statistics_and_diagnostics_sit_beside_their_execution(tmp_path: Path) -> None:
    found = _record(tmp_path)
    (cse,) = found.changes("@f1", "cse")
    assert found.statistics(cse.execution.id) == [("num-cse'd", 2)]
    assert "-  %2 = arith.muli %0, %1 : i32" in cse.diff()


class _FailOnF2(OperationPass):
    name = "FailOnF2"
    argument = "test-history-fail"

    def run_on_operation(self) -> None:
        op = self.get_operation()
        if ir.symbol_name(op) == "f2":
            self.emit_error(op, "refusing @f2")
            self.signal_pass_failure()


def test_a_failed_run_is_written_with_its_failure(tmp_path: Path) -> None:
    path = tmp_path / "history.db"
    pm = PassManager(context=ir.default_context())
    pm.nest("func.func").add(_FailOnF2())
    pm.enable_ir_history(str(path))
    with pytest.raises(PassPipelineError):
        pm.run(ir.parse_module(INPUT, pm.context))
    found = HistoryFile(str(path))
    failed = [e for e in found.executions() if e.failed and e.kind == "pass"]
    assert [e.op for e in failed] == ["func.func @f2"]
    assert [m for _, _, m in found.diagnostics(failed[0].id)] == ["refusing @f2"]


def _opt(tmp_path: Path, *flags: str) -> Path:
    source = tmp_path / "input.mlir"
    source.write_text(INPUT)
    db = tmp_path / "history.db"
    status = opt.main(
        [
            str(source),
            "-p",
            PIPELINE,
            f"--ir-history={db}",
            "-o",
            str(tmp_path / "out"),
            *flags,
        ]
    )
    assert status == 0
    return db


def test_passflow_history_answers_for_one_symbol(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _opt(tmp_path)
    capsys.readouterr()
    assert history.main([str(db), "@f1", "--no-diff"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(" on ")[0] for line in out if line.startswith("#")] == [
        "#1 inline",
        "#8 func.func/cse",
    ]
    assert history.main([str(db), "f1", "--first", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    (first,) = answer["changes"]
    assert first["path"] == "inline" and first["what"] == "changed"
    assert "-  %0 = func.call @callee(%x) : (i32) -> i32" in first["diff"]


def test_passflow_history_finds_the_ops_of_a_source_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _opt(tmp_path)
    capsys.readouterr()
    assert history.main([str(db), "--from", "input.mlir:8", "--json", "--no-diff"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert [(o["symbol"], o["op"]) for o in answer["ops"]] == [("@f1", "arith.addi")]
    assert {c["path"] for c in answer["changes"]} == {"inline", "func.func/cse"}


def test_passflow_history_summary_counts_each_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _opt(tmp_path)
    capsys.readouterr()
    assert history.main([str(db), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = {row["path"]: row for row in summary["passes"]}
    assert rows["inline"]["changed"] == 2  # @f1 changed, @callee erased
    assert rows["func.func/cse"] == rows["func.func/cse"] | {"runs": 2, "changed": 1}
    assert rows["symbol-dce"]["changed"] == 1
    assert summary["runs"][0]["pipeline"].startswith("builtin.module(inline")


def test_each_input_chunk_is_a_run(tmp_path: Path) -> None:
    db = _opt(tmp_path, "--split-input-file")
    assert [run for run, _ in HistoryFile(str(db)).runs()] == [1]
    source = tmp_path / "two.mlir"
    source.write_text(INPUT + "// -----\n" + INPUT)
    db2 = tmp_path / "two.db"
    assert (
        opt.main(
            [str(source), "-p", PIPELINE, f"--ir-history={db2}", "--split-input-file"]
        )
        == 0
    )
    found = HistoryFile(str(db2))
    assert [run for run, _ in found.runs()] == [1, 2]
    assert {c.execution.run for c in found.changes("@f1")} == {1, 2}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"not a database at all, just text\n", "is not an IR history"),
        (None, "no such file"),
    ],
)
def test_what_is_not_a_history_is_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    content: bytes | None,
    message: str,
) -> None:
    path = tmp_path / "h.db"
    if content is not None:
        path.write_bytes(content)
    assert history.main([str(path), "@f1"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_another_database_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE t(x)")
    with pytest.raises(HistoryFileError, match="is not an IR history"):
        HistoryFile(str(path))


def test_unknown_symbol_and_pass_say_what_exists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _opt(tmp_path)
    capsys.readouterr()
    assert history.main([str(db), "@nope"]) == 1
    err = capsys.readouterr().err
    assert "error: no symbol @nope in the history" in err
    assert "note: the changed symbols include @callee, @f1, @unused" in err
    assert history.main([str(db), "--pass", "cs"]) == 1
    assert "note: passes that ran: canonicalize, cse, inline, symbol-dce" in (
        capsys.readouterr().err
    )
    assert history.main([str(db), "@f2"]) == 0
    assert capsys.readouterr().out == "no pass changed @f2\n"


def test_an_unwritable_history_fails_the_run_and_leaves_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(INPUT)
    missing = tmp_path / "no" / "history.db"
    out = tmp_path / "out.mlir"
    with pytest.raises(SystemExit) as exit_info:
        opt.main(
            [str(source), "-p", PIPELINE, f"--ir-history={missing}", "-o", str(out)]
        )
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == (
        f"passflow-opt: cannot open output file '{missing}': No such file or directory\n"
    )
    assert not out.exists() and not missing.parent.exists()


def test_a_pass_then_a_symbol_in_either_order(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = _opt(tmp_path)
    capsys.readouterr()
    assert history.main([str(db), "--pass", "cse", "@f1", "--no-diff"]) == 0
    after = capsys.readouterr().out
    assert history.main([str(db), "@f1", "--pass", "cse", "--no-diff"]) == 0
    assert capsys.readouterr().out == after
    assert after.startswith("#") and "func.func/cse" in after and "@f1" in after


def test_texts_of_any_size_read_back_whole(tmp_path: Path) -> None:
    # A text is compressed with a window its size: one far past zlib's
    # largest window (32 KiB) and a short one both read back as printed.
    adds = "".join(
        f"  %v{i} = arith.addi %v{i - 1}, %x : i32\n" for i in range(1, 2000)
    )
    text = (
        "func.func @big(%x: i32) -> i32 {\n"
        "  %v0 = arith.addi %x, %x : i32\n"
        f"{adds}  %dead = arith.muli %v1999, %x : i32\n"
        "  func.return %v1999 : i32\n}\n"
        "func.func @small(%x: i32) -> i32 {\n"
        "  %dead = arith.muli %x, %x : i32\n"
        "  func.return %x : i32\n}\n"
    )
    found = _record(tmp_path, text, "builtin.module(func.func(canonicalize))")
    module = ir.parse_module(text, ir.default_context())
    big, small = (ir.print_op(op) for op in ir.direct_children(module))
    changes = {c.symbol: c for c in found.changes(pass_name="canonicalize")}
    assert len(big) > 64 * 1024
    assert changes["@big"].before == big and changes["@small"].before == small
    after = changes["@big"].after
    assert after is not None and "%dead" not in after and "%v1999" in after
