"""Optimization remarks: MLIR's remark engine (`mlir/IR/Remarks.h`).

A remark tells the user what a pass did or did not do, and why: an
optimization that *passed* (was applied), one *missed* (profitable, not
applied), one that *failed* (tried, not legal), or an *analysis* result that
explains others. Each carries a name, a category (and sub-category) that users
filter on, an optional function name, and key/value arguments::

    self.remarks.missed(
        op,
        RemarkOpts.name("unroll").category("loop").function("main"),
        add("loop not unrolled"),
        reason("trip count {0} < threshold {1}", 4, 256),
        suggest("raise the threshold"),
    )

A pass reaches the engine through `Pass.remarks`. Nothing is built unless the
engine of the run enables the remark's kind for its category, so a remark that
nobody asked for costs one regex lookup.

The engine (`RemarkEngine`) decides three things, as mlir-opt's flags do:

- which remarks exist: per kind, a regex over category names
  (`RemarkCategories`: `--remarks-filter`, `--remarks-filter-passed`, ...);
- when they are reported (`policy`): `all` as they are emitted, `final` at
  `finalize()`, keeping only the last remark of each (location, name, category,
  kind) and ordering them by location, so the report is the same whatever ran
  the children and in which order;
- where they go: to the diagnostic stream as `remark: [Passed] name | ...`
  (as `emitRemark` does) and/or to a streamer such as `YamlRemarkStreamer`
  (LLVM's YAML remark format).

Remarks emitted while a nested pipeline runs elsewhere (a worker thread or a
forked process) travel back with that child's diagnostics as `RemarkEvent`s and
reach the engine when the diagnostics are replayed, in program order. Remark
ids (`RemarkId=N`, and `RelatedTo=N` for `RemarkOpts.related_to`) are numbered
by the engine in that order, so they are the same with and without threads.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import math
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from types import TracebackType
from typing import Literal, Protocol, TextIO

from xdsl.ir import Attribute

from passflow import ir
from passflow.diagnostics import (
    Diagnostic,
    DiagnosticEngine,
    DiagnosticHandler,
    Location,
    Severity,
)
from passflow.ir import Operation
from passflow.output_file import open_output

__all__ = [
    "InFlightRemark",
    "LazyRemarkArg",
    "Remark",
    "RemarkArg",
    "RemarkCategories",
    "RemarkEmitter",
    "RemarkEngine",
    "RemarkEvent",
    "RemarkId",
    "RemarkKind",
    "RemarkOpts",
    "RemarkPart",
    "RemarkPolicy",
    "RemarkStreamer",
    "YamlRemarkStreamer",
    "add",
    "metric",
    "reason",
    "remark_yaml",
    "suggest",
]


class RemarkKind(Enum):
    """What a remark says about a transformation; the value is how it prints."""

    UNKNOWN = "Unknown"
    PASSED = "Passed"
    """An optimization was applied."""
    MISSED = "Missed"
    """A profitable optimization was found but not applied."""
    FAILURE = "Failure"
    """The optimization was attempted but failed (legality, a better choice)."""
    ANALYSIS = "Analysis"
    """Information (analysis numbers) without a pass/fail outcome."""


RemarkPolicy = Literal["all", "final"]
"""`all`: report remarks as they are emitted; `final`: at `finalize()`, the last
one of each (location, name, category, kind), ordered by location."""


# --- options and arguments -------------------------------------------------------


@dataclass(frozen=True)
class RemarkId:
    """The identity of one remark while it is in flight, for `related_to`.

    The number it prints as (`RemarkId=N`) is given by the engine when the
    remark reaches it, in program order; the identity itself is unique across
    threads and forked processes, so a link made in a worker survives the trip.
    """

    origin: int
    serial: int


@dataclass(frozen=True)
class RemarkOpts:
    """How a remark is named and filed: MLIR's `RemarkOpts`, built the same way::

    RemarkOpts.name("unroll").category("loop").sub_category("inner")

    Filters match `category_name` only; the printed category is
    `category:sub-category`.
    """

    remark_name: str = ""
    category_name: str = ""
    sub_category_name: str = ""
    function_name: str = ""
    related_id: RemarkId | None = None

    @classmethod
    def name(cls, name: str) -> RemarkOpts:
        return cls(remark_name=name)

    def category(self, name: str) -> RemarkOpts:
        return dataclasses.replace(self, category_name=name)

    def sub_category(self, name: str) -> RemarkOpts:
        return dataclasses.replace(self, sub_category_name=name)

    def function(self, name: str) -> RemarkOpts:
        return dataclasses.replace(self, function_name=name)

    def related_to(self, remark: RemarkId | InFlightRemark | None) -> RemarkOpts:
        """Link to an earlier remark (its id, or the in-flight remark itself):
        the remark gets a `RelatedTo=N` argument, and the `final` policy reports
        it right after that one. A disabled remark (no id) links nothing."""
        if isinstance(remark, InFlightRemark):
            remark = remark.id
        return dataclasses.replace(self, related_id=remark)


@dataclass(frozen=True)
class RemarkArg:
    """One `key=value` of a remark (`Remark=...`, `Reason=...`, a metric)."""

    key: str
    value: str


@dataclass(frozen=True)
class LazyRemarkArg:
    """An argument formatted only if its remark is enabled: what `add`, `reason`,
    `suggest` and `metric` return."""

    key: str
    text: str
    values: tuple[object, ...] = ()
    formatted: bool = True
    """False for `metric`: `values[0]` is the value itself."""

    def resolve(self) -> RemarkArg:
        if not self.formatted:
            return RemarkArg(self.key, arg_value(self.values[0]))
        if not self.values:
            return RemarkArg(self.key, self.text)
        return RemarkArg(self.key, self.text.format(*self.values))


RemarkPart = RemarkArg | LazyRemarkArg | str
"""What a remark is built from; a plain string is a `Remark=` argument, as in MLIR."""

RemarkValue = str | bool | int | float | Attribute
"""What `metric` accepts: printed as MLIR prints it (xDSL attributes and types as
in the IR, floats as `%e`)."""


def add(text: str, *values: object) -> LazyRemarkArg:
    """The remark's message (`Remark=`); with `values`, `text` is a Python format
    string, which takes llvm::formatv's `{0}`, `{1}` too."""
    return LazyRemarkArg("Remark", text, values)


