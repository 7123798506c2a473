"""Whether a file or directory is the user's own: the one check behind every
place passflow keeps something another local user must not write (the result
cache's directory and database, `passflow-opt-server`'s socket directory).

Someone who can write where passflow reads its state back can choose what it
prints; someone who can read there sees the user's IR. So such a place must be
owned by the user running passflow and grant group and others nothing that
matters; anything else is refused before use (SECURITY.md).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["GROUP_OR_OTHERS", "GROUP_OR_OTHERS_WRITE", "not_owner_only"]

GROUP_OR_OTHERS = 0o077
"""Any permission for group or others: what a socket directory may not grant."""

GROUP_OR_OTHERS_WRITE = 0o022
"""Write permission for group or others: what a cache directory may not grant
(reading a directory of 0600 files gives nothing away)."""


def not_owner_only(
    path: Path, forbidden: int = GROUP_OR_OTHERS, *, follow: bool = True
) -> str | None:
    """None if `path` is owned by this process's user and its mode grants
    none of the bits `forbidden`; else why not (`owner uid 1001, mode
    0777`). Without `follow`, a symbolic link is refused rather than
    followed. `OSError` if `path` cannot be examined."""
    status = os.stat(path) if follow else os.lstat(path)
    mode = stat.S_IMODE(status.st_mode)
    if not follow and stat.S_ISLNK(status.st_mode):
        return "a symbolic link"
    if status.st_uid != os.getuid() or mode & forbidden:
        return f"owner uid {status.st_uid}, mode {mode:04o}"
    return None
