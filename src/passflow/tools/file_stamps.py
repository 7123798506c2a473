"""Whether the code a process loaded is still the code on disk.

A stamp is a file's path, size and modification time. The manifest of a
process stamps the file of every module it loaded and every `sys.path`
directory (where installing or removing a distribution adds or removes a
`*.dist-info` directory, so entry points change with its stamp). Whatever was
derived from that code is current while every stamp still matches: the cached
pass listing of `--help` (`help_cache`) and the modules a `passflow-opt-server`
preloaded before it forks each run (`opt_server`).
"""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["Stamp", "current", "manifest"]

Stamp = list[Any]
"""`[path, size, mtime_ns]`, as JSON keeps it."""


def _stamp(path: str) -> Stamp | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [path, status.st_size, status.st_mtime_ns]


def manifest(*, search_path: bool = True) -> list[Stamp]:
    """The stamp of every loaded module's file and, with `search_path`, of
    every `sys.path` directory (for what depends on the installed entry
    points too)."""
    paths = {entry or "." for entry in sys.path} if search_path else set[str]()
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str):
            paths.add(file)
    return [stamp for path in sorted(paths) if (stamp := _stamp(path)) is not None]


def current(stamps: list[Stamp]) -> bool:
    """Whether every file of `stamps` still has the size and time stamped."""
    return all(_stamp(path) == [path, size, mtime] for path, size, mtime in stamps)