def reason(text: str, *values: object) -> LazyRemarkArg:
    """Why it happened (`Reason=`); formatted as `add`."""
    return LazyRemarkArg("Reason", text, values)


def suggest(text: str, *values: object) -> LazyRemarkArg:
    """What the user could do about it (`Suggestion=`); formatted as `add`."""
    return LazyRemarkArg("Suggestion", text, values)


def metric(key: str, value: RemarkValue) -> LazyRemarkArg:
    """A named value (`key=value`), printed as MLIR prints numbers and attributes."""
    return LazyRemarkArg(key, "", (value,), formatted=False)


def arg_value(value: object) -> str:
    """A value as MLIR's `Remark::Arg` prints it: booleans `true`/`false`, floats
    as raw_ostream does (`%e`), attributes and types in IR syntax."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "-INF" if value < 0 else "INF"
        return f"{value:e}"
    return str(value)


def _resolve(part: RemarkPart) -> RemarkArg:
    if isinstance(part, str):
        return RemarkArg("Remark", part)
    if isinstance(part, LazyRemarkArg):
        return part.resolve()
    return part


# --- remarks --------------------------------------------------------------------


@dataclass
class Remark:
    """One remark: its kind, location, names and arguments.

    Until the engine receives it, `remark_id` and `related_ids` are in-flight
    identities; the engine then gives it `number` and `related_numbers` and puts
    `RelatedTo=` and `RemarkId=` in front of the arguments, where MLIR has them.
    """

    kind: RemarkKind
    location: Location
    remark_name: str = ""
    category_name: str = ""
    sub_category_name: str = ""
    function_name: str = ""
    args: list[RemarkArg] = field(default_factory=lambda: list[RemarkArg]())
    remark_id: RemarkId | None = None
    related_ids: tuple[RemarkId, ...] = ()
    number: int = 0
    related_numbers: tuple[int, ...] = ()

    @property
    def combined_category(self) -> str:
        """`category:sub-category`, or whichever of the two is set."""
        if self.category_name and self.sub_category_name:
            return f"{self.category_name}:{self.sub_category_name}"
        return self.category_name or self.sub_category_name

    @property
    def display_name(self) -> str:
        return self.remark_name or "<unknown remark name>"

    @property
    def display_function(self) -> str:
        return self.function_name or "<unknown function>"

    def message(self) -> str:
        """The text mlir-opt prints after `remark: `, arguments sorted by key::

        [Missed] unroll | Category:loop | Function=main | Reason="...", Remark="..."
        """
        text = f"[{self.kind.value}] {self.remark_name} | "
        if self.combined_category:
            text += f"Category:{self.combined_category} | "
        if self.function_name:
            text += f"Function={self.function_name} | "
        return text + ", ".join(
            f"{arg.key}={_quote_if_needed(arg.value)}"
            for arg in sorted(self.args, key=lambda arg: arg.key)
        )


def _quote_if_needed(value: str) -> str:
    if any(c in value for c in " ,{}"):
        return f'"{value}"'
    return value


@dataclass
class RemarkEvent(Diagnostic):
    """A remark on its way to the engine, riding the diagnostic stream.

    A pass's remarks go where its diagnostics go: buffered with them while a
    child runs on a worker (and shipped back from other processes), replayed
    with them in program order. The run's state hands them to the engine instead
    of the diagnostic handlers. `created` marks the moment the remark was made
    (which numbers it); the second event reports it.
    """

    remark: Remark | None = None
    created: bool = False

    @classmethod
    def of(cls, remark: Remark, *, created: bool) -> RemarkEvent:
        return cls(Severity.REMARK, "", remark.location, remark=remark, created=created)


def _random_origin() -> int:
    """62 random bits from the OS (what `secrets` draws on, without the 3 MB of
    OpenSSL that importing it costs)."""
    return int.from_bytes(os.urandom(8), "big") >> 2


class _Identities:
    """Unique in-flight ids: a random origin per process (new after a fork)."""

    def __init__(self) -> None:
        self.origin = _random_origin()
        self.serials = itertools.count(1)

    def next(self) -> RemarkId:
        return RemarkId(self.origin, next(self.serials))

    def reseed(self) -> None:
        self.origin = _random_origin()


_identities = _Identities()
if hasattr(os, "register_at_fork"):  # POSIX
    os.register_at_fork(after_in_child=_identities.reseed)


class InFlightRemark:
    """A remark being built: `append` (or `<<`) adds arguments, and it is
    reported when its `with` block ends (or at `report()`). MLIR's
    `InFlightRemark`, whose destructor reports it.

    A disabled remark (its kind or category filtered out) is falsy, has no
    `id`, and ignores what is added to it.
    """

    __slots__ = ("_remark", "_reported", "_sink")

    def __init__(
        self, remark: Remark | None = None, sink: DiagnosticHandler | None = None
    ) -> None:
        self._remark = remark
        self._sink = sink
        self._reported = False

    def __bool__(self) -> bool:
        return self._remark is not None

    @property
    def id(self) -> RemarkId | None:
        """What `RemarkOpts.related_to` links to; None when disabled."""
        return None if self._remark is None else self._remark.remark_id

    def append(self, *parts: RemarkPart) -> InFlightRemark:
        """Add arguments (ignored once reported, or when disabled)."""
        remark = self._remark
        if remark is not None and not self._reported:
            remark.args.extend(_resolve(part) for part in parts)
        return self

    def __lshift__(self, part: RemarkPart) -> InFlightRemark:
        """C++'s `remark << part`, chainable: `(r << add(...)) << reason(...)`."""
        return self.append(part)

    def report(self) -> None:
        """Hand the remark to the engine (once; later calls do nothing)."""
        remark, sink = self._remark, self._sink
        if remark is None or sink is None or self._reported:
            return
        self._reported = True
        sink(RemarkEvent.of(remark, created=False))

    def __enter__(self) -> InFlightRemark:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.report()


