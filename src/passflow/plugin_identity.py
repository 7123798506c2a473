"""What tells one plugin from another: the one rule the registry (which
records each plugin it loaded), passflow-opt's cached pass listing (one per
set of command-line plugins) and the result cache (which keys a run on its
plugins' code) share.

A `.py` file is its absolute path (also in `file.py:Name`, a name in a file,
as `--load-xdsl-opt-main` takes), so the same `plugin.py` in two directories
is two plugins and one file named two ways is one; a module (or a
`module:function`) is its spec as written.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["plugin_file", "plugin_key"]


def plugin_key(spec: str) -> str:
    """The identity of the plugin `spec` (`--load-pass-plugin`'s value)."""
    if spec.endswith(".py"):
        return str(Path(spec).resolve())
    path, colon, name = spec.rpartition(".py:")
    if colon and path:
        return f"{Path(path + '.py').resolve()}:{name}"
    return spec


def plugin_file(key: str) -> Path | None:
    """The file a plugin identity names, for a file plugin; else None."""
    if key.endswith(".py"):
        return Path(key)
    path, colon, _ = key.rpartition(".py:")
    return Path(path + ".py") if colon and path else None
