"""The result cache's store: each top-level op's printed text and
diagnostics, under a key that covers everything that can change them
(`passflow.cache.keys.run_keys`), so that an unchanged op is never run twice.

The store is one SQLite database in the cache directory (the standard
library's `sqlite3`): every write is a transaction, so a process that dies
mid-write leaves the last complete state, and two processes sharing the
directory see each other's complete entries only (write-ahead log, a busy
timeout). An entry is JSON text with its SHA-256 beside it: it is data, never
code (nothing read from the cache is unpickled or executed), and an entry
whose text does not match its checksum or does not decode is a miss with a
warning, never a wrong result. Entries carry the time they were last used;
past `max_size` bytes the least recently used go.

The checksum guards against damage, not against people: whoever can write
the database can write a matching one. So the store is the user's alone,
checked before use (`passflow.owner_only`): a directory owned by another user
or writable by group or others, and a database file (or its write-ahead log
or shared memory) owned by another user, are refused
(`CacheUnavailableError`); the directory is made 0700 and the files 0600.

Beside the entries, the store keeps each run's printed shell (the module's
first line, a few bytes), so that passflow-opt's warm path can print a run
the cache holds in full without parsing anything (`peek_shells`,
`peek_entries`, `record_hits`), and the digest of every source file the keys
cover with its stamp (`passflow.cache.sources.StampMemo`), so that a warm run
reads none of them again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias, cast

from passflow.cache.sources import PipelineCode, Stamp
from passflow.diagnostics import Diagnostic, Location, PassflowError, Severity
from passflow.executors.captured_output import CapturedOutput
from passflow.owner_only import GROUP_OR_OTHERS_WRITE, not_owner_only

if TYPE_CHECKING:
    from passflow.cache.keys import KeyInputs, RunKeys
    from passflow.cache.remote import RemoteTier

__all__ = [
    "DATABASE",
    "DEFAULT_MAX_SIZE",
    "CacheStats",
    "CacheUnavailableError",
    "CachedPiece",
    "LookupMemo",
    "ResultCache",
    "default_cache_dir",
    "parse_size",
]

DEFAULT_MAX_SIZE = 1 << 30
"""1 GiB: about a million cached functions of the benchmark's size."""

RENEW_AFTER = 3600.0
"""Seconds an entry's use time may lag before a hit renews it: eviction
needs the order of use only to the hour, and a warm run that rewrites no
row writes little more than its counters."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    checksum TEXT NOT NULL,
    size INTEGER NOT NULL,
    used REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS entries_by_use ON entries (used);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS stamps (
    path TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    mtime INTEGER NOT NULL,
    ctime INTEGER NOT NULL,
    inode INTEGER NOT NULL,
    digest TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS shells (
    key TEXT PRIMARY KEY,
    prefix TEXT NOT NULL,
    checksum TEXT NOT NULL,
    used REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS inputs (key TEXT PRIMARY KEY, used REAL NOT NULL);
CREATE TABLE IF NOT EXISTS scans (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    checksum TEXT NOT NULL,
    used REAL NOT NULL
);
"""

KEPT_SCANS = 8
"""Texts whose keys the store keeps (`keep_scan`): the most recent."""


DATABASE = "results.sqlite3"
"""The database's file name in the cache directory."""

_SHELL = "shell:"
"""The prefix of a run's shell among the remote tier's keys."""

_DATABASE_FILES = (DATABASE, f"{DATABASE}-wal", f"{DATABASE}-shm")

_Change: TypeAlias = Callable[[sqlite3.Connection], None]


class CacheUnavailableError(PassflowError):
    """The cache directory cannot be used (not writable, not a database, not
    the user's alone)."""


def default_cache_dir() -> Path:
    """`$PASSFLOW_CACHE_DIR`, else `$XDG_CACHE_HOME/passflow`, else
    `~/.cache/passflow` (the XDG base directory rule)."""
    chosen = os.environ.get("PASSFLOW_CACHE_DIR")
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "passflow"


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_size(text: str) -> int:
    """`1000`, `64K`, `512M`, `2G` (binary units, an optional `B`/`iB`) as
    bytes; `ValueError` otherwise."""
    spelled = text.strip().lower().removesuffix("ib").removesuffix("b")
    number, unit = spelled, ""
    if spelled and spelled[-1] in _UNITS:
        number, unit = spelled[:-1], spelled[-1]
    if not number.isdigit():
        raise ValueError(f"'{text}' is not a size (a number, or with K, M, G, T)")
    return int(number) * _UNITS[unit]