class RemarkEmitter:
    """MLIR's `remark::passed/missed/failed/analysis`, bound to an engine.

    `Pass.remarks` is one, for the running pass (its remarks travel with its
    diagnostics); `RemarkEngine.emitter()` is one for code outside a pass.
    `where` is an op (its location is the one diagnostics show) or a Location.

    `passed(where, opts, *parts)` is C++'s one statement
    `remark::passed(loc, opts) << part << ...;`: built and reported at once; it
    returns the remark's id (None when disabled) for `RemarkOpts.related_to`.
    `in_flight(kind, where, opts)` is an `InFlightRemark` kept alive for a
    while, reported when its `with` block ends.
    """

    __slots__ = ("_engine", "_sink")

    def __init__(self, engine: RemarkEngine | None, sink: DiagnosticHandler) -> None:
        self._engine = engine
        self._sink = sink

    def passed(
        self, where: Operation | Location, opts: RemarkOpts, *parts: RemarkPart
    ) -> RemarkId | None:
        """Report an applied optimization."""
        return self._emit(RemarkKind.PASSED, where, opts, parts)

    def missed(
        self, where: Operation | Location, opts: RemarkOpts, *parts: RemarkPart
    ) -> RemarkId | None:
        """Report a profitable optimization that was not applied."""
        return self._emit(RemarkKind.MISSED, where, opts, parts)

    def failed(
        self, where: Operation | Location, opts: RemarkOpts, *parts: RemarkPart
    ) -> RemarkId | None:
        """Report an optimization that was attempted and failed."""
        return self._emit(RemarkKind.FAILURE, where, opts, parts)

    def analysis(
        self, where: Operation | Location, opts: RemarkOpts, *parts: RemarkPart
    ) -> RemarkId | None:
        """Report an analysis result."""
        return self._emit(RemarkKind.ANALYSIS, where, opts, parts)

    def in_flight(
        self,
        kind: RemarkKind,
        where: Operation | Location,
        opts: RemarkOpts,
        *parts: RemarkPart,
    ) -> InFlightRemark:
        """A remark to finish later: `with remarks.in_flight(...) as r: r.append(...)`.

        It is numbered now, so a remark emitted inside the block can link to it
        (`opts.related_to(r)`) although it is reported after that one.
        """
        engine = self._engine
        if engine is None or not engine.is_enabled(kind, opts.category_name):
            return InFlightRemark()
        remark = Remark(
            kind,
            where if isinstance(where, Location) else ir.location(where),
            opts.remark_name,
            opts.category_name,
            opts.sub_category_name,
            opts.function_name,
            [_resolve(part) for part in parts],
            _identities.next(),
            () if opts.related_id is None else (opts.related_id,),
        )
        self._sink(RemarkEvent.of(remark, created=True))
        return InFlightRemark(remark, self._sink)

    def _emit(
        self,
        kind: RemarkKind,
        where: Operation | Location,
        opts: RemarkOpts,
        parts: tuple[RemarkPart, ...],
    ) -> RemarkId | None:
        engine = self._engine
        if engine is None or not engine.is_enabled(kind, opts.category_name):
            return None  # the fast path: nothing built, nothing formatted
        remark = self.in_flight(kind, where, opts, *parts)
        remark.report()
        return remark.id


