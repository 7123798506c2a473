"""passflow-opt's result cache flags: `--cache[=DIR]`, `--cache-max-size`,
`--cache-stats`, `--cache-clear` (docs/cache.md).

The cache is off unless asked for, by `--cache` or by `PASSFLOW_CACHE_DIR`.
It serves sliced runs of nested pipelines only (`passflow.sliced.cache`);
every other run goes on as without it. A directory that cannot hold the
cache is one note, and the run goes on uncached. The cache (SQLite, JSON)
loads only when asked for.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING

from passflow.diagnostics import PassflowError
from passflow.tools.command_line import FlagParser

if TYPE_CHECKING:
    from pathlib import Path

    from passflow.sliced.cache import ResultCache
    from passflow.tools.invocation import Invocation

__all__ = [
    "add_cache_flags",
    "cache_maintenance",
    "cache_requested",
    "cache_salt",
    "open_cache",
]

_NOT_IN_THE_KEY = frozenset(
    {
        "input",
        "output",
        "cache",
        "cache_max_size",
        "cache_stats",
        "cache_clear",
        "executor",
        "jobs",
        "scheduler",
    }
)
"""Flags that choose where files go and what computes the result, never what
the result is: they stay out of the key."""


def add_cache_flags(parser: FlagParser) -> None:
    parser.add_value_optional(
        "--cache",
        bare="",
        metavar="DIR",
        help="reuse the results of unchanged top-level ops from the cache in DIR "
        "(default $PASSFLOW_CACHE_DIR, else $XDG_CACHE_HOME/passflow or "
        "~/.cache/passflow); $PASSFLOW_CACHE_DIR alone turns it on",
    )
    parser.add_option(
        "--cache-max-size",
        metavar="SIZE",
        help="evict the least recently used cache entries past SIZE "
        "(bytes, or with K, M, G; default 1G)",
    )
    parser.add_flag("--cache-stats", help="print the cache's statistics and exit")
    parser.add_flag("--cache-clear", help="empty the cache and exit")


def cache_requested(args: argparse.Namespace) -> bool:
    """Whether the run asks for the cache: `--cache`, or `PASSFLOW_CACHE_DIR`."""
    return args.cache is not None or bool(os.environ.get("PASSFLOW_CACHE_DIR"))


def _directory(args: argparse.Namespace) -> Path | None:
    chosen: str | None = args.cache
    if not cache_requested(args):
        return None
    from pathlib import Path  # the cache is asked for

    return Path(chosen) if chosen else _default_directory()


def _default_directory() -> Path:
    from passflow.sliced.cache import default_cache_dir  # the cache is asked for

    return default_cache_dir()


def _max_size(args: argparse.Namespace) -> int:
    from passflow.sliced.cache import DEFAULT_MAX_SIZE, parse_size  # asked for

    if args.cache_max_size is None:
        return DEFAULT_MAX_SIZE
    try:
        return parse_size(args.cache_max_size)
    except ValueError as err:
        raise PassflowError(f"for the --cache-max-size option: {err}") from None


def open_cache(args: argparse.Namespace, *, quiet: bool = False) -> ResultCache | None:
    """The cache the command line asks for, or None (off, or unusable: then
    one note on stderr, unless `quiet`)."""
    directory = _directory(args)
    if directory is None:
        return None
    from passflow.sliced.cache import CacheUnavailableError, ResultCache  # asked for

    try:
        max_size = _max_size(args)
    except PassflowError:
        if quiet:
            return None
        raise
    try:
        return ResultCache(directory, max_size)
    except CacheUnavailableError as err:
        if not quiet:
            sys.stderr.write(f"passflow-opt: note: running without the cache: {err}\n")
        return None


def cache_maintenance(args: argparse.Namespace) -> int | None:
    """`--cache-stats` / `--cache-clear`: the exit status, or None if neither
    was asked for."""
    if not (args.cache_stats or args.cache_clear):
        return None
    from passflow.sliced.cache import CacheUnavailableError, ResultCache  # asked for

    directory = _directory(args) or _default_directory()
    try:
        cache = ResultCache(directory, _max_size(args))
    except CacheUnavailableError as err:
        sys.stderr.write(f"passflow-opt: {err}\n")
        return 1
    try:
        if args.cache_clear:
            cache.clear()
        if args.cache_stats:
            sys.stdout.write(str(cache.stats()))
    finally:
        cache.close()
    return 0


def cache_salt(inv: Invocation) -> str:
    """What the output depends on besides the text and the code: every flag
    but those that choose files and executors (the pipeline's text among
    them), the individual pass flags, and the text of the plugins and IRDL
    file the command line loads (a dialect changes what the input parses to)."""
    import hashlib  # for a run with the cache only

    args = inv.args
    pass_flags = [f"{flag.name}={flag.options}" for flag in inv.pass_flags]
    settings = sorted(
        (name, repr(value))
        for name, value in vars(args).items()
        if name not in _NOT_IN_THE_KEY
    )
    sources = [*inv.plugins.passes, *inv.plugins.dialects, *inv.plugins.opt_mains]
    if args.irdl_file:
        sources.append(args.irdl_file)
    loaded = [_source_text(source) for source in sources]
    key = repr((settings, pass_flags, loaded))
    return hashlib.sha256(key.encode()).hexdigest()


def _source_text(source: str) -> str:
    """The text of a plugin (a file, or a loaded module's file, also as
    `file.py:name` or `module:name`) or IRDL file."""
    head = source.rpartition(":")[0] if ".py:" in source else source.partition(":")[0]
    module = sys.modules.get(head)
    path = getattr(module, "__file__", None) or head
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return stream.read()
    except OSError:
        return f"<unreadable {source}>"
