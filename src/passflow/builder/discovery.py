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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from passflow.builder.errors import BuilderError, ExtensionError
from passflow.registry import PluginFailure, entry_point_origin, load_entry_points

__all__ = [
    "EXTENSION_GROUP",
    "Extension",
    "discover_extensions",
    "extension_error",
    "find_extensions",
]

EXTENSION_GROUP = "passflow.builder_extensions"
"""The entry-point group that `PipelineBuilder.load_extensions` reads."""

_Builder = TypeVar("_Builder")


@dataclass(frozen=True)
class Extension(Generic[_Builder]):
    """An extension: its name (shown by `explain()`) and the function that registers
    its passes into a builder, as `register(builder)`. A discovered one also
    says where it comes from, for error messages: its `entry_point`
    (`'tpp = tpp_passes.builder:register' in group '...'`) and `distribution`.

    The builder's type is a parameter: `Extension("tpp", register_tpp)` is an
    `Extension[PipelineBuilder]`, what `load_extensions` takes, and a discovered
    one, whose function no annotation vouches for, an `Extension[Any]`. This
    module sits below `pipeline`, which runs extensions, so it names no builder.
    """

    name: str
    register: Callable[[_Builder], None]
    entry_point: str | None = None
    distribution: str | None = None

    def failure(self, error: BaseException) -> PluginFailure:
        """This extension, failed with `error`."""
        return PluginFailure(self.name, self.entry_point, self.distribution, error)


def find_extensions(
    group: str,
) -> tuple[list[Extension[Any]], list[PluginFailure]]:
    """The extensions declared under `group`, and the ones that failed to load:
    a module that is missing or raises on import, or an entry point that is not
    a function. One broken package never hides the others."""
    loaded, failures = load_entry_points(group)
    found: list[Extension[Any]] = []
    for entry, register in loaded:
        if not callable(register):
            failures.append(
                PluginFailure.of(
                    entry,
                    BuilderError(
                        f"it is {_article(type(register).__name__)}, not a function; "
                        "fix: point it at a function that takes the PipelineBuilder"
                    ),
                )
            )
            continue
        found.append(
            Extension(entry.name, register, *entry_point_origin(entry))  # pyright: ignore[reportArgumentType]
        )
    found.sort(key=lambda extension: extension.name)
    return found, failures


def discover_extensions(group: str = EXTENSION_GROUP) -> tuple[Extension[Any], ...]:
    """Every extension declared under the entry-point group `group`, by name.

    Loading an entry point imports its module. A module that is missing or
    fails, or an entry point that is not a function, is an `ExtensionError`
    naming each such extension, its entry point and distribution, and the error.
    """
    found, failures = find_extensions(group)
    if failures:
        count = len(found) + len(failures)
        raise extension_error("discover_extensions()", failures, count, None)
    return tuple(found)


def extension_error(
    what: str,
    failures: Sequence[PluginFailure],
    count: int,
    ran: tuple[str, ...] | None,
) -> ExtensionError:
    """One error listing every failed extension of the `count` tried, and the
    ones that ran (None when none was run: they were only being discovered)."""
    noun = f"extension{'s' * (count != 1)}"
    done = ""
    if ran is not None:
        others = f"; the others ran ({', '.join(ran)})" if ran else ""
        done = f", each undone alone{others}"
    listed = "\n".join(f"- extension {failure}" for failure in failures)
    error = ExtensionError(
        f"{what}: {len(failures)} of {count} {noun} failed{done}:\n{listed}\n"
        "  fix: fix, reinstall or uninstall the packages named; to go on without "
        "them, catch ExtensionError (the builder keeps what the others did)",
        tuple(failures),
        ran or (),
    )
    error.__cause__ = failures[0].error
    return error


def _article(noun: str) -> str:
    return f"an {noun}" if noun[0] in "aeiou" else f"a {noun}"
