"""`passflow-history FILE`: questions to an IR history (`--ir-history=FILE`).

- `passflow-history FILE`: the runs, and per pass (by its path in the
  pipeline) how often it ran, how many symbols it changed, its time;
- `passflow-history FILE @f500`: every pass that changed `@f500`, in order,
  each with its diff (`--first`: the first one only);
- `passflow-history FILE --pass cse`: what `cse` changed (with a symbol: what
  it changed there);
- `passflow-history FILE --from input.mlir:120`: the output's ops that came
  from that line, and the passes that changed their symbols.

`--json` gives the same answers as one JSON document, for CI. A file that is
not an IR history is one error line and exit status 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, cast

from passflow.instruments.history_store import (
    HistoryFile,
    HistoryFileError,
    Origin,
    SymbolChange,
)

__all__ = ["main"]

PROG = "passflow-history"


class _UsageError(Exception):
    """A question the history cannot answer as asked."""

    def __init__(self, message: str, note: str | None = None) -> None:
        super().__init__(message)
        self.note = note


@dataclass(frozen=True, slots=True)
class _Place:
    file: str
    line: int


def _place(text: str) -> _Place:
    file, _, line = text.rpartition(":")
    if not file or not line.isdigit():
        raise argparse.ArgumentTypeError(
            f"'{text}' is not FILE:LINE (for example input.mlir:120)"
        )
    return _Place(file, int(line))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Ask an IR history (passflow-opt --ir-history=FILE) what the "
        "passes did: to one symbol, by one pass, or to the ops of one source line.",
    )
    parser.add_argument("file", metavar="FILE", help="the IR history")
    parser.add_argument(
        "symbol",
        metavar="@SYMBOL",
        nargs="?",
        help="a top-level symbol (@f500): every pass that changed it",
    )
    parser.add_argument(
        "--pass", dest="pass_name", metavar="NAME", help="only what this pass changed"
    )
    parser.add_argument(
        "--first", action="store_true", help="only the first change that matches"
    )
    parser.add_argument(
        "--from",
        dest="origin",
        metavar="FILE:LINE",
        type=_place,
        help="the output's ops located at this source line, and who changed them",
    )
    parser.add_argument(
        "--no-diff", action="store_true", help="list the changes without diffs"
    )
    parser.add_argument("--json", action="store_true", help="answer in JSON")
    return parser


def _symbol(text: str) -> str:
    return text if text.startswith("@") or "#" in text else f"@{text}"


def _change_json(history: HistoryFile, change: SymbolChange, diff: bool) -> object:
    execution = change.execution
    found: dict[str, object] = {
        "execution": execution.id,
        "run": execution.run,
        "pass": execution.pass_name,
        "argument": execution.argument,
        "path": execution.path,
        "op": execution.op,
        "symbol": change.symbol,
        "what": change.what,
        "wall": execution.wall,
        "origin": execution.origin,
        "statistics": dict(history.statistics(execution.id)),
        "diagnostics": [
            {"severity": s, "location": loc, "message": m}
            for s, loc, m in history.diagnostics(execution.id)
        ],
    }
    if diff:
        found.update(before=change.before, after=change.after, diff=change.diff())
    return found


def _change_text(history: HistoryFile, change: SymbolChange, diff: bool) -> str:
    execution = change.execution
    head = (
        f"#{execution.id} {execution.path} on {execution.op}: {change.what} "
        f"{change.symbol}{' (from cache)' if execution.origin == 'cache' else ''}"
    )
    lines = [head]
    stats = history.statistics(execution.id)
    if stats:
        lines.append("  statistics: " + ", ".join(f"{n} {v:+d}" for n, v in stats))
    for severity, location, message in history.diagnostics(execution.id):
        lines.append(f"  {location}: {severity}: {message}")
    if diff:
        lines.append(change.diff())
    return "\n".join(lines)


def _known_symbols(history: HistoryFile) -> set[str]:
    return set(history.symbols())


def _changes(args: argparse.Namespace, history: HistoryFile) -> list[SymbolChange]:
    symbol = _symbol(args.symbol) if args.symbol else None
    changes = history.changes(symbol, args.pass_name)
    if not changes and symbol is not None and symbol not in _known_symbols(history):
        final = {o.symbol for o in history.origins_of(symbol)}
        if symbol not in final:
            sample = ", ".join(sorted(_known_symbols(history))[:5])
            raise _UsageError(
                f"no symbol {symbol} in the history",
                f"the changed symbols include {sample}" if sample else None,
            )
    if args.pass_name and not changes:
        ran = [e for e in history.executions() if e.kind == "pass"]
        names = {e.label for e in ran} | {e.pass_name for e in ran}
        if args.pass_name not in names:
            raise _UsageError(
                f"no pass '{args.pass_name}' ran in this history",
                "passes that ran: " + ", ".join(sorted({e.label for e in ran})),
            )
    return changes[:1] if args.first else changes


@dataclass(slots=True)
class _PassRow:
    path: str
    runs: int = 0
    changed: int = 0
    wall: float = 0.0
    failed: int = 0
    cached: int = 0
    """Executions the result cache answered (no timing)."""


def _summary(history: HistoryFile) -> dict[str, object]:
    passes: dict[str, _PassRow] = {}
    changed: dict[int, int] = {}
    for change in history.changes():
        changed[change.execution.id] = changed.get(change.execution.id, 0) + 1
    for execution in history.executions():
        if execution.kind != "pass":
            continue
        row = passes.setdefault(execution.path, _PassRow(execution.path))
        row.runs += 1
        row.changed += changed.get(execution.id, 0)
        row.wall += execution.wall
        row.failed += int(execution.failed)
        row.cached += int(execution.origin == "cache")
    return {
        "runs": [{"id": i, "pipeline": p} for i, p in history.runs()],
        "passes": [asdict(row) for row in passes.values()],
        "symbols": len(history.symbols()),
    }


def _summary_text(history: HistoryFile) -> str:
    summary = _summary(history)
    lines = [f"run {run}: {pipeline}" for run, pipeline in history.runs()]
    lines.append(f"{summary['symbols']} top-level symbols changed")
    lines.append(f"{'runs':>6} {'changed':>8} {'wall ms':>9}  pass")
    for row in cast("list[dict[str, Any]]", summary["passes"]):
        failed = f"  ({row['failed']} failed)" if row["failed"] else ""
        cached = f"  ({row['cached']} from cache)" if row["cached"] else ""
        lines.append(
            f"{row['runs']:>6} {row['changed']:>8} {row['wall'] * 1e3:>9.2f}  "
            f"{row['path']}{failed}{cached}"
        )
    return "\n".join(lines)


def _origins_json(origins: list[Origin]) -> list[dict[str, object]]:
    return [
        {
            "run": o.run,
            "symbol": o.symbol,
            "op": o.op,
            "location": f"{o.file}:{o.line}:{o.column}",
        }
        for o in origins
    ]


def _answer(args: argparse.Namespace, history: HistoryFile) -> str:
    diff = not args.no_diff
    if args.origin is not None:
        origins = history.origins(args.origin.file, args.origin.line)
        symbols = list(dict.fromkeys(o.symbol for o in origins))
        changes = [change for symbol in symbols for change in history.changes(symbol)]
        if args.json:
            return json.dumps(
                {
                    "from": f"{args.origin.file}:{args.origin.line}",
                    "ops": _origins_json(origins),
                    "changes": [_change_json(history, c, diff) for c in changes],
                },
                indent=2,
            )
        if not origins:
            return f"no op of the output is located at {args.origin.file}:{args.origin.line}"
        lines = [
            f"{len(origins)} op(s) of the output come from {args.origin.file}:{args.origin.line}:"
        ]
        lines += [
            f"  {o.symbol}: {o.op} at {o.file}:{o.line}:{o.column}" for o in origins
        ]
        lines += [_change_text(history, c, diff) for c in changes]
        return "\n".join(lines)
    if args.symbol is None and args.pass_name is None:
        if args.json:
            return json.dumps(_summary(history), indent=2)
        return _summary_text(history)
    changes = _changes(args, history)
    if args.json:
        return json.dumps(
            {
                "symbol": _symbol(args.symbol) if args.symbol else None,
                "pass": args.pass_name,
                "changes": [_change_json(history, c, diff) for c in changes],
            },
            indent=2,
        )
    if not changes:
        what = _symbol(args.symbol) if args.symbol else "any symbol"
        by = f" '{args.pass_name}'" if args.pass_name else ""
        return f"no pass{by} changed {what}"
    return "\n".join(_change_text(history, c, diff) for c in changes)


def main(argv: Sequence[str] | None = None) -> int:
    """`passflow-history`: answer one question about an IR history."""
    args = _parser().parse_intermixed_args(argv)  # `--pass cse @f500` too
    try:
        history = HistoryFile(args.file)
    except HistoryFileError as err:
        sys.stderr.write(f"{PROG}: error: {err}\n")
        return 1
    try:
        answer = _answer(args, history)
    except HistoryFileError as err:
        sys.stderr.write(f"{PROG}: error: {err}\n")
        return 1
    except _UsageError as err:
        sys.stderr.write(f"{PROG}: error: {err}\n")
        if err.note:
            sys.stderr.write(f"{PROG}: note: {err.note}\n")
        return 1
    finally:
        history.close()
    sys.stdout.write(answer + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
