"""The builder's data: levels of entries, each entry remembering who placed it.

A `Level` is one pipeline (the root, or a nested `func.func(...)`), holding an
ordered sequence of entries. An entry is a pass, a bundle or a nested level. Entries
are compared by identity and never by index, so an insertion somewhere cannot make
another caller's position stale. That is the linked list of seed 003; a Python list
gives it with less code, because every operation has to search for its anchor anyway.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from passflow.builder.bundles import Bundle, passes_from_text
from passflow.builder.kinds import kinds_of
from passflow.manager import OpToOpPassAdaptor
from passflow.pass_base import Pass

__all__ = [
    "BundleEntry",
    "Entry",
    "Level",
    "NestedEntry",
    "Origin",
    "PassEntry",
    "entries_from",
    "pass_entries",
]


@dataclass(frozen=True)
class Origin:
    """Who placed an entry and with which call, e.g. `extension 'tpp' via insert_after(...)`."""

    placed_by: str
    via: str

    def __str__(self) -> str:
        return f"{self.placed_by} via {self.via}"


@dataclass(eq=False)
class PassEntry:
    """One pass. `tags` are kinds given at the call site (`add(p, kinds=...)`)."""

    pass_: Pass
    origin: Origin
    tags: tuple[str, ...] = ()
    kinds: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.kinds = kinds_of(self.pass_) | frozenset(self.tags)

    @property
    def op_name(self) -> str | None:
        return self.pass_.op_name


@dataclass(eq=False)
class BundleEntry:
    """A bundle as placed in the pipeline: its name and its own copies of the passes."""

    name: str
    members: list[PassEntry]
    origin: Origin

    def signature(self) -> tuple[str, ...]:
        """What the bundle runs, options included; equal signatures are duplicates."""
        return tuple(str(member.pass_) for member in self.members)


@dataclass(eq=False)
class NestedEntry:
    """A nested pipeline, `anchor(...)`, that runs on the direct children named anchor."""

    level: Level
    origin: Origin

    @property
    def op_name(self) -> str | None:
        return None if self.level.anchor == "any" else self.level.anchor


Entry = PassEntry | BundleEntry | NestedEntry


@dataclass(eq=False)
class Level:
    """One pipeline: its anchor op and its entries in order."""

    anchor: str
    entries: list[Entry] = field(default_factory=lambda: list[Entry]())

    def position(self, entry: Entry) -> int:
        """The index of `entry` (by identity) in this level."""
        return next(i for i, e in enumerate(self.entries) if e is entry)


def entries_from(
    item: Pass | Bundle | str, origin: Origin, tags: tuple[str, ...]
) -> list[Entry]:
    """Entries for a pass, a bundle or pipeline text (one entry per top-level element)."""
    if isinstance(item, Bundle):
        members = [PassEntry(p.clone(), origin, tags) for p in item.passes]
        return [BundleEntry(item.name, members, origin)]
    passes = passes_from_text(item) if isinstance(item, str) else [item]
    return [entry for p in passes for entry in _entries_for_pass(p, origin, tags)]


def _entries_for_pass(
    pass_: Pass, origin: Origin, tags: tuple[str, ...]
) -> list[Entry]:
    if not isinstance(pass_, OpToOpPassAdaptor):
        return [PassEntry(pass_, origin, tags)]
    nested: list[Entry] = []
    for manager in pass_.managers:
        level = Level(manager.anchor)
        for inner in manager.passes:
            level.entries.extend(_entries_for_pass(inner, origin, tags))
        nested.append(NestedEntry(level, origin))
    return nested


def pass_entries(entries: list[Entry]) -> Iterator[PassEntry]:
    """Every pass entry in `entries`, bundle members and nested levels included."""
    for entry in entries:
        if isinstance(entry, PassEntry):
            yield entry
        elif isinstance(entry, BundleEntry):
            yield from entry.members
        else:
            yield from pass_entries(entry.level.entries)
