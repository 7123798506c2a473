"""The keys of the result cache (`passflow.sliced.cache`): everything that can
change a top-level op's result, hashed.

A piece's key is the run's key and the piece's own: its text, the line and
column it starts at (diagnostics carry them), and the text and position of
every piece it references by symbol, transitively (the ops its verifier and
passes may look up). The run's key covers the rest: the module's shell (its
header, attributes and aliases), the file name, the pipeline as printed with
all its options, the verifier and pass-error settings, the caller's `salt`
(passflow-opt hashes every flag that is not about where files go or how many
processes run), the xDSL version, and the code: the source
files of every class of every pass in the pipeline (plugins included; the
xDSL pass an adapter runs, too) and every source file of passflow itself
(its version among them), so an edited pass or helper is never served an old
result.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import deque
from pathlib import Path

import xdsl

from passflow.pass_base import walk_passes
from passflow.pass_manager import PassManager
from passflow.sliced.scan import PieceText, SourceSlices

__all__ = ["CACHE_FORMAT", "code_fingerprint", "piece_keys", "run_key"]

CACHE_FORMAT = 1
"""Changes when what an entry holds changes."""


def _digest(*parts: str) -> str:
    hasher = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        hasher.update(len(data).to_bytes(8, "big"))
        hasher.update(data)
    return hasher.hexdigest()


_PACKAGE = Path(__file__).resolve().parents[1]
"""passflow's own source tree (its `__init__.py` holds the version)."""


def _source_files(pm: PassManager) -> set[Path]:
    """passflow's own source files and those defining each pass's classes."""
    root = _PACKAGE
    files = set(root.rglob("*.py"))
    for pass_ in walk_passes([pm]):
        classes: list[type] = list(type(pass_).__mro__)
        wrapped = getattr(type(pass_), "xdsl_class", None)
        if isinstance(wrapped, type):
            classes += wrapped.__mro__
        for cls in classes:
            module = sys.modules.get(cls.__module__)
            source = getattr(module, "__file__", None)
            if isinstance(source, str):
                files.add(Path(source).resolve())
    return files


def code_fingerprint(pm: PassManager) -> str:
    """A hash of the source of passflow and of every pass class in `pm`."""
    hasher = hashlib.sha256()
    for path in sorted(_source_files(pm)):
        hasher.update(str(path).encode())
        try:
            hasher.update(hashlib.sha256(path.read_bytes()).digest())
        except OSError:
            hasher.update(b"unreadable")
    return hasher.hexdigest()


def run_key(pm: PassManager, name: str, shell: PieceText, salt: str) -> str:
    """What every piece's key of this run shares."""
    return _digest(
        json.dumps(
            [
                CACHE_FORMAT,
                str(xdsl.__version__),
                code_fingerprint(pm),
                str(pm),
                pm.verify_each,
                pm.emit_pass_error_on_failure,
                name,
                shell.text,
                shell.first_line,
                salt,
            ]
        )
    )


def piece_keys(run: str, slices: SourceSlices) -> list[str]:
    """Each piece's key: the run's, its own text and position, and those of
    the pieces it references, transitively."""
    count = len(slices.pieces)
    own = [
        _digest(str(slices.line_of[i]), slices.piece_text(i).text) for i in range(count)
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
        keys.append(_digest(run, own[index], *sorted(own[i] for i in seen)))
    return keys