# --- output ---------------------------------------------------------------------


class RemarkStreamer(Protocol):
    """Where an engine writes remarks besides the diagnostic stream."""

    def stream(self, remark: Remark) -> None:
        """Write one reported remark."""
        ...

    def finalize(self) -> None:
        """Finish the output (commit a file); called once, by `finalize()`."""
        ...


class YamlRemarkStreamer:
    """LLVM's YAML remark format, one `--- !Kind` document per remark, laid out
    byte for byte as LLVM's YAML writer lays it out (`opt-viewer` and
    `llvm-remarkutil` read it)."""

    def __init__(
        self, stream: TextIO, on_finalize: Callable[[], None] | None = None
    ) -> None:
        self._stream = stream
        self._on_finalize = on_finalize

    @classmethod
    def to_file(cls, path: str) -> YamlRemarkStreamer:
        """A streamer to `path` (`-` is stdout), opened now and committed at
        `finalize()`; raises `OutputFileError` when it can't be opened."""
        files = contextlib.ExitStack()
        stream = files.enter_context(open_output(path))
        return cls(stream, files.close)

    def stream(self, remark: Remark) -> None:
        self._stream.write(remark_yaml(remark))

    def finalize(self) -> None:
        done, self._on_finalize = self._on_finalize, None
        if done is not None:
            done()


