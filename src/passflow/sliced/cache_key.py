"""The keys of the result cache (`passflow.sliced.cache`): everything that can
change a top-level op's result, hashed.

A piece's key is the run's key and the piece's own: its text, the line and
column it starts at (diagnostics carry them), and the text and position of
every piece it references by symbol, transitively (the ops its verifier and
passes may look up). The run's key covers the rest: the module's shell (its
header, attributes and aliases), the file name, the caller's `salt`
(passflow-opt hashes every flag that is not about where files go or how many
processes run), the Python that runs it, xDSL's version and installed files,
and the code the pipeline runs (`code`, from `passflow.sliced.cache_code`).

Everything here is computed without the pass manager, the passes or the IR,
so that passflow-opt's warm path (`passflow.tools.warm_cache`) can find a
run's results before any of them loads.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import xdsl

if TYPE_CHECKING:
    from passflow.sliced.scan import PieceText, SourceSlices

__all__ = [
    "CACHE_FORMAT",
    "PASSFLOW_SOURCE",
    "digest",
    "files_fingerprint",
    "own_code_key",
    "passflow_files",
    "piece_keys",
    "run_key",
    "shell_key",
    "xdsl_version",
]

CACHE_FORMAT = 2
"""Changes when what a key covers or an entry holds changes."""

PASSFLOW_SOURCE = Path(__file__).resolve().parents[1]
"""passflow's own source tree (its `__init__.py` holds the version)."""


def digest(*parts: str) -> str:
    """SHA-256 of `parts`, each prefixed with its length (no two lists of
    parts hash alike by moving text between them)."""
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        hasher.update(len(data).to_bytes(8, "big"))
        hasher.update(data)
    return hasher.hexdigest()


def passflow_files() -> set[Path]:
    """Every source file of passflow."""
    return set(PASSFLOW_SOURCE.rglob("*.py"))


def files_fingerprint(files: Iterable[Path]) -> str:
    """A hash of each file's path and contents."""
    hasher = hashlib.sha256()
    for path in sorted(files):
        hasher.update(str(path).encode())
        try:
            hasher.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            hasher.update(b"unreadable")
    return hasher.hexdigest()


def own_code_key() -> str:
    """The code of a pipeline of passflow's own passes, named by the caller's
    salt (a command line): passflow's source, which defines those passes,
    their options and defaults, the registry that resolves their names and
    the pipeline parser. Nothing is imported to compute it."""
    return digest("passflow's own passes", files_fingerprint(passflow_files()))


def xdsl_version() -> str:
    """xDSL's version and installed files: its distribution's `METADATA` and
    `RECORD` (which holds a hash of every file it installed), read where the
    package is (`importlib.metadata` would cost 10-20 ms), or the version
    xDSL reports when no such distribution sits beside it (a source tree)."""
    package = Path(xdsl.__file__ or ".").resolve().parent
    found = sorted(package.parent.glob("xdsl-*.dist-info"))
    if len(found) == 1:
        try:
            return digest(
                (found[0] / "METADATA").read_text("utf-8"),
                (found[0] / "RECORD").read_text("utf-8"),
            )
        except OSError:
            pass
    return str(xdsl.__version__)


def run_key(code: str, name: str, shell: PieceText, salt: str) -> str:
    """What every piece's key of this run shares."""
    return digest(
        json.dumps(
            [
                CACHE_FORMAT,
                sys.version,
                xdsl_version(),
                code,
                name,
                shell.text,
                shell.first_line,
                salt,
            ]
        )
    )


def shell_key(run: str) -> str:
    """The key of the run's printed shell (the module's first line), which
    the warm path prints without parsing the shell."""
    return digest(run, "the printed shell")


def piece_keys(run: str, slices: SourceSlices) -> list[str]:
    """Each piece's key: the run's, its own text and position, and those of
    the pieces it references, transitively."""
    count = len(slices.pieces)
    own = [
        digest(str(slices.line_of[i]), slices.piece_text(i).text) for i in range(count)
    ]
    defined_by = slices.defined_by()
    direct = [
        sorted(
            {
                found
                for name in piece.references
                if (found := defined_by.get(name)) is not None and found != index
            }
        )
        for index, piece in enumerate(slices.pieces)
    ]
    keys: list[str] = []
    for index in range(count):
        seen = {index}
        queue = deque(direct[index])
        while queue:
            other = queue.popleft()
            if other not in seen:
                seen.add(other)
                queue.extend(direct[other])
        seen.discard(index)
        keys.append(digest(run, own[index], *sorted(own[i] for i in seen)))
    return keys
