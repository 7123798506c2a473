"""The IR history file (`--ir-history=FILE`): one SQLite database, its schema,
and the questions `passflow-history` asks of it.

The recorder (`ir_history.IRHistory`) writes it; this module reads it, so that
the command, the run report and a user's own script ask the same queries. The
schema, in one place:

- `runs`: one row per `PassManager.run` (a `--split-input-file` chunk each),
  with its textual pipeline;
- `passes`: each pass at its place in the pipeline: its name, argument, kind
  (`pass` or `adaptor`) and `path` from the run's root
  (`inline/func.func/canonicalize` for a canonicalize the inliner runs on a
  function);
- `executions`: one row per pass execution on one op, adaptors and passes of
  nested and dynamic pipelines included: its `passes` row, the op it ran on,
  wall and CPU time, whether it failed, and its `parent` (the execution that
  spawned its pipeline);
- `texts`: each distinct text of a top-level symbol once (the recorder
  dedupes them by SHA-256), zlib-compressed;
- `changes`: for each execution, each top-level symbol it changed, with its
  text before and after (`texts` ids; NULL before: the pass made it; NULL
  after: the pass erased it). A module pass is recorded per changed symbol;
- `statistics`, `diagnostics`: what each execution counted and reported;
- `origins`: every op of the run's final IR with a source position (its file
  an index into `files`), by the top-level symbol it ended in ("which ops came
  from `input.mlir:120`").

A file is opened read-only and checked for the schema's version; anything
else (not SQLite, another tool's database, a newer schema) is a
`HistoryFileError` with one line saying so.
"""

from __future__ import annotations

import difflib
import sqlite3
import zlib
from dataclasses import dataclass
from pathlib import Path

from passflow.diagnostics import PassflowError

__all__ = [
    "SCHEMA",
    "SCHEMA_VERSION",
    "Execution",
    "HistoryFile",
    "HistoryFileError",
    "Origin",
    "SymbolChange",
    "unified_diff",
]

SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs(id INTEGER PRIMARY KEY, pipeline TEXT NOT NULL);
CREATE TABLE passes(
  id INTEGER PRIMARY KEY, pass TEXT NOT NULL, argument TEXT NOT NULL,
  kind TEXT NOT NULL, path TEXT NOT NULL);
CREATE TABLE executions(
  id INTEGER PRIMARY KEY, run INTEGER NOT NULL, parent INTEGER,
  pass INTEGER NOT NULL, op TEXT NOT NULL, wall REAL NOT NULL, cpu REAL NOT NULL,
  failed INTEGER NOT NULL, origin TEXT NOT NULL);
CREATE TABLE texts(id INTEGER PRIMARY KEY, text BLOB NOT NULL);
CREATE TABLE changes(
  execution INTEGER NOT NULL, symbol TEXT NOT NULL, before INTEGER, after INTEGER);
CREATE TABLE statistics(execution INTEGER NOT NULL, name TEXT NOT NULL,
  value INTEGER NOT NULL);
CREATE TABLE diagnostics(run INTEGER NOT NULL, execution INTEGER,
  severity TEXT NOT NULL, location TEXT NOT NULL, message TEXT NOT NULL);