@dataclass(frozen=True)
class CachedPiece:
    """One piece's result: its diagnostics and captured output in order
    (`events`), whether the pipeline failed on it, its ops as printed inside
    the module (`body`, None if it failed), its symbols before and after the
    run, and its header before and after (None unless it was watched).
    `line`: the line the piece started on when it ran, where its events'
    locations stand; `anchor`: None if they move with the piece, else the
    positions it holds only at (`passflow.cache.placement`)."""

    events: tuple[Diagnostic, ...]
    failed: bool
    body: str | None
    initial_symbols: tuple[str, ...]
    symbols: tuple[str, ...]
    header: tuple[str, str] | None
    line: int = 0
    anchor: str | None = None
    history: object | None = None
    """The IR history's records of the piece's run (JSON data,
    `passflow.instruments.ir_history.HistoryRecords.to_json`), when it ran
    with `--ir-history`: a history run takes a hit only with them."""

    @staticmethod
    def storable(events: Iterable[Diagnostic]) -> bool:
        """Whether these events are data the cache can hold: diagnostics and
        captured output (not remark events, which carry objects)."""
        return all(type(event) in (Diagnostic, CapturedOutput) for event in events)

    def to_json(self) -> str:
        return json.dumps(
            {
                "events": [_event_json(event) for event in self.events],
                "failed": self.failed,
                "body": self.body,
                "initial_symbols": list(self.initial_symbols),
                "symbols": list(self.symbols),
                "header": list(self.header) if self.header is not None else None,
                "line": self.line,
                "anchor": self.anchor,
                **({} if self.history is None else {"history": self.history}),
            },
            separators=(",", ":"),
        )

    @staticmethod
    def from_json(text: str) -> CachedPiece:
        """The piece `to_json` wrote; `ValueError` (or `KeyError`,
        `TypeError`) for anything else."""
        data = json.loads(text)
        header = data["header"]
        if header is not None and len(header) != 2:
            raise ValueError("a header is a pair")
        body = data["body"]
        line, anchor = data["line"], data["anchor"]
        if not isinstance(line, int) or not (anchor is None or isinstance(anchor, str)):
            raise ValueError("a piece's line is a number, its anchor text")
        return CachedPiece(
            tuple(_event_from_json(event) for event in data["events"]),
            bool(data["failed"]),
            None if body is None else str(body),
            tuple(str(name) for name in data["initial_symbols"]),
            tuple(str(name) for name in data["symbols"]),
            None if header is None else (str(header[0]), str(header[1])),
            line,
            anchor,
            data.get("history"),
        )


def _event_json(event: Diagnostic) -> object:
    location = event.location
    return {
        "stream": event.stream if isinstance(event, CapturedOutput) else None,
        "severity": event.severity.value,
        "message": event.message,
        "location": [location.file, location.line, location.column],
        "notes": [_event_json(note) for note in event.notes],
    }


def _event_from_json(data: dict[str, object]) -> Diagnostic:
    place = data["location"]
    if not isinstance(place, list) or len(cast(list[object], place)) != 3:
        raise ValueError("a location is [file, line, column]")
    file, line, column = cast(list[object], place)
    if not isinstance(line, int) or not isinstance(column, int):
        raise ValueError("a location's line and column are numbers")
    location = Location(None if file is None else str(file), line, column)
    severity = Severity(data["severity"])
    message = str(data["message"])
    stream = data["stream"]
    event = (
        Diagnostic(severity, message, location)
        if stream is None
        else CapturedOutput(severity, message, location, stream=str(stream))
    )
    notes = data["notes"]
    if not isinstance(notes, list):
        raise ValueError("notes are a list")
    event.notes.extend(_event_from_json(note) for note in notes)  # type: ignore[arg-type]
    return event