_WRAP_COLUMN = 70  # where LLVM's YAML writer wraps flow mappings
_KEY_WIDTH = 16  # values start after the key, its colon, and padding to this


def remark_yaml(remark: Remark) -> str:
    """One remark as an LLVM YAML remark document (`--- !Passed ... ...`)."""
    text = f"--- !{remark.kind.value}"
    text += _entry("Pass", _scalar(remark.combined_category))
    text += _entry("Name", _scalar(remark.display_name))
    text += _entry("DebugLoc", _debug_loc(remark.location))
    text += _entry("Function", _scalar(remark.display_function))
    if remark.args:
        text += "\nArgs:"
        for arg in remark.args:
            value = arg.value
            if value.count("\n") > 1:  # a literal block, indented under the key
                lines = value.split("\n")
                if lines[-1] == "":
                    lines.pop()
                block = "".join(f"      {line}\n" for line in lines)
                text += f"\n  - {arg.key}:{_padding(arg.key)} |\n{block}"
            else:
                text += f"\n  - {arg.key}:{_padding(arg.key)}{_scalar(value)}"
    return text + "\n...\n"


def _padding(key: str) -> str:
    return " " * (_KEY_WIDTH - len(key)) if len(key) < _KEY_WIDTH else " "


def _entry(key: str, value: str) -> str:
    return f"\n{key}:{_padding(key)}{value}"


def _debug_loc(loc: Location) -> str:
    """`{ File: f, Line: l, Column: c }`, wrapped (after a comma) past column 70."""
    if loc.file is None:
        file, line, column = "<unknown file>", 0, 0
    else:
        file, line, column = loc.file, loc.line, loc.column
    start = len("DebugLoc:") + len(_padding("DebugLoc"))
    text = "{ "
    at = start + 2
    for index, (key, value) in enumerate(
        (("File", _scalar(file)), ("Line", str(line)), ("Column", str(column)))
    ):
        if index:
            text += ", "
            at += 2
        if at > _WRAP_COLUMN:
            text += "\n" + " " * (start + 2)
            at = start + 2
        piece = f"{key}: {value}"
        text += piece
        at += len(piece.encode())
    return text + " }"


def _scalar(value: str) -> str:
    """A string as LLVM's YAML writer quotes it: plain, 'single' or "double"."""
    if not value:
        return "''"
    quoting = _quoting(value)
    if quoting == 0:
        return value
    if quoting == 1:
        return "'" + value.replace("'", "''") + "'"
    return '"' + _escape(value) + '"'


_INDICATORS = frozenset("-?:\\,[]{}#&*!|>'\"%@`")
_SAFE = frozenset(b"_-^., \t")
_NUMBER = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")


def _is_yaml_number(value: str) -> bool:
    """YAML 1.2's numbers, as LLVM recognizes them (these must be quoted)."""
    if value in (".nan", ".NaN", ".NAN"):
        return True
    tail = value[1:] if value[:1] in "+-" else value
    if tail in (".inf", ".Inf", ".INF"):
        return True
    if value.startswith("0o"):
        return len(value) > 2 and all(c in "01234567" for c in value[2:])
    if value.startswith("0x"):
        return len(value) > 2 and all(c in "0123456789abcdefABCDEF" for c in value[2:])
    return _NUMBER.fullmatch(value) is not None


