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

The rows are kept in memory (`HistoryRecords`) and written as one SQLite
database at the end of each `PassManager.run` (`passflow.output_file`:
complete or absent, never half a file). A sliced run (`passflow.sliced`)
records each batch apart in whichever process runs it (`start_batch`,
`take_batch`); the batch's records travel back with its result and the
parent, which alone writes the file, merges them in program order (`merge`),
so the file answers as a serial run's does. A piece the result cache answers
is merged from the records stored with it, marked `cache`, without timing.
"""

from __future__ import annotations

import base64
import hashlib
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, cast

from passflow import ir
from passflow.diagnostics import Diagnostic, Location
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
from passflow.statistics import (
    apply_statistic_effects,
    arm_statistics,
    set_statistics_aside,
    statistics_of,
    take_statistic_effects,
)

__all__ = ["HistoryRecords", "IRHistory"]


_PassKey = tuple[str, str, str, str]
"""A pass at its place: name, argument, kind (`pass` or `adaptor`), path."""


@dataclass(eq=False, slots=True)
class _Execution:
    """A row of `executions`, filled in when the pass ends."""

    id: int
    run: int
    parent: int | None
    pass_: int
    op: str
    wall: float = 0.0
    cpu: float = 0.0
    failed: bool = False
    origin: str = "run"

    def row(self) -> tuple[object, ...]:
        return (
            self.id,
            self.run,
            self.parent,
            self.pass_,
            self.op,
            self.wall,
            self.cpu,
            int(self.failed),
            self.origin,
        )


def _compress(data: bytes) -> bytes:
    """`data` zlib-compressed at the default level, with a window (and
    memory) no larger than it needs: setting up zlib's full 32 KiB window
    cost a symbol's text of a few hundred bytes three times its compression.
    The window covers the text and zlib's 262-byte lookahead, so the output
    is as small; `zlib.decompress` reads it as any zlib stream."""
    bits = min(15, max(9, (len(data) + 262).bit_length()))
    compressor = zlib.compressobj(6, zlib.DEFLATED, bits, 4)
    return compressor.compress(data) + compressor.flush()


@dataclass(eq=False, slots=True)
class HistoryRecords:
    """The rows a history holds before it is written: a run's, or one batch's
    of a sliced run (`IRHistory.start_batch`), which the worker sends back
    to the parent with the batch's result and the parent merges
    (`IRHistory.merge`), so that one process alone writes the file.

    Ids are local to the records; texts are keyed by their SHA-256, so a
    text that several batches saw is stored once. Plain data: it pickles
    over the sliced run's channel, and `to_json` is what the result cache
    stores beside a piece's result.
    """

    runs: list[tuple[int, str]] = field(default_factory=lambda: [])
    passes: dict[_PassKey, int] = field(default_factory=lambda: {})
    texts: dict[bytes, tuple[int, bytes]] = field(default_factory=lambda: {})
    """digest -> (id, zlib-compressed text)."""
    executions: list[_Execution] = field(default_factory=lambda: [])
    changes: list[tuple[int, str, int | None, int | None]] = field(
        default_factory=lambda: []
    )
    statistics: list[tuple[int, str, int]] = field(default_factory=lambda: [])
    diagnostics: list[tuple[int, int | None, str, Location, str]] = field(
        default_factory=lambda: []
    )
    files: dict[str, int] = field(default_factory=lambda: {})
    origins: list[tuple[int, str, str, int, int, int]] = field(
        default_factory=lambda: []
    )

    def text_id(self, text: str | None) -> int | None:
        """The id of `text`, stored once (deduped by SHA-256)."""
        if text is None:
            return None
        data = text.encode()
        digest = hashlib.sha256(data).digest()
        found = self.texts.get(digest)
        if found is None:
            found = self.texts[digest] = (len(self.texts) + 1, _compress(data))
        return found[0]

    def pass_id(self, key: _PassKey) -> int:
        found = self.passes.get(key)
        if found is None:
            found = self.passes[key] = len(self.passes) + 1
        return found

    def file_id(self, name: str) -> int:
        found = self.files.get(name)
        if found is None:
            found = self.files[name] = len(self.files) + 1
        return found

    def to_json(self) -> dict[str, object]:
        """The records as JSON data (texts base64), for the result cache."""
        return {
            "passes": [[id_, *key] for key, id_ in self.passes.items()],
            "texts": [
                [id_, digest.hex(), base64.b64encode(data).decode()]
                for digest, (id_, data) in self.texts.items()
            ],
            "executions": [
                [e.id, e.parent, e.pass_, e.op, e.wall, e.cpu, e.failed]
                for e in self.executions
            ],
            "changes": [list(row) for row in self.changes],
            "statistics": [list(row) for row in self.statistics],
            "diagnostics": [
                [e, sev, loc.file, loc.line, loc.column, message]
                for _, e, sev, loc, message in self.diagnostics
            ],
            "files": [[id_, name] for name, id_ in self.files.items()],
            "origins": [list(row[1:]) for row in self.origins],
        }

    @staticmethod
    def from_json(data: object, shift: int = 0) -> HistoryRecords | None:
        """The records `to_json` gave, with every source line moved by
        `shift` (a cached piece played back where it stands now); None for
        anything else (a cache entry is data, never trusted to be well formed)."""
        try:
            return HistoryRecords._from_json(cast("dict[str, Any]", data), shift)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None

    @staticmethod
    def _from_json(data: dict[str, Any], shift: int) -> HistoryRecords:
        found = HistoryRecords()
        for id_, name, argument, kind, path in data["passes"]:
            found.passes[(str(name), str(argument), str(kind), str(path))] = int(id_)
        for id_, digest, text in data["texts"]:
            found.texts[bytes.fromhex(digest)] = (
                int(id_),
                base64.b64decode(text, validate=True),
            )
        for id_, parent, pass_, op, wall, cpu, failed in data["executions"]:
            found.executions.append(
                _Execution(
                    int(id_),
                    0,
                    None if parent is None else int(parent),
                    int(pass_),
                    str(op),
                    float(wall),
                    float(cpu),
                    bool(failed),
                )
            )
        found.changes = [
            (
                int(e),
                str(symbol),
                None if b is None else int(b),
                None if a is None else int(a),
            )
            for e, symbol, b, a in data["changes"]
        ]
        found.statistics = [(int(e), str(n), int(v)) for e, n, v in data["statistics"]]
        for e, severity, file, line, column, message in data["diagnostics"]:
            where = (
                Location()
                if file is None
                else Location(str(file), int(line) + shift, int(column))
            )
            found.diagnostics.append(
                (0, None if e is None else int(e), str(severity), where, str(message))
            )
        found.files = {str(name): int(id_) for id_, name in data["files"]}
        found.origins = [
            (0, str(symbol), str(op), int(f), int(line) + shift, int(col))
            for symbol, op, f, line, col in data["origins"]
        ]
        return found

    def database(self) -> bytes:
        """The records as an IR history file's bytes (`history_store.SCHEMA`)."""
        db = sqlite3.connect(":memory:")
        try:
            db.executescript(SCHEMA)
            db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            db.executemany("INSERT INTO runs VALUES (?, ?)", self.runs)
            db.executemany(
                "INSERT INTO passes VALUES (?, ?, ?, ?, ?)",
                [(id_, *key) for key, id_ in self.passes.items()],
            )
            db.executemany("INSERT INTO texts VALUES (?, ?)", list(self.texts.values()))
            db.executemany(
                "INSERT INTO executions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [execution.row() for execution in self.executions],
            )
            db.executemany("INSERT INTO changes VALUES (?, ?, ?, ?)", self.changes)
            db.executemany("INSERT INTO statistics VALUES (?, ?, ?)", self.statistics)
            db.executemany(
                "INSERT INTO diagnostics VALUES (?, ?, ?, ?, ?)",
                [(r, e, sev, str(loc), m) for r, e, sev, loc, m in self.diagnostics],
            )
            db.executemany(
                "INSERT INTO files VALUES (?, ?)",
                [(id_, name) for name, id_ in self.files.items()],
            )
            db.executemany(
                "INSERT INTO origins VALUES (?, ?, ?, ?, ?, ?)", self.origins
            )
            db.commit()
            return db.serialize()
        finally:
            db.close()


