"""Registration of everything passflow ships, as mlir-opt's `registerAllPasses()`.

The registry names none of the passes it holds; the tools (and programs that
want passflow's passes by name) register them here, through the same plugin
mechanism as any package's passes (`passflow.registry.load_plugin`). Nothing is
imported but the two registration tables: each pass's module is imported when a
pipeline first names it.
"""

from __future__ import annotations

from passflow import registry

__all__ = ["BUILTIN_PLUGINS", "register_all_passes"]

BUILTIN_PLUGINS: dict[str, str] = {
    "passflow.transforms:register": "passflow's passes and pipelines",
    "passflow.testing:register": "Test passes and pipelines (MLIR's test/Pass)",
}
"""passflow's own plugins, each with the title listings group its passes under;
also declared as `passflow.passes` entry points, so that a program that does not
call `register_all_passes` finds them on its first unknown name."""


def register_all_passes() -> None:
    """Register passflow's built-in passes, its test passes and pipelines, and
    MLIR's `test` dialect (once; later calls do nothing)."""
    for spec, title in BUILTIN_PLUGINS.items():
        registry.load_plugin(spec, title)