def _quoting(value: str) -> int:
    """0: plain, 1: single quotes, 2: double quotes (LLVM's `needsQuotes`)."""
    needed = 0
    if value[0] in " \t\n\v\f\r" or value[-1] in " \t\n\v\f\r":
        needed = 1
    if (
        value in ("null", "Null", "NULL", "~")
        or value in ("true", "True", "TRUE", "false", "False", "FALSE")
        or _is_yaml_number(value)
        or value[0] in _INDICATORS
    ):
        needed = 1
    for byte in value.encode("utf-8", "surrogateescape"):
        if (0x30 <= byte <= 0x39) or (0x41 <= byte <= 0x5A) or (0x61 <= byte <= 0x7A):
            continue
        if byte in _SAFE:
            continue
        if byte in (0x0A, 0x0D, 0x7F) or byte <= 0x1F or byte & 0x80:
            return 2
        needed = 1
    return needed


_ESCAPES = {
    "\\": "\\\\",
    '"': '\\"',
    "\0": "\\0",
    "\a": "\\a",
    "\b": "\\b",
    "\t": "\\t",
    "\n": "\\n",
    "\v": "\\v",
    "\f": "\\f",
    "\r": "\\r",
    "\x1b": "\\e",
    "\x85": "\\N",
    "\xa0": "\\_",
    "\u2028": "\\L",
    "\u2029": "\\P",
}


def _escape(value: str) -> str:
    """A double-quoted scalar's body, escaped as LLVM's `yaml::escape`."""
    out: list[str] = []
    for char in value:
        escaped = _ESCAPES.get(char)
        if escaped is not None:
            out.append(escaped)
        elif ord(char) < 0x20 or (ord(char) >= 0x80 and not char.isprintable()):
            digits = f"{ord(char):X}"
            if len(digits) <= 2:
                out.append("\\x" + digits.rjust(2, "0"))
            elif len(digits) <= 4:
                out.append("\\u" + digits.rjust(4, "0"))
            else:
                out.append("\\U" + digits.rjust(8, "0"))
        else:
            out.append(char)
    return "".join(out)


# --- the engine -----------------------------------------------------------------


@dataclass(frozen=True)
class RemarkCategories:
    """Which remarks exist: per kind, a regex that must match the whole category
    name. `all` applies to every kind, or-ed with the kind's own pattern; a kind
    with neither (or an invalid pattern) is off, as in mlir-opt."""

    all: str | None = None
    passed: str | None = None
    missed: str | None = None
    analysis: str | None = None
    failed: str | None = None


def _category_filter(everything: str | None, own: str | None) -> re.Pattern[str] | None:
    parts = [part for part in (everything, own) if part]
    if not parts:
        return None
    pattern = "|".join(parts)
    stripped = pattern.strip()
    if not (stripped.startswith("^") and stripped.endswith("$")):
        pattern = f"^({pattern})$"
    try:
        return re.compile(pattern)
    except (re.error, OverflowError, RecursionError):  # `a{99999999999}`, deep groups
        return None


def _position(remark: Remark) -> tuple[bool, str, int, int]:
    """Sort key of the `final` policy: by file, line, column; unknown last."""
    loc = remark.location
    return (loc.file is None, loc.file or "", loc.line, loc.column)


