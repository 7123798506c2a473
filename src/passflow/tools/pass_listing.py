"""The pass listing of `--help` and `--list-passes`, as data and as text.

Kept apart from `pass_doc` (which imports every pass to build the listing) so
that a listing read back from `help_cache` is formatted without importing a
pass, the registry or the IR.
"""

from __future__ import annotations

import shutil
import textwrap
from dataclasses import dataclass

__all__ = ["PassEntry", "PassGroup", "format_pass_groups"]


@dataclass(frozen=True)
class PassEntry:
    """One pass or pipeline as `--help` and `--list-passes` show it."""

    argument: str
    summary: str
    options: list[tuple[str, str]]


@dataclass(frozen=True)
class PassGroup:
    """A titled group of entries: passflow's, xDSL's, or the test passes."""

    title: str
    entries: list[PassEntry]


def _wrapped(key: str, text: str, indent: int, column: int, width: int) -> list[str]:
    """`key` at `indent`, `text` from `column`, wrapped to `width` (on the next
    line when `key` reaches the column)."""
    head = " " * indent + key
    room = max(width - column, 20)
    lines = textwrap.wrap(text, room) or [""]
    pad = " " * column
    if len(head) + 2 > column:
        return [head, *(pad + line for line in lines if line)]
    first = head.ljust(column) + lines[0]
    return [first.rstrip(), *(pad + line for line in lines[1:])]


def format_pass_groups(
    groups: list[PassGroup], *, prefix: str, options: bool, width: int | None = None
) -> str:
    """The groups as text: a title per group, a line per entry (`prefix` before
    its argument) with its summary wrapped to `width` (the terminal's by
    default), and with `options`, each option below its pass."""
    width = width or shutil.get_terminal_size().columns
    column = min(40, max(24, width // 3))
    lines: list[str] = []
    for group in groups:
        if not group.entries:
            continue
        lines += ["", f"{group.title}:"] if lines else [f"{group.title}:"]
        for entry in group.entries:
            lines += _wrapped(prefix + entry.argument, entry.summary, 2, column, width)
            if options:
                for key, text in entry.options:
                    lines += _wrapped(key, text, 6, column + 2, width)
    return "\n".join(lines) + "\n"