@dataclass(frozen=True)
class CacheStats:
    """What `passflow-opt --cache-stats` prints."""

    directory: Path
    entries: int
    size: int
    max_size: int
    hits: int
    misses: int
    bypassed: tuple[str, ...] = ()
    """Why this run, or a part of it, was not cached."""
    remote: str | None = None
    """The remote tier's line (`--cache-remote`), if one is in use."""

    def __str__(self) -> str:
        lookups = self.hits + self.misses
        rate = f" ({100 * self.hits / lookups:.1f}% hits)" if lookups else ""
        return (
            (
                f"cache directory: {self.directory}\n"
                f"entries: {self.entries}\n"
                f"size: {self.size} bytes (limit {self.max_size})\n"
                f"lookups: {lookups}: {self.hits} hits, {self.misses} misses{rate}\n"
            )
            + (f"remote: {self.remote}\n" if self.remote else "")
            + "".join(f"not cached: {reason}\n" for reason in self.bypassed)
        )


@dataclass
class LookupMemo:
    """What a store's lookups computed and read while it was open: the code
    fingerprints, `run_keys`' answers and the sound entries `peek_entries`
    read. Plain data, handed from the process that looked a run up to the one
    that runs it (`ResultCache.memo`, `ResultCache.adopt`), so that the run
    computes and reads none of it again."""

    fingerprints: dict[PipelineCode, str]
    computed_keys: dict[KeyInputs, RunKeys]
    peeked: dict[str, CachedPiece]