@dataclass(eq=False, slots=True)
class _Frame:
    """A pass execution in progress, or a pipeline (`pass_` None)."""

    execution: _Execution | None
    path: str
    pass_: Pass | None = None
    op: Operation | None = None
    wall0: float = 0.0
    cpu0: float = 0.0
    units: list[SymbolState] | None = None
    statistics: dict[str, object] | None = None
    """The pass's statistic values, set aside while it runs armed."""


def _root(op: Operation) -> Operation:
    while (parent := op.parent_op()) is not None:
        op = parent
    return op


@dataclass(eq=False)
class IRHistory(PassInstrumentation):
    """Records every pass execution into the IR history at `path`; each
    `PassManager.run` ends with `end_run`, which writes the file.

    One history may serve several pass managers (passflow-opt's
    `--split-input-file` chunks): each run is a row of `runs`. In a sliced
    run, each batch records apart (`start_batch`, `take_batch`), in whichever
    process ran it, and the parent merges the batches in order (`merge`).
    """

    path: str
    _records: HistoryRecords = field(default_factory=HistoryRecords, init=False)
    _run: int | None = field(default=None, init=False)
    _saved: HistoryRecords | None = field(default=None, init=False)
    """The run's records while a batch records apart (None: not in a batch)."""
    _merged: dict[int, _Execution] = field(default_factory=lambda: {}, init=False)
    """The run's executions that each batch's top-level ones merge into."""
    _pipeline: str | None = field(default=None, init=False)
    _stacks: dict[int, list[_Frame]] = field(default_factory=lambda: {}, init=False)
    _tracker: SymbolTracker = field(default_factory=SymbolTracker, init=False)
    _root: Operation | None = field(default=None, init=False)

    # --- recording -------------------------------------------------------------

    def _current_run(self) -> int:
        if self._run is None:
            records = self._records
            self._run = len(records.runs) + 1
            records.runs.append((self._run, ""))
        return self._run

    def _stack(self) -> list[_Frame]:
        tid = threading.get_ident()
        stack = self._stacks.get(tid)
        if stack is None:
            stack = self._stacks[tid] = []
        return stack

    def _pass_id(self, pass_: Pass, path: str) -> int:
        return self._records.pass_id(
            (
                pass_.display_name if pass_.is_adaptor else pass_.name,
                pass_.argument,
                "adaptor" if pass_.is_adaptor else "pass",
                path,
            )
        )

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
        parent_path = top.path if top is not None else ""
        if pass_.is_adaptor:
            path = parent_path
        else:
            label = pass_.argument or pass_.name
            path = f"{parent_path}/{label}" if parent_path else label
        records = self._records
        execution = _Execution(
            len(records.executions) + 1,
            run,
            top.execution.id if top is not None and top.execution is not None else None,
            self._pass_id(pass_, path),
            ir.op_label(op),
        )
        records.executions.append(execution)
        frame = _Frame(execution, path, pass_, op)
        if not pass_.is_adaptor:
            frame.units = self._tracker.snapshot(
                op,
                enclosed=any(
                    f.pass_ is not None and not f.pass_.is_adaptor for f in stack
                ),
            )
            if statistics_of(type(pass_)):
                frame.statistics = set_statistics_aside(pass_)
                arm_statistics(pass_)
        stack.append(frame)
        frame.wall0 = time.perf_counter()
        frame.cpu0 = time.thread_time()

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        self._end_pass(pass_, op, failed=False)

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        self._end_pass(pass_, op, failed=True)

    def _end_pass(self, pass_: Pass, op: Operation, failed: bool) -> None:
        wall1 = time.perf_counter()
        cpu1 = time.thread_time()
        stack = self._stack()
        frame: _Frame | None = None
        while stack:
            frame = stack.pop()
            if frame.pass_ is pass_:
                break
        if frame is None or frame.pass_ is not pass_ or frame.execution is None:
            return
        execution = frame.execution
        execution.wall = wall1 - frame.wall0
        execution.cpu = cpu1 - frame.cpu0
        execution.failed = failed
        if frame.units is not None:
            records = self._records
            text_id = records.text_id
            records.changes.extend(
                (
                    execution.id,
                    change.label,
                    text_id(change.before),
                    text_id(change.after),
                )
                for change in self._tracker.changes(frame.units, op, failed=failed)
            )
            if frame.statistics is not None:
                # What this execution counted (or set), then the values as
                # they were with its effects applied: as an executor's child.
                added, assigned = take_statistic_effects(pass_)
                pass_.__dict__.update(frame.statistics)
                apply_statistic_effects(pass_, (added, assigned))
                names = {stat.attr: stat.name for stat in statistics_of(type(pass_))}
                records.statistics.extend(
                    (execution.id, names[attr], value)
                    for attr, value in (added | assigned).items()
                    if value
                )

    def observe(self, diagnostic: Diagnostic) -> None:
        """Record `diagnostic` beside the pass running on this thread."""
        execution: int | None = None
        for frame in reversed(self._stacks.get(threading.get_ident(), [])):
            if frame.pass_ is not None and frame.execution is not None:
                execution = frame.execution.id
                break
        self._records.diagnostics.append(
            (
                self._current_run(),
                execution,
                diagnostic.severity.value,
                diagnostic.location,
                diagnostic.message,
            )
        )

    def end_run(self, pipeline: str) -> None:
        """Close the current run (`pipeline` is its textual pipeline): record
        where the final IR's ops came from, and write the file. Inside a
        batch (`start_batch`), only forget the run's ops: the batch's caller
        records its origins and takes its records."""
        run = self._current_run()
        root, self._root = self._root, None
        if self._saved is None and root is not None:
            # The final IR is here: it says where its ops came from, not the
            # batches merged before the passes that followed them.
            records = self._records
            records.origins = [row for row in records.origins if row[0] != run]
            self.record_origins(top_level_units(root))
        self._run = None
        self._stacks.clear()
        self._tracker.clear()
        if self._saved is not None:
            return
        records = self._records
        records.runs[run - 1] = (run, self._pipeline or pipeline)
        self._pipeline = None
        self._merged.clear()
        self.write()

    def record_origins(self, units: Iterable[tuple[str, Operation]]) -> None:
        """Record the source position of every located op of `units` (label,
        top-level op), by the unit it ended in."""
        records = self._records
        run = self._current_run()
        rows = records.origins
        file_id = records.file_id
        for label, child in units:
            for op in child.walk():
                where = ir.location(op)
                if where.file is None:
                    continue
                rows.append(
                    (
                        run,
                        label,
                        ir.operation_name(op).name,
                        file_id(where.file),
                        where.line,
                        where.column,
                    )
                )

    # --- sliced runs -------------------------------------------------------------

    def start_batch(self) -> None:
        """Record apart from the run from now on: a batch of a sliced run,
        whose records `take_batch` gives back (in a worker or here)."""
        if self._saved is None:
            self._saved = self._records
        self._records = HistoryRecords()
        self._run = None
        self._stacks.clear()
        self._tracker.clear()

    def take_batch(self, units: Iterable[tuple[str, Operation]]) -> HistoryRecords:
        """What the batch recorded since `start_batch`, with the origins of
        its `units` (label, top-level op, as the batch left them); the
        history records the run again."""
        self.record_origins(units)
        batch = self._records
        if self._saved is not None:
            self._records, self._saved = self._saved, None
        self._run = None
        self._stacks.clear()
        self._tracker.clear()
        return batch

    def merge(
        self, batch: HistoryRecords, pipeline: str, *, origin: str = "run"
    ) -> None:
        """Add a batch's records to the current run, as if its passes had run
        here after those merged before: the batch's top-level executions (the
        nested pipelines' adaptor on the module) merge into the run's one
        execution of that pass, and `pipeline` names the run. `origin`
        `cache`: the records are a cached piece's, replayed without timing."""
        run = self._current_run()
        self._pipeline = pipeline
        records = self._records
        keys = {id_: key for key, id_ in batch.passes.items()}
        texts = {
            id_: records.texts.setdefault(digest, (len(records.texts) + 1, data))[0]
            for digest, (id_, data) in batch.texts.items()
        }
        files = {id_: records.file_id(name) for name, id_ in batch.files.items()}
        ids: dict[int, int] = {}
        cached = origin == "cache"
        for execution in batch.executions:
            pass_id = records.pass_id(keys[execution.pass_])
            if execution.parent is None:
                merged = self._merged.get(pass_id)
                if merged is not None:
                    ids[execution.id] = merged.id
                    if not cached:
                        merged.wall += execution.wall
                        merged.cpu += execution.cpu
                        merged.origin = "run"
                    merged.failed = merged.failed or execution.failed
                    continue
            new = _Execution(
                len(records.executions) + 1,
                run,
                None if execution.parent is None else ids[execution.parent],
                pass_id,
                execution.op,
                0.0 if cached else execution.wall,
                0.0 if cached else execution.cpu,
                execution.failed,
                origin,
            )
            if execution.parent is None:
                self._merged[pass_id] = new
            ids[execution.id] = new.id
            records.executions.append(new)

        def text(id_: int | None) -> int | None:
            return None if id_ is None else texts[id_]

        records.changes.extend(
            (ids[e], symbol, text(b), text(a)) for e, symbol, b, a in batch.changes
        )
        records.statistics.extend((ids[e], n, v) for e, n, v in batch.statistics)
        records.diagnostics.extend(
            (run, None if e is None else ids[e], sev, loc, msg)
            for _, e, sev, loc, msg in batch.diagnostics
        )
        records.origins.extend(
            (run, symbol, op, files[f], line, col)
            for _, symbol, op, f, line, col in batch.origins
        )

    def finish_sliced(self, pipeline: str) -> None:
        """End a sliced run whose batches were merged and whose pipeline had
        nothing after its nested pipelines (no `PassManager.run` here to end
        it): write the file."""
        self._pipeline = pipeline
        self.end_run(pipeline)

    def write(self) -> None:
        """Write the history (complete or absent: `passflow.output_file`);
        raises `OutputFileError` when the file cannot be written."""
        write_output_bytes(self.path, self._records.database())