class RemarkEngine:
    """Filters, numbers and reports remarks: MLIR's `RemarkEngine`.

    Give it to a pass manager (`PassManager.enable_remarks`) and its passes'
    remarks arrive here, in program order whatever executor ran them. With
    `print_as_diagnostics`, each reported remark is a `remark` diagnostic through
    `diagnostics` (the pass manager's, once enabled on one); with a `streamer`,
    it is written there too. `finalize()` (or leaving a `with` block) reports
    what the `final` policy kept and finishes the streamer.
    """

    def __init__(
        self,
        categories: RemarkCategories | None = None,
        *,
        policy: RemarkPolicy = "all",
        streamer: RemarkStreamer | None = None,
        print_as_diagnostics: bool = True,
        diagnostics: DiagnosticEngine | None = None,
    ) -> None:
        if policy not in ("all", "final"):
            raise ValueError(f"unknown remark policy '{policy}'")
        self.categories = categories or RemarkCategories()
        self.policy: RemarkPolicy = policy
        self.streamer = streamer
        self.print_as_diagnostics = print_as_diagnostics
        self.diagnostics = diagnostics
        cats = self.categories
        self._filters = {
            RemarkKind.PASSED: _category_filter(cats.all, cats.passed),
            RemarkKind.MISSED: _category_filter(cats.all, cats.missed),
            RemarkKind.FAILURE: _category_filter(cats.all, cats.failed),
            RemarkKind.ANALYSIS: _category_filter(cats.all, cats.analysis),
        }
        self._numbers: dict[RemarkId, int] = {}
        self._postponed: dict[tuple[Location, str, str, RemarkKind], Remark] = {}
        self._lock = threading.Lock()
        self._closed = False

    def is_enabled(self, kind: RemarkKind, category: str) -> bool:
        """Whether remarks of `kind` in `category` are built at all."""
        pattern = self._filters.get(kind)
        return pattern is not None and pattern.search(category) is not None

    def emitter(self) -> RemarkEmitter:
        """Emit remarks straight to this engine, from code that is not a pass."""
        return RemarkEmitter(self, self.receive)

    def receive(
        self, event: Diagnostic, deliver: DiagnosticHandler | None = None
    ) -> None:
        """Take a remark event; `deliver` gets the remark diagnostics of the `all`
        policy (default: `diagnostics`). A run's state calls this."""
        if not isinstance(event, RemarkEvent) or event.remark is None:
            return
        with self._lock:
            if self._closed:
                return
            if event.created:
                self._number(event.remark.remark_id)
                return
            remark = self._numbered(event.remark)
            if self.policy == "final":
                key = (
                    remark.location,
                    remark.display_name,
                    remark.combined_category,
                    remark.kind,
                )
                self._postponed.pop(key, None)  # the last one stays, at the end
                self._postponed[key] = remark
                return
            self._report(remark, deliver)

    def finalize(self) -> None:
        """Report the remarks the `final` policy kept (by location, each followed
        by those related to it) and finish the streamer. Later remarks are
        dropped; calling it again does nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            kept = list(self._postponed.values())
            self._postponed.clear()
            by_number = {r.number: r for r in kept if r.number}
            children = {n for r in kept for n in r.related_numbers}
            for remark in sorted(kept, key=_position):
                if remark.number in children:
                    continue  # reported after the remark it is related to
                self._report(remark, None)
                for number in remark.related_numbers:
                    related = by_number.get(number)
                    if related is not None:
                        self._report(related, None)
            if self.streamer is not None:
                self.streamer.finalize()

    def __enter__(self) -> RemarkEngine:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.finalize()

    def _number(self, remark_id: RemarkId | None) -> int:
        if remark_id is None:
            return 0
        number = self._numbers.get(remark_id)
        if number is None:
            number = self._numbers[remark_id] = len(self._numbers) + 1
        return number

    def _numbered(self, remark: Remark) -> Remark:
        related = tuple(self._number(i) for i in remark.related_ids)
        number = self._number(remark.remark_id)
        args = [RemarkArg("RelatedTo", str(n)) for n in related]
        if number:
            args.append(RemarkArg("RemarkId", str(number)))
        return dataclasses.replace(
            remark,
            args=args + remark.args,
            number=number,
            related_numbers=related,
        )

    def _report(self, remark: Remark, deliver: DiagnosticHandler | None) -> None:
        if self.streamer is not None:
            self.streamer.stream(remark)
        if self.print_as_diagnostics:
            if deliver is None:
                deliver = (self.diagnostics or _STDERR).deliver
            deliver(Diagnostic(Severity.REMARK, remark.message(), remark.location))


_STDERR = DiagnosticEngine()  # no handlers: prints remarks to stderr
