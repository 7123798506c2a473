"""passflow-opt's result cache flags: `--cache[=DIR]`, `--cache-max-size`,
`--cache-stats`, `--cache-clear` (docs/cache.md).

The cache is off unless asked for, by `--cache` or by `PASSFLOW_CACHE_DIR`.
It serves sliced runs of nested pipelines only (`passflow.cache.store`);
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
from passflow.tools.invocation import PROG, Invocation

if TYPE_CHECKING:
    from pathlib import Path

    from passflow.cache.remote import RemoteTier
    from passflow.cache.store import ResultCache

__all__ = [
    "add_cache_flags",
    "cache_maintenance",
    "cache_requested",
    "cache_salt",
    "check_cache_flags",
    "input_key",
    "open_cache",
    "print_cache_stats",
    "remote_notes",
]

_NOT_IN_THE_KEY = frozenset(
    {
        "input",
        "output",
        "cache",
        "cache_max_size",
        "cache_stats",
        "cache_clear",
        "cache_remote",
        "cache_remote_key_file",
        "cache_remote_read_only",
        "executor",
        "jobs",
        "scheduler",
        "ir_history",
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
    parser.add_flag(
        "--cache-stats",
        help="print the cache's statistics (after the run, if an input or a "
        "pipeline is given; else exit)",
    )
    parser.add_option(
        "--cache-remote",
        metavar="URL",
        help="a shared cache tier beside the local one: redis://HOST:PORT, "
        "unix:///PATH or http(s)://HOST/PREFIX (an HTTP cache, /ac/ and /cas/); "
        "entries are read and written only with the team's key",
    )
    parser.add_option(
        "--cache-remote-key-file",
        metavar="FILE",
        help="the file holding the remote cache's shared HMAC key (default "
        "$PASSFLOW_CACHE_REMOTE_KEY_FILE); never the key itself",
    )
    parser.add_flag(
        "--cache-remote-read-only",
        help="read the remote cache, never write it (developer machines; CI writes)",
    )
    parser.add_flag(
        "--cache-clear",
        help="empty the cache (before the run, if an input or a pipeline is "
        "given; else exit)",
    )


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
    from passflow.cache.store import default_cache_dir  # the cache is asked for

    return default_cache_dir()


def check_cache_flags(args: argparse.Namespace) -> None:
    """Reject a `--cache-max-size` that is not a size, whether or not the
    cache is asked for (as llvm::cl checks every flag's value)."""
    if args.cache_max_size is not None:
        _max_size(args)


def _max_size(args: argparse.Namespace) -> int:
    if args.cache_max_size is None:
        return _default_max_size()
    from passflow.cache.store import parse_size  # the flag is given

    try:
        return parse_size(args.cache_max_size)
    except ValueError as err:
        raise PassflowError(f"for the --cache-max-size option: {err}") from None


def _default_max_size() -> int:
    from passflow.cache.store import DEFAULT_MAX_SIZE  # the cache is asked for

    return DEFAULT_MAX_SIZE


def open_cache(args: argparse.Namespace, *, quiet: bool = False) -> ResultCache | None:
    """The cache the command line asks for, or None (off, or unusable: then
    one note on stderr, unless `quiet`)."""
    directory = _directory(args)
    if directory is None:
        return None
    from passflow.cache.store import CacheUnavailableError, ResultCache  # asked for

    try:
        max_size = _max_size(args)
    except PassflowError:
        if quiet:
            return None
        raise
    try:
        cache = ResultCache(directory, max_size)
    except CacheUnavailableError as err:
        if not quiet:
            sys.stderr.write(f"{PROG}: note: running without the cache: {err}\n")
        return None
    if args.cache_remote:
        try:
            cache.remote = _remote(args, quiet)
        except PassflowError:
            cache.close()
            if quiet:
                return None  # the full run says what is wrong
            raise
    return cache


def _remote(args: argparse.Namespace, quiet: bool) -> RemoteTier | None:
    """The remote tier `--cache-remote` asks for, or None without a key
    (one note, unless `quiet`). `RemoteError` for a bad URL or key file."""
    from passflow.cache.remote import KEY_FILE_VARIABLE, open_remote  # asked for

    tier = open_remote(
        args.cache_remote,
        args.cache_remote_key_file,
        read_only=args.cache_remote_read_only,
    )
    if tier is None and not quiet:
        sys.stderr.write(
            f"{PROG}: note: the remote cache is neither read nor written without "
            f"its key: give --cache-remote-key-file=FILE or {KEY_FILE_VARIABLE}\n"
        )
    return tier


def remote_notes(cache: ResultCache | None) -> list[str]:
    """What the remote tier has to say about this run (a failure, refused
    entries), once each."""
    if cache is None or cache.remote is None:
        return []
    return list(dict.fromkeys(cache.remote.notes))


def _runs_input(inv: Invocation) -> bool:
    """Whether the command line asks for a run besides the cache's upkeep:
    it names an input file or a pipeline."""
    args = inv.args
    return args.input != "-" or bool(args.pass_pipeline) or bool(inv.pass_flags)


def cache_maintenance(inv: Invocation) -> int | None:
    """`--cache-clear` (done here) and `--cache-stats` without a run: the
    exit status; None if the run goes on (`--cache-stats` then prints
    after it, `print_cache_stats`)."""
    args = inv.args
    if not (args.cache_stats or args.cache_clear):
        return None
    running = _runs_input(inv)
    if running and not args.cache_clear:
        return None
    cache = _maintained_cache(args)
    if cache is None:
        return 1
    try:
        if args.cache_clear:
            cache.clear()
        if args.cache_stats and not running:
            sys.stdout.write(str(cache.stats()))
    finally:
        cache.close()
    return None if running else 0


def print_cache_stats(inv: Invocation) -> int:
    """`--cache-stats` after a run: the statistics of the run's cache (with
    why it was not cached, if it was not), else of the directory's; the exit
    status of printing them."""
    cache = inv.cache or _maintained_cache(inv.args)
    if cache is None:
        return 1
    sys.stdout.write(str(cache.stats()))
    sys.stdout.flush()
    if cache is not inv.cache:
        cache.close()
    return 0


def _maintained_cache(args: argparse.Namespace) -> ResultCache | None:
    """The cache `--cache-stats` and `--cache-clear` work on, or None after
    an error on stderr."""
    from passflow.cache.store import CacheUnavailableError, ResultCache  # asked for

    directory = _directory(args) or _default_directory()
    try:
        return ResultCache(directory, _max_size(args))
    except CacheUnavailableError as err:
        sys.stderr.write(f"{PROG}: {err}\n")
        return None


def cache_salt(inv: Invocation) -> str:
    """What the output depends on besides the text and the code: every flag
    but those that choose files and executors (the pipeline's text among
    them), the individual pass flags, and the text of the IRDL file and of
    each `xDSLOptMain` subclass's file the command line loads (the dialects
    they register change what the input parses to)."""
    import hashlib  # for a run with the cache only

    args = inv.args
    pass_flags = [f"{flag.name}={flag.options}" for flag in inv.pass_flags]
    settings = sorted(
        (name, repr(value))
        for name, value in vars(args).items()
        if name not in _NOT_IN_THE_KEY
    )
    # A plugin's code is in the key as code (`passflow.cache.code`); an IRDL
    # file and an xDSLOptMain subclass's dialects shape how the input parses.
    parsed_with = [args.irdl_file] if args.irdl_file else []
    parsed_with += [_opt_main_file(spec) for spec in inv.plugins.opt_mains]
    key = repr((settings, pass_flags, [_source_text(path) for path in parsed_with]))
    return hashlib.sha256(key.encode()).hexdigest()


def input_key(name: str, salt: str, text: str) -> str:
    """What a run is looked up from besides the code: the input's name and
    text and the flags' `cache_salt`. The store remembers it for the runs it
    held in full (`ResultCache.remember_answered`): a guess for the next run
    of the same text (`passflow.tools.warm_fork`), never a result's key, so a
    checksum of the text does (a collision only makes a guess wrong)."""
    import hashlib  # for a run with the cache only
    import zlib

    head = hashlib.sha256(f"{len(name)}:{name}{salt}".encode()).hexdigest()
    data = text.encode("utf-8", "surrogatepass")
    return f"{head}:{len(data)}:{zlib.crc32(data):08x}"


def _opt_main_file(spec: str) -> str:
    """The file of an `xDSLOptMain` subclass named `file.py:Class` or
    `module:Class` (a module's file once it is imported)."""
    head = spec.rpartition(":")[0] or spec
    if head.endswith(".py"):
        return head
    module = sys.modules.get(head)
    return str(getattr(module, "__file__", None) or head)


def _source_text(path: str) -> str:
    """The text of the file `path` (an IRDL file, a plugin's source)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            return stream.read()
    except OSError:
        return f"<unreadable {path}>"
