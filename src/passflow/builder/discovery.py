"""Extensions found at run time, through an entry-point group.

A framework should not hard-code the extensions it runs: an extension package
declares itself in its own metadata,

    [project.entry-points."passflow.builder_extensions"]
    tpp = "tpp_passes.builder:register"

and the framework calls `builder.load_extensions()`, which runs every extension so
declared (in name order, each in its own `extension()` block), the way plugin
packages reach passflow's pass registry through the `passflow.passes` group.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from passflow.builder.errors import BuilderError

if TYPE_CHECKING:
    from passflow.builder.pipeline import PipelineBuilder

__all__ = ["EXTENSION_GROUP", "Extension", "discover_extensions"]

EXTENSION_GROUP = "passflow.builder_extensions"
"""The entry-point group that `PipelineBuilder.load_extensions` reads."""


@dataclass(frozen=True)
class Extension:
    """An extension: its name (shown by `explain()`) and the function that registers
    its passes into a builder, as `register(builder)`."""

    name: str
    register: Callable[[PipelineBuilder], None]


def discover_extensions(group: str = EXTENSION_GROUP) -> tuple[Extension, ...]:
    """Every extension declared under the entry-point group `group`, by name.

    Loading an entry point imports its module; one that is not callable is a
    BuilderError naming it, so a broken package is found when it is loaded.
    """
    found: list[Extension] = []
    for entry in importlib.metadata.entry_points(group=group):
        loaded: object = entry.load()
        if not callable(loaded):
            raise BuilderError(
                f"entry point '{entry.name} = {entry.value}' in group '{group}' is "
                f"a {type(loaded).__name__}, not a function; fix: point it at a "
                "function that takes the PipelineBuilder"
            )
        found.append(Extension(entry.name, loaded))  # pyright: ignore[reportArgumentType]
    return tuple(sorted(found, key=lambda extension: extension.name))