class ResultCache:
    """The cache in `directory` (made if missing), at most `max_size` bytes.

    Raises `CacheUnavailableError` when the directory cannot hold it; a
    damaged entry found later is reported in `warnings` and counts as a miss."""

    def __init__(self, directory: Path, max_size: int = DEFAULT_MAX_SIZE) -> None:
        self.directory = directory
        self.max_size = max_size
        self.warnings: list[str] = []
        self.bypassed: list[str] = []
        """Why runs with this cache were not cached (`--cache-stats` says)."""
        self.fingerprints: dict[PipelineCode, str] = {}
        self.computed_keys: dict[KeyInputs, RunKeys] = {}
        """`passflow.cache.keys.run_keys`'s answers while the store is open:
        the warm path's, for a full run that takes over after it missed."""
        self._peeked: dict[str, CachedPiece] = {}
        """The sound entries `peek_entries` read, which `get_many` does not
        read and decode again."""
        self.remote: RemoteTier | None = None
        """The shared tier (`passflow.cache.remote`): asked for what this
        store misses, given what this store gets."""
        path = directory / DATABASE
        try:
            directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            _check_private(directory)
            if not os.access(directory, os.W_OK):
                raise PermissionError(f"'{directory}' is not writable")
            # SQLite gives the log and shared-memory files the database's mode.
            os.close(os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600))
            self._db = sqlite3.connect(path, timeout=60, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: durable at checkpoints
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.Error) as err:
            raise CacheUnavailableError(
                f"cannot use the cache in '{directory}': {err}"
            ) from None

    def close(self) -> None:
        """Close the database and the remote tier (closing again is harmless)."""
        self._db.close()
        if self.remote is not None:
            self.remote.close()

    def memo(self) -> LookupMemo:
        """What this store's lookups computed and read so far."""
        return LookupMemo(self.fingerprints, self.computed_keys, self._peeked)

    def adopt(self, memo: LookupMemo) -> None:
        """Take what another store of this directory computed and read (in
        another process) as this one's own."""
        self.fingerprints.update(memo.fingerprints)
        self.computed_keys.update(memo.computed_keys)
        self._peeked.update(memo.peeked)

    def answered(self, key: str) -> bool:
        """Whether a run remembered `key` (`remember_answered`): a guess
        that the run it stands for is held in full, never a result."""
        try:
            row = self._db.execute("SELECT 1 FROM inputs WHERE key = ?", (key,))
            return row.fetchone() is not None
        except sqlite3.Error:
            return False

    def remember_answered(self, key: str) -> None:
        """Remember `key`, what a run that stored or found all its pieces was
        keyed from (its input and flags): the next run of it is likely warm."""
        row = (key, time.time())

        def store(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR REPLACE INTO inputs VALUES (?, ?)", row)

        try:
            self._write(store)
        except sqlite3.Error as err:
            self.warnings.append(f"the cache could not be written ({err})")

    def get_many(self, keys: Sequence[str]) -> dict[str, CachedPiece]:
        """The entries found for `keys` (their use time renewed), here or,
        for what is not here, in the remote tier (then kept here too)."""
        found = {key: self._peeked[key] for key in keys if key in self._peeked}
        damaged: list[str] = []
        unread = [key for key in keys if key not in found]
        try:
            for key, value, checksum in self._rows("entries", "value", unread):
                piece = _decode(value, checksum)
                if piece is None:
                    damaged.append(key)
                else:
                    found[key] = piece
        except sqlite3.Error as err:
            self.warnings.append(
                f"the cache could not be read ({err}): running uncached"
            )
            return {}
        here = list(found)
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        if missing and self.remote is not None:
            found.update(self._from_remote(missing, keys))
        hits = list(found)
        try:
            self._write(
                lambda db: self._mark_used(db, here, damaged, len(keys), len(hits))
            )
        except sqlite3.Error as err:
            self.warnings.append(f"the cache could not be written ({err})")
        if damaged:
            entries = "entry" if len(damaged) == 1 else "entries"
            self.warnings.append(
                f"{len(damaged)} damaged cache {entries} dropped: the ops run again"
            )
        return found

    def _from_remote(
        self, keys: Sequence[str], run: Sequence[str]
    ) -> dict[str, CachedPiece]:
        """What the remote tier holds of `keys` (what a lookup of the keys
        `run` missed here), decoded, and kept here too."""
        assert self.remote is not None
        found: dict[str, CachedPiece] = {}
        for key, text in self.remote.fetch(keys, run).items():
            piece = _decode(text, _checksum(text))
            if piece is not None:
                found[key] = piece
        if found:
            self._put_local(found)
        return found

    def peek_entries(self, keys: Sequence[str]) -> dict[str, CachedPiece] | None:
        """The entries of `keys` if the store holds every one of them, sound;
        else None. The store is left as it is (no use time, no counter:
        `record_hits` does that, and `get_many` reports what is damaged)."""
        try:
            rows = self._rows("entries", "value", keys)
        except sqlite3.Error:
            return None
        found: dict[str, CachedPiece] = {}
        for key, value, checksum in rows:
            piece = _decode(value, checksum)
            if piece is None:
                return None
            found[key] = piece
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        if missing and self.remote is not None:
            found.update(self._from_remote(missing, keys))
        self._peeked.update(found)
        if len(found) != len(set(keys)):
            return None  # a miss
        return found

    def peek_shells(self, keys: Sequence[str]) -> dict[str, str] | None:
        """The printed shells of `keys` if the store holds every one of
        them, sound; else None (as `peek_entries`)."""
        try:
            rows = self._rows("shells", "prefix", keys)
        except sqlite3.Error:
            return None
        found = {
            key: prefix
            for key, prefix, checksum in rows
            if isinstance(prefix, str) and checksum == _checksum(prefix)
        }
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        if missing and self.remote is not None:
            shells = self.remote.fetch([_SHELL + key for key in missing])
            for key in missing:
                prefix = shells.get(_SHELL + key)
                if prefix is not None:
                    found[key] = prefix
                    self._put_shell_local(key, prefix)
        return found if len(found) == len(set(keys)) else None

    def kept_scan(self, key: str) -> str | None:
        """What `keep_scan` kept under `key`, if it is there and sound."""
        try:
            row = self._db.execute(
                "SELECT value, checksum FROM scans WHERE key = ?", (key,)
            ).fetchone()
        except sqlite3.Error:
            return None
        if row is None or not isinstance(row[0], str) or row[1] != _checksum(row[0]):
            return None
        return row[0]

    def keep_scan(self, key: str, value: str) -> None:
        """Keep `value` (what the keys made of a text's scan) under `key`,
        with the `KEPT_SCANS` most recent others."""
        row = (key, value, _checksum(value), time.time())

        def store(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR REPLACE INTO scans VALUES (?, ?, ?, ?)", row)
            db.execute(
                "DELETE FROM scans WHERE key NOT IN "
                "(SELECT key FROM scans ORDER BY used DESC LIMIT ?)",
                (KEPT_SCANS,),
            )

        try:
            self._write(store)
        except sqlite3.Error as err:
            self.warnings.append(f"the cache could not be written ({err})")

    def count_unplaced(self, count: int) -> None:
        """Count `count` of the hits `get_many` counted as misses: entries
        pinned to positions their pieces no longer stand at
        (`passflow.cache.placement`)."""
        if count <= 0:
            return

        def recount(db: sqlite3.Connection) -> None:
            for name, change in (("hits", -count), ("misses", count)):
                db.execute(
                    "UPDATE counters SET value = value + ? WHERE name = ?",
                    (change, name),
                )

        try:
            self._write(recount)
        except sqlite3.Error as err:
            self.warnings.append(f"the cache could not be written ({err})")

    def record_hits(self, keys: Sequence[str], shells: Sequence[str]) -> None:
        """Count `keys` as hits and renew their use time and `shells'`: what
        `get_many` does for what `peek_entries` found."""
        now = time.time()

        def renew(db: sqlite3.Connection) -> None:
            self._mark_used(db, list(keys), [], len(keys))
            db.execute(
                "UPDATE shells SET used = ? "
                "WHERE key IN (SELECT value FROM json_each(?)) AND used < ?",
                (now, json.dumps(list(shells)), now - RENEW_AFTER),
            )

        try:
            self._write(renew)
        except sqlite3.Error as err:
            self.warnings.append(f"the cache could not be written ({err})")

    def put_shell(self, key: str, prefix: str) -> None:
        """Store the printed shell of a run (`peek_shells` finds it), here and
        in the remote tier."""
        self._put_shell_local(key, prefix)
        if self.remote is not None:
            self.remote.publish({_SHELL + key: prefix})

    def _put_shell_local(self, key: str, prefix: str) -> None:
        row = (key, prefix, _checksum(prefix), time.time())

        def store(db: sqlite3.Connection) -> None:
            db.execute("INSERT OR REPLACE INTO shells VALUES (?, ?, ?, ?)", row)

        try:
            self._write(store)
        except sqlite3.Error as err:
            self.warnings.append(f"the cache could not be written ({err})")

    def _rows(
        self, table: str, column: str, keys: Sequence[str]
    ) -> list[tuple[str, object, object]]:
        """`key, column, checksum` of `table`'s rows for `keys`, in one query
        (the keys travel as one JSON array)."""
        return self._db.execute(
            f"SELECT key, {column}, checksum FROM {table} "
            "WHERE key IN (SELECT value FROM json_each(?))",
            (json.dumps(list(dict.fromkeys(keys))),),
        ).fetchall()

    def put_many(
        self, entries: Mapping[str, CachedPiece], run: Sequence[str] = ()
    ) -> None:
        """Store `entries`, here (then evict the least recently used past the
        cap) and in the remote tier, with the packs of `run` (the keys of
        the run they are part of) that hold them."""
        self._put_local(entries)
        if self.remote is not None and entries:
            self.remote.publish(
                {key: piece.to_json() for key, piece in entries.items()},
                run,
                self._held_texts,
            )

    def _held_texts(self, keys: Sequence[str]) -> dict[str, str]:
        """The sound entries of `keys` this store holds, as JSON text."""
        try:
            rows = self._rows("entries", "value", keys)
        except sqlite3.Error:
            return {}
        return {
            key: value
            for key, value, checksum in rows
            if isinstance(value, str) and checksum == _checksum(value)
        }

    def _put_local(self, entries: Mapping[str, CachedPiece]) -> None:
        if not entries:
            return
        now = time.time()
        rows: list[tuple[str, str, str, int, float]] = []
        for key, piece in entries.items():
            value = piece.to_json()
            rows.append((key, value, _checksum(value), len(value) + len(key), now))

        def store(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT OR REPLACE INTO entries VALUES (?, ?, ?, ?, ?)", rows
            )
            self._evict(db)

        try:
            self._write(store)
        except sqlite3.Error as err:
            self.warnings.append(f"the cache could not be written ({err})")

    def remembered_digests(self) -> dict[str, tuple[Stamp, str]]:
        """The stamp and digest of each source file the keys read before
        (`passflow.cache.sources.StampMemo`); none if the store cannot say."""
        try:
            rows = self._db.execute(
                "SELECT path, size, mtime, ctime, inode, digest FROM stamps"
            ).fetchall()
        except sqlite3.Error:
            return {}
        return {
            str(path): ((int(size), int(mtime), int(ctime), int(inode)), str(digest))
            for path, size, mtime, ctime, inode, digest in rows
        }

    def remember_digests(self, digests: Mapping[str, tuple[Stamp, str]]) -> None:
        """Remember these source files' stamps and digests."""
        rows = [(path, *stamp, digest) for path, (stamp, digest) in digests.items()]

        def store(db: sqlite3.Connection) -> None:
            db.executemany(
                "INSERT OR REPLACE INTO stamps VALUES (?, ?, ?, ?, ?, ?)", rows
            )

        try:
            self._write(store)
        except sqlite3.Error as err:
            self.warnings.append(f"the cache could not be written ({err})")

    def stats(self) -> CacheStats:
        entries, size = self._db.execute(
            "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM entries"
        ).fetchone()
        counters = dict(self._db.execute("SELECT name, value FROM counters").fetchall())
        return CacheStats(
            self.directory,
            int(entries),
            int(size),
            self.max_size,
            int(counters.get("hits", 0)),
            int(counters.get("misses", 0)),
            tuple(dict.fromkeys(self.bypassed)),
            self.remote.summary() if self.remote is not None else None,
        )

    def clear(self) -> None:
        def wipe(db: sqlite3.Connection) -> None:
            db.execute("DELETE FROM entries")
            db.execute("DELETE FROM counters")
            db.execute("DELETE FROM shells")
            db.execute("DELETE FROM stamps")
            db.execute("DELETE FROM inputs")
            db.execute("DELETE FROM scans")

        self._write(wipe)
        self._db.execute("VACUUM")

    def _write(self, change: _Change) -> None:
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            change(db)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    @staticmethod
    def _mark_used(
        db: sqlite3.Connection,
        used: list[str],
        damaged: list[str],
        lookups: int,
        hits: int | None = None,
    ) -> None:
        """Renew `used` (those last renewed `RENEW_AFTER` ago), drop
        `damaged`, count `hits` of `lookups` (by default, the entries used)."""
        now = time.time()
        db.execute(
            "UPDATE entries SET used = ? "
            "WHERE key IN (SELECT value FROM json_each(?)) AND used < ?",
            (now, json.dumps(used), now - RENEW_AFTER),
        )
        db.executemany("DELETE FROM entries WHERE key = ?", ((k,) for k in damaged))
        found = len(used) if hits is None else hits
        for name, count in (("hits", found), ("misses", lookups - found)):
            db.execute(
                "INSERT INTO counters VALUES (?, ?) "
                "ON CONFLICT(name) DO UPDATE SET value = value + excluded.value",
                (name, count),
            )

    def _evict(self, db: sqlite3.Connection) -> None:
        (size,) = db.execute("SELECT COALESCE(SUM(size), 0) FROM entries").fetchone()
        excess = int(size) - self.max_size
        if excess <= 0:
            return
        doomed: list[str] = []
        for key, entry_size in db.execute(
            "SELECT key, size FROM entries ORDER BY used"
        ):
            doomed.append(key)
            excess -= int(entry_size)
            if excess <= 0:
                break
        db.executemany("DELETE FROM entries WHERE key = ?", ((k,) for k in doomed))
        # A shell not used since the oldest entry left serves no run any more.
        for table in ("shells", "inputs"):
            db.execute(
                f"DELETE FROM {table} "
                "WHERE used < (SELECT COALESCE(MIN(used), 0) FROM entries)"
            )


def _check_private(directory: Path) -> None:
    """Raise `PermissionError` unless `directory` and the database files in
    it are the user's alone; make the user's own files 0600."""
    problem = not_owner_only(directory, GROUP_OR_OTHERS_WRITE)
    if problem is not None:
        raise PermissionError(
            f"the directory is not yours alone ({problem}); use one only you "
            "can write to (mkdir -m 700)"
        )
    for name in _DATABASE_FILES:
        path = directory / name
        try:
            problem = not_owner_only(path, 0, follow=False)
        except FileNotFoundError:
            continue
        if problem is not None:
            raise PermissionError(
                f"'{name}' is not yours ({problem}); remove it or use another directory"
            )
        os.chmod(path, 0o600)


def _decode(value: object, checksum: object) -> CachedPiece | None:
    if not isinstance(value, str) or checksum != _checksum(value):
        return None
    try:
        return CachedPiece.from_json(value)
    except (ValueError, KeyError, TypeError, IndexError):
        return None


def _checksum(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
