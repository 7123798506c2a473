"""The code a run's key covers, hashed by content.

A cached result is only as current as the code that made it: passflow's
source, xDSL's (an installed release, an editable install or a source
checkout alike: what is on disk is what runs, so no install-time record is
trusted) and, for a pipeline that is not passflow's own, each plugin's files.
Every file is hashed by its bytes, so an edit of one line anywhere in them is
another key.

Hashing a thousand files on every run would cost a warm run more than the
run it saves, so each file's digest is remembered beside its stamp (size,
modification and change time, inode) in the cache itself (`StampMemo`): a
file whose stamp is unchanged is not read again. An edit changes the size or
the times, a replaced file the inode; the change time cannot be set back by
the user (SECURITY.md says what this trusts).
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import xdsl

__all__ = [
    "OWN_PIPELINE",
    "PASSFLOW_SOURCE",
    "PipelineCode",
    "Stamp",
    "StampMemo",
    "code_fingerprint",
    "digest",
    "source_files",
    "xdsl_source",
]

PASSFLOW_SOURCE = Path(__file__).resolve().parents[1]
"""passflow's own source tree (its `__init__.py` holds the version)."""

Stamp = tuple[int, int, int, int]
"""`(size, mtime_ns, ctime_ns, inode)` of a file."""

_SETTLED_NS = 2_000_000_000
"""A file modified longer ago than this (2 s, more than any file system's
clock tick) is memoized; a younger one is hashed on every run."""


class StampMemo(Protocol):
    """Where the digests of files are remembered with their stamps (the
    result cache's store), and the fingerprints computed while it is open
    (`fingerprints`: a store serves one run, so the chunks of a file share
    them, and an edit made during a run is seen by the next)."""

    fingerprints: dict[PipelineCode, str]

    def remembered_digests(self) -> Mapping[str, tuple[Stamp, str]]:
        """Each remembered file's stamp and digest, by path."""
        ...

    def remember_digests(self, digests: Mapping[str, tuple[Stamp, str]]) -> None:
        """Remember these files' stamps and digests."""
        ...


@dataclass(frozen=True)
class PipelineCode:
    """What a run's key holds of the code beyond passflow's and xDSL's source:
    more source `files` (plugins, a pass class defined elsewhere), the
    `inputs` its passes read (`Pass.external_inputs`), hashed by content, and
    the pipeline's `text` as printed with its settings (empty when the
    caller's salt holds the text it was built from)."""

    files: frozenset[Path] = field(default_factory=frozenset[Path])
    inputs: frozenset[Path] = field(default_factory=frozenset[Path])
    text: str = ""


OWN_PIPELINE = PipelineCode()
"""The code of a pipeline of passflow's own passes named by the caller's salt
(passflow-opt's command line): passflow's and xDSL's source decide all it
runs. passflow-opt's warm path keys every run so, without building it."""


def xdsl_source() -> Path:
    """The directory of the xDSL package this process runs."""
    return Path(xdsl.__file__ or ".").resolve().parent


def source_files(root: Path) -> list[str]:
    """Every file of the tree `root` but Python's bytecode caches (they are
    derived from the sources, and rewritten as they are imported) and type
    stubs (never imported; xDSL's own tests write `.pyi` files into its
    package), sorted."""
    found: list[str] = []
    pending = [str(root)]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    pending.append(entry.path)
            elif not entry.name.endswith((".pyc", ".pyi")):
                found.append(entry.path)
    found.sort()
    return found


def _stamp(path: str) -> Stamp | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return (status.st_size, status.st_mtime_ns, status.st_ctime_ns, status.st_ino)


def _file_digest(path: str) -> str:
    try:
        with open(path, "rb") as stream:
            return hashlib.sha256(stream.read()).hexdigest()
    except OSError:
        return "unreadable"


def _digests(memo: StampMemo | None, paths: Sequence[str]) -> list[str]:
    """Each file's digest: the memo's when its stamp matches, else read (and
    remembered)."""
    known: Mapping[str, tuple[Stamp, str]] = (
        memo.remembered_digests() if memo is not None else {}
    )
    found: list[str] = []
    fresh: dict[str, tuple[Stamp, str]] = {}
    now = time.time_ns()
    for path in paths:
        stamp = _stamp(path)
        remembered = known.get(path)
        if stamp is not None and remembered is not None and remembered[0] == stamp:
            found.append(remembered[1])
            continue
        content = _file_digest(path)
        found.append(content)
        # A file written moments ago may change again within the same clock
        # tick, size unchanged: it is hashed again until it has settled.
        settled = stamp is not None and now - stamp[1] > _SETTLED_NS
        if stamp is not None and settled and content != "unreadable":
            fresh[path] = (stamp, content)
    if memo is not None and fresh:
        memo.remember_digests(fresh)
    return found


def code_fingerprint(memo: StampMemo | None, code: PipelineCode) -> str:
    """A hash of passflow's and xDSL's source trees (paths relative to each),
    `code.files` (by absolute path) and `code.inputs` (by path, read every
    time: a pass's input is the user's data, not code that rarely changes)."""
    if memo is not None and code in memo.fingerprints:
        return memo.fingerprints[code]
    found = _fingerprint(memo, code)
    if memo is not None:
        memo.fingerprints[code] = found
    return found


def _fingerprint(memo: StampMemo | None, code: PipelineCode) -> str:
    names: list[str] = []
    paths: list[str] = []
    for role, root in (("passflow", PASSFLOW_SOURCE), ("xdsl", xdsl_source())):
        files = source_files(root)
        skip = len(str(root)) + 1
        names += (f"{role}:{path[skip:]}" for path in files)
        paths += files
    extra = sorted(map(str, code.files))
    names += (f"file:{path}" for path in extra)
    paths += extra
    parts: list[str] = []
    for name, content in zip(names, _digests(memo, paths), strict=True):
        parts += (name, content)
    for path in sorted(map(str, code.inputs)):
        parts += (f"input:{path}", _file_digest(path))
    return digest(*parts, "pipeline", code.text)


def digest(*parts: str) -> str:
    """SHA-256 of `parts`, each prefixed with its length (no two lists of
    parts hash alike by moving text between them)."""
    framed: list[bytes] = []
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        framed += (len(data).to_bytes(8, "big"), data)
    return hashlib.sha256(b"".join(framed)).hexdigest()
