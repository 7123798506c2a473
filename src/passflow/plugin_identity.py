"""What tells one plugin from another: the one rule the registry (which
records each plugin it loaded), passflow-opt's cached pass listing (one per
set of command-line plugins) and the result cache (which keys a run on its
plugins' code) share.

A `.py` file is its absolute path, so the same `plugin.py` in two directories
is two plugins and one file named two ways is one; a module (or a
`module:function`) is its spec as written.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["plugin_file", "plugin_key"]


def plugin_key(spec: str) -> str:
    """The identity of the plugin `spec` (`--load-pass-plugin`'s value)."""
    return str(Path(spec).resolve()) if spec.endswith(".py") else spec


def plugin_file(key: str) -> Path | None:
    """The file a plugin identity names, for a file plugin; else None."""
    return Path(key) if key.endswith(".py") else None
