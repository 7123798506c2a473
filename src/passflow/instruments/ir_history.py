"""The IR history (`--ir-history=FILE`, `PassManager.enable_ir_history`): every
pass execution of a run and what it did to each top-level symbol, in one
SQLite file that `passflow-history` (and `history_store.HistoryFile`) queries.

The unit of change is a *top-level symbol* (`symbol_changes`): a pass on a
function records that function; a module pass (the inliner, symbol-dce)
records each function it changed, made or erased, never the whole module.
Each unit is printed when first seen and once per change; texts are stored
once per distinct content (SHA-256, zlib-compressed).

Executions are recorded with their place in the run: `parent` is the
execution that spawned the pipeline they ran in (the adaptor of a nested
pipeline, or the pass that ran a dynamic pipeline, such as the inliner's
canonicalize), and `path` spells that chain (`inline/func.func/canonicalize`).
Each execution's statistics (what moved while it ran) and diagnostics sit
beside it; at the end of each run, the source positions of the final IR's ops
are recorded by symbol, so "which ops came from input.mlir:120" has an answer.

The database is built in memory and written whole at the end of each
`PassManager.run` (`passflow.output_file`: complete or absent, never half a
file). Like every instrumentation, it makes passflow-opt run the file in this
process (instrumented runs are never sliced nor served from the result cache).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
import time
import zlib
from dataclasses import dataclass, field

from passflow import ir
from passflow.diagnostics import Diagnostic
from passflow.instrumentation import PassInstrumentation, PipelineParentInfo
from passflow.instruments.history_store import SCHEMA, SCHEMA_VERSION
from passflow.instruments.symbol_changes import (
    SymbolState,
    SymbolTracker,
    top_level_units,
)
from passflow.ir import Operation
from passflow.output_file import write_output_bytes
from passflow.pass_base import Pass
from passflow.statistics import statistic_values

__all__ = ["IRHistory"]


@dataclass(eq=False, slots=True)
class _Frame:
    """A pass execution in progress, or a pipeline (`pass_` None)."""

    execution: int | None
    path: str
    pass_: Pass | None = None
    op: Operation | None = None
    wall0: float = 0.0
    cpu0: float = 0.0
    units: list[SymbolState] | None = None
    statistics: dict[str, int] = field(default_factory=lambda: dict[str, int]())


def _root(op: Operation) -> Operation:
    while (parent := op.parent_op()) is not None:
        op = parent
    return op


@dataclass(eq=False)
class IRHistory(PassInstrumentation):
    """Records every pass execution into the IR history at `path`; each
    `PassManager.run` ends with `end_run`, which writes the file.

    One history may serve several pass managers (passflow-opt's
    `--split-input-file` chunks): each run is a row of `runs`.
    """

    path: str
    _db: sqlite3.Connection = field(init=False)
    _run: int | None = field(default=None, init=False)
    _runs: int = field(default=0, init=False)
    _executions: int = field(default=0, init=False)
    _stacks: dict[int, list[_Frame]] = field(default_factory=lambda: {}, init=False)
    _tracker: SymbolTracker = field(default_factory=SymbolTracker, init=False)
    _stored: dict[bytes, int] = field(default_factory=lambda: {}, init=False)
    _passes: dict[tuple[str, str, str, str], int] = field(
        default_factory=lambda: {}, init=False
    )
    _root: Operation | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._db = sqlite3.connect(":memory:", check_same_thread=False)
        self._db.executescript(SCHEMA)
        self._db.execute(
            "INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),)
        )

    # --- recording -------------------------------------------------------------

    def _current_run(self) -> int:
        if self._run is None:
            self._runs += 1
            self._run = self._runs
            self._db.execute("INSERT INTO runs VALUES (?, '')", (self._run,))
        return self._run

    def _stack(self) -> list[_Frame]:
        tid = threading.get_ident()
        stack = self._stacks.get(tid)
        if stack is None:
            stack = self._stacks[tid] = []
        return stack

    def _text_id(self, text: str | None) -> int | None:
        """The `texts` id of `text`, stored once (deduped by SHA-256)."""
        if text is None:
            return None
        data = text.encode()
        digest = hashlib.sha256(data).digest()
        found = self._stored.get(digest)
        if found is None:
            found = self._stored[digest] = len(self._stored) + 1
            self._db.execute(
                "INSERT INTO texts VALUES (?, ?)", (found, zlib.compress(data))
            )
        return found

    def _pass_id(self, pass_: Pass, path: str) -> int:
        key = (
            pass_.display_name if pass_.is_adaptor else pass_.name,
            pass_.argument,
            "adaptor" if pass_.is_adaptor else "pass",
            path,
        )
        found = self._passes.get(key)
        if found is None:
            found = self._passes[key] = len(self._passes) + 1
            self._db.execute("INSERT INTO passes VALUES (?, ?, ?, ?, ?)", (found, *key))
        return found

    def run_before_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        spawner: _Frame | None = None
        for frame in reversed(self._stacks.get(parent.parent_thread_id, [])):
            if frame.pass_ is parent.parent_pass:
                spawner = frame
                break
        path = spawner.path if spawner is not None else ""
        anchor = op_name or "any"
        self._stack().append(
            _Frame(
                spawner.execution if spawner is not None else None,
                f"{path}/{anchor}" if path else anchor,
            )
        )

    def run_after_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        stack = self._stack()
        while stack:
            if stack.pop().pass_ is None:
                return

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        run = self._current_run()
        stack = self._stack()
        if not stack and self._root is None:
            self._root = _root(op)
        top = stack[-1] if stack else None
        self._executions += 1
        label = pass_.argument or pass_.name
        frame = _Frame(
            self._executions,
            "" if pass_.is_adaptor else label,
            pass_,
            op,
            time.perf_counter(),
            time.thread_time(),
        )
        parent_path = top.path if top is not None else ""
        if not pass_.is_adaptor:
            frame.path = f"{parent_path}/{label}" if parent_path else label
            frame.units = self._tracker.snapshot(
                op,
                enclosed=any(
                    f.pass_ is not None and not f.pass_.is_adaptor for f in stack
                ),
            )
            frame.statistics = {
                stat.name: value for stat, value in statistic_values(pass_)
            }
        else:
            frame.path = parent_path
        self._db.execute(
            "INSERT INTO executions VALUES (?, ?, ?, ?, ?, 0, 0, 0, 'run')",
            (
                frame.execution,
                run,
                top.execution if top is not None else None,
                self._pass_id(pass_, frame.path),
                ir.op_label(op),
            ),
        )
        stack.append(frame)

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        self._end_pass(pass_, op, failed=False)

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        self._end_pass(pass_, op, failed=True)

    def _end_pass(self, pass_: Pass, op: Operation, failed: bool) -> None:
        stack = self._stack()
        frame: _Frame | None = None
        while stack:
            frame = stack.pop()
            if frame.pass_ is pass_:
                break
        if frame is None or frame.pass_ is not pass_:
            return
        wall = time.perf_counter() - frame.wall0
        cpu = time.thread_time() - frame.cpu0
        self._db.execute(
            "UPDATE executions SET wall = ?, cpu = ?, failed = ? WHERE id = ?",
            (wall, cpu, int(failed), frame.execution),
        )
        if frame.units is not None:
            self._record_changes(frame, op, failed)
            moved = [
                (frame.execution, stat.name, value - frame.statistics.get(stat.name, 0))
                for stat, value in statistic_values(pass_)
                if value != frame.statistics.get(stat.name, 0)
            ]
            self._db.executemany("INSERT INTO statistics VALUES (?, ?, ?)", moved)

    def _record_changes(self, frame: _Frame, op: Operation, failed: bool) -> None:
        rows = [
            (
                frame.execution,
                change.label,
                self._text_id(change.before),
                self._text_id(change.after),
            )
            for change in self._tracker.changes(frame.units or [], op, failed=failed)
        ]
        self._db.executemany("INSERT INTO changes VALUES (?, ?, ?, ?)", rows)

    def observe(self, diagnostic: Diagnostic) -> None:
        """Record `diagnostic` beside the pass running on this thread."""
        execution: int | None = None
        for frame in reversed(self._stacks.get(threading.get_ident(), [])):
            if frame.pass_ is not None:
                execution = frame.execution
                break
        self._db.execute(
            "INSERT INTO diagnostics VALUES (?, ?, ?, ?, ?)",
            (
                self._current_run(),
                execution,
                diagnostic.severity.value,
                str(diagnostic.location),
                diagnostic.message,
            ),
        )

    def end_run(self, pipeline: str) -> None:
        """Close the current run (`pipeline` is its textual pipeline): record
        where the final IR's ops came from, and write the file."""
        run = self._current_run()
        self._db.execute("UPDATE runs SET pipeline = ? WHERE id = ?", (pipeline, run))
        if self._root is not None:
            self._record_origins(run, self._root)
        self._run = None
        self._root = None
        self._stacks.clear()
        self._tracker.clear()
        self.write()

    def _record_origins(self, run: int, root: Operation) -> None:
        files = {
            str(name): int(str(id_))
            for id_, name in self._db.execute("SELECT id, name FROM files")
        }
        rows: list[tuple[int, str, str, int, int, int]] = []
        for label, child in top_level_units(root):
            for op in child.walk():
                where = ir.location(op)
                if where.file is None:
                    continue
                file = files.get(where.file)
                if file is None:
                    file = files[where.file] = len(files) + 1
                    self._db.execute(
                        "INSERT INTO files VALUES (?, ?)", (file, where.file)
                    )
                name = ir.operation_name(op).name
                rows.append((run, label, name, file, where.line, where.column))
        self._db.executemany("INSERT INTO origins VALUES (?, ?, ?, ?, ?, ?)", rows)

    def write(self) -> None:
        """Write the history (complete or absent: `passflow.output_file`);
        raises `OutputFileError` when the file cannot be written."""
        self._db.commit()
        write_output_bytes(self.path, self._db.serialize())
