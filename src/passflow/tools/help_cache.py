"""`--help` and `--list-passes` without importing every pass: the listing, cached.

Building the pass listing imports every pass, passflow's, the plugins' and
xDSL's (0.6 s of a 0.7 s `--help`). The listing is a function of the code that
built it and of the installed distributions, so the cache keeps, next to the
listing, a manifest: the file of every module loaded when it was built and
every directory on `sys.path`, each with its size and modification time. A
read stats them again and uses the listing only if none changed: an edited
pass, an upgraded xDSL, a plugin installed or removed (which adds or removes a
`*.dist-info` directory on `sys.path`) all rebuild it. The file name is a hash
of the interpreter, `sys.path` and the versions, which the file repeats and a
read compares, so that two environments never share a listing.

The cache lives in `$PASSFLOW_HELP_CACHE`, else `$XDG_CACHE_HOME/passflow/help`,
else `~/.cache/passflow/help` (a directory of mode 0700); `PASSFLOW_HELP_CACHE=off`
turns it off. It holds JSON only, written atomically; a file that cannot be read
or written is ignored and the listing is built as without a cache.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path

import xdsl

import passflow
from passflow.tools.file_stamps import current, manifest
from passflow.tools.pass_listing import PassEntry, PassGroup

__all__ = ["CACHE_ENV", "cache_directory", "pass_groups", "read", "write"]

CACHE_ENV = "PASSFLOW_HELP_CACHE"
"""A directory for the cache, or `off`."""

_FORMAT = 1


def cache_directory() -> Path | None:
    """Where the listing is cached (None: the user turned the cache off)."""
    chosen = os.environ.get(CACHE_ENV)
    if chosen == "off":
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no home directory to be found
            return None
    return Path(base) / "passflow" / "help"


def _environment(variant: str) -> str:
    """What selects the code a listing comes from, beyond the files' stamps
    (`variant`: the plugins the command line loads)."""
    return "\0".join(
        [
            str(_FORMAT),
            variant,
            sys.executable,
            sys.version,
            passflow.__version__,
            str(xdsl.__version__),
            *sys.path,
        ]
    )


def _path(directory: Path, environment: str) -> Path:
    return directory / f"listing-{zlib.crc32(environment.encode()):08x}.json"


def read(directory: Path, variant: str = "") -> list[PassGroup] | None:
    """The cached listing, if one was built in this environment from code that
    has not changed since; else None."""
    environment = _environment(variant)
    try:
        data = json.loads(_path(directory, environment).read_text())
        if data["environment"] != environment or not current(data["manifest"]):
            return None
        return [
            PassGroup(
                title,
                [
                    PassEntry(argument, summary, [(k, v) for k, v in options])
                    for argument, summary, options in entries
                ],
            )
            for title, entries in data["groups"]
        ]
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write(directory: Path, groups: list[PassGroup], variant: str = "") -> None:
    """Cache `groups`, built by this process, with the manifest of the code it
    loaded (nothing is written if the directory cannot be)."""
    environment = _environment(variant)
    groups_data = [
        [group.title, [[e.argument, e.summary, e.options] for e in group.entries]]
        for group in groups
    ]
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = {
            "environment": environment,
            "manifest": manifest(),
            "groups": groups_data,
        }
        handle, temporary = tempfile.mkstemp(dir=directory, suffix=".tmp")
        try:
            with os.fdopen(handle, "w") as stream:
                json.dump(data, stream)
            os.replace(temporary, _path(directory, environment))
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError:
        return


def pass_groups(
    *,
    options: bool = True,
    variant: str = "",
    prepare: Callable[[], None] | None = None,
) -> list[PassGroup]:
    """`pass_doc.pass_groups(options)`, from the cache when it is current.

    `prepare` registers what the listing shows when it is built (passflow's
    passes; passflow-opt adds the plugins its command line names, and gives
    them as `variant`, so that each set of plugins has a listing of its own).
    A listing with `options` (`--help`) is cached when built; one without
    (`--list-passes`) is read from a cached full listing (the same entries,
    whose options it does not print) but not written, as building it imports
    no xDSL pass and the full listing would."""
    directory = cache_directory()
    if directory is not None:
        cached = read(directory, variant)
        if cached is not None:
            return cached
    # Every pass is imported here, only when the cache cannot answer.
    from passflow.tools import pass_doc

    if prepare is None:
        from passflow.all_passes import register_all_passes  # building it

        prepare = register_all_passes
    prepare()
    groups = pass_doc.pass_groups(options=options)
    if options and directory is not None:
        write(directory, groups, variant)
    return groups