CREATE TABLE files(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE origins(run INTEGER NOT NULL, symbol TEXT NOT NULL, op TEXT NOT NULL,
  file INTEGER NOT NULL, line INTEGER NOT NULL, col INTEGER NOT NULL);
"""


class HistoryFileError(PassflowError):
    """An IR history file that cannot be read: missing, not SQLite, not a
    passflow history, or from a newer passflow."""


@dataclass(frozen=True, slots=True)
class Execution:
    """One pass execution on one op."""

    id: int
    run: int
    parent: int | None
    pass_name: str
    argument: str
    kind: str
    """`pass` or `adaptor`."""
    path: str
    op: str
    wall: float
    cpu: float
    failed: bool
    origin: str
    """`run`, or `cache` for a result the result cache replayed."""

    @property
    def label(self) -> str:
        """The pass's argument (its name when it has none)."""
        return self.argument or self.pass_name


@dataclass(frozen=True, slots=True)
class SymbolChange:
    """What one execution did to one top-level symbol."""

    execution: Execution
    symbol: str
    before: str | None
    after: str | None

    @property
    def what(self) -> str:
        """`changed`, `created` or `erased`."""
        if self.before is None:
            return "created"
        return "erased" if self.after is None else "changed"

    def diff(self) -> str:
        """The change as a unified diff of the symbol's text."""
        return unified_diff(
            self.before or "",
            self.after or "",
            f"{self.symbol} before {self.execution.path}",
            f"{self.symbol} after {self.execution.path}",
        )


@dataclass(frozen=True, slots=True)
class Origin:
    """An op of a run's final IR and the source position it carries."""

    run: int
    symbol: str
    op: str
    file: str
    line: int
    column: int


def unified_diff(before: str, after: str, before_name: str, after_name: str) -> str:
    """`before` → `after` as a unified diff (three lines of context)."""
    lines = difflib.unified_diff(
        before.splitlines(),
        after.splitlines(),
        before_name,
        after_name,
        lineterm="",
    )
    return "\n".join(lines)


_EXECUTION_COLUMNS = (
    "e.id, e.run, e.parent, p.pass, p.argument, p.kind, p.path, e.op, e.wall, "
    "e.cpu, e.failed, e.origin"
)
_EXECUTIONS = "executions e JOIN passes p ON p.id = e.pass"

_ORIGIN_COLUMNS = (
    "o.run, o.symbol, o.op, f.name, o.line, o.col "
    "FROM origins o JOIN files f ON f.id = o.file"
)

_Row = tuple[object, ...]


def _execution(row: _Row) -> Execution:
    (id_, run, parent, name, argument, kind, path, op, wall, cpu, failed, origin) = row
    return Execution(
        int(str(id_)),
        int(str(run)),
        None if parent is None else int(str(parent)),
        str(name),
        str(argument),
        str(kind),
        str(path),
        str(op),
        float(str(wall)),
        float(str(cpu)),
        bool(failed),
        str(origin),
    )


class HistoryFile:
    """An IR history opened read-only for queries."""

    def __init__(self, path: str) -> None:
        self.path = path
        if not Path(path).is_file():
            raise HistoryFileError(f"cannot open IR history '{path}': no such file")
        uri = Path(path).resolve().as_uri() + "?mode=ro"
        try:
            self._db = sqlite3.connect(uri, uri=True)
            rows = self._db.execute(
                "SELECT value FROM meta WHERE key = 'schema'"
            ).fetchall()
        except sqlite3.Error as err:
            raise HistoryFileError(
                f"'{path}' is not an IR history (written by --ir-history): {err}"
            ) from None
        if not rows:
            raise HistoryFileError(
                f"'{path}' is not an IR history (written by --ir-history)"
            )
        version = str(rows[0][0])
        if version != str(SCHEMA_VERSION):
            raise HistoryFileError(
                f"'{path}' is an IR history of schema {version}; this passflow "
                f"reads schema {SCHEMA_VERSION}"
            )
        self._texts: dict[object, str] = {}

    def close(self) -> None:
        self._db.close()

    def _query(self, sql: str, *args: object) -> list[_Row]:
        try:
            return self._db.execute(sql, args).fetchall()
        except sqlite3.Error as err:
            raise HistoryFileError(f"'{self.path}' is damaged: {err}") from None

    def _text(self, key: object) -> str | None:
        if key is None:
            return None
        text = self._texts.get(key)
        if text is None:
            rows = self._query("SELECT text FROM texts WHERE id = ?", key)
            if not rows:
                raise HistoryFileError(
                    f"'{self.path}' is damaged: text {key} is missing"
                )
            try:
                blob = rows[0][0]
                if not isinstance(blob, bytes):
                    raise TypeError(type(blob).__name__)
                text = zlib.decompress(blob).decode()
            except (zlib.error, TypeError, UnicodeDecodeError):
                raise HistoryFileError(
                    f"'{self.path}' is damaged: text {key} does not read"
                ) from None
            self._texts[key] = text
        return text

    def runs(self) -> list[tuple[int, str]]:
        """Each run's id and textual pipeline, in order."""
        return [
            (int(str(id_)), str(pipeline))
            for id_, pipeline in self._query(
                "SELECT id, pipeline FROM runs ORDER BY id"
            )
        ]

    def executions(self) -> list[Execution]:
        """Every pass execution, in the order they started."""
        return [
            _execution(row)
            for row in self._query(
                f"SELECT {_EXECUTION_COLUMNS} FROM {_EXECUTIONS} ORDER BY e.id"
            )
        ]

    def symbols(self) -> list[str]:
        """Every top-level symbol some pass changed, in order of first change."""
        rows = self._query(
            "SELECT symbol, MIN(execution) FROM changes GROUP BY symbol "
            "ORDER BY MIN(execution)"
        )
        return [str(row[0]) for row in rows]

    def changes(
        self, symbol: str | None = None, pass_name: str | None = None
    ) -> list[SymbolChange]:
        """The changes, in execution order: to `symbol` only (`@f500`), by
        passes whose argument or name is `pass_name` only, or both."""
        sql = (
            f"SELECT {_EXECUTION_COLUMNS}, c.symbol, c.before, c.after "
            "FROM changes c JOIN executions e ON e.id = c.execution "
            "JOIN passes p ON p.id = e.pass"
        )
        where: list[str] = []
        args: list[object] = []
        if symbol is not None:
            where.append("c.symbol = ?")
            args.append(symbol)
        if pass_name is not None:
            where.append("(p.argument = ? OR p.pass = ?)")
            args.extend((pass_name, pass_name))
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY e.id, c.rowid"
        found: list[SymbolChange] = []
        for row in self._query(sql, *args):
            execution = _execution(row[:12])
            found.append(
                SymbolChange(
                    execution, str(row[12]), self._text(row[13]), self._text(row[14])
                )
            )
        return found

    def statistics(self, execution: int) -> list[tuple[str, int]]:
        """What `execution` counted (statistics that moved)."""
        return [
            (str(name), int(str(value)))
            for name, value in self._query(
                "SELECT name, value FROM statistics WHERE execution = ? ORDER BY rowid",
                execution,
            )
        ]

    def diagnostics(self, execution: int | None = None) -> list[tuple[str, str, str]]:
        """(severity, location, message) of every diagnostic, or of the ones
        delivered while `execution` ran."""
        sql = "SELECT severity, location, message FROM diagnostics"
        if execution is None:
            rows = self._query(sql + " ORDER BY rowid")
        else:
            rows = self._query(sql + " WHERE execution = ? ORDER BY rowid", execution)
        return [(str(s), str(loc), str(m)) for s, loc, m in rows]

    def origins_of(self, symbol: str) -> list[Origin]:
        """The located ops of `symbol` in the final IR."""
        return self._origins(
            self._query(
                f"SELECT {_ORIGIN_COLUMNS} WHERE o.symbol = ? ORDER BY o.rowid",
                symbol,
            )
        )

    def origins(self, file: str, line: int) -> list[Origin]:
        """The final IR's ops located at `file:line` (`file` may be a path
        suffix: `input.mlir` matches `dir/input.mlir`)."""
        rows = self._query(
            f"SELECT {_ORIGIN_COLUMNS} WHERE o.line = ? "
            "AND (f.name = ? OR f.name LIKE ? ESCAPE '\\') ORDER BY o.rowid",
            line,
            file,
            "%/" + file.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_"),
        )
        return self._origins(rows)

    @staticmethod
    def _origins(rows: list[_Row]) -> list[Origin]:
        return [
            Origin(
                int(str(run)),
                str(symbol),
                str(op),
                str(path),
                int(str(line_)),
                int(str(col)),
            )
            for run, symbol, op, path, line_, col in rows
        ]
