"""The builder's data: levels of entries, each entry remembering who placed it.

A `Level` is one pipeline (the root, or a nested `func.func(...)`), holding an
ordered sequence of entries. An entry is a pass, a bundle or a nested level. Entries
are compared by identity and never by index, so an insertion somewhere cannot make
another caller's position stale. That is the linked list of the "Pass Manager Builder" proposal; a Python list
gives it with less code, because every operation has to search for its anchor anyway.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import cast

from passflow.builder.bundles import Bundle, passes_from_text
from passflow.builder.catalog import KindTags, kinds_generation, kinds_of
from passflow.builder.errors import BuilderError
from passflow.builder.kinds import Anchor, matches
from passflow.manager import OpToOpPassAdaptor
from passflow.pass_base import Pass

__all__ = [
    "BundleEntry",
    "Entry",
    "Level",
    "NestedEntry",
    "Origin",
    "PassEntry",
    "PointEntry",
    "copy_level",
    "entries_from",
    "entry_matches",
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
    _base: tuple[int, frozenset[str]] = field(init=False, repr=False)
    """Its kinds but the builder's tags, with the `kinds_generation` they are of."""
    _kinds: tuple[tuple[int, int], frozenset[str]] = field(init=False, repr=False)
    key: float = field(init=False, default=0.0)
    """Its place in run order: larger runs later (kept by `tree.Tree`)."""
    home: Level | BundleEntry | None = field(init=False, default=None, repr=False)
    """The level or bundle holding it (kept by `tree.Tree`)."""
    scope: KindTags | None = field(init=False, default=None, repr=False)
    """The tags of the builder holding it (`PipelineBuilder.tag_kinds`)."""

    def __post_init__(self) -> None:
        kinds = kinds_of(self.pass_) | frozenset(self.tags)  # checks the class now
        self._base = (kinds_generation(), kinds)
        self._kinds = ((kinds_generation(), -1), kinds)

    @property
    def kinds(self) -> frozenset[str]:
        """Its class's kinds, the kind table's, `tag_kinds` tags (everywhere and
        in its builder) and `tags`."""
        scope = self.scope
        everywhere = kinds_generation()
        generation = (everywhere, -1 if scope is None else scope.generation)
        cached, kinds = self._kinds
        if cached != generation:
            if self._base[0] != everywhere:
                self._base = (everywhere, kinds_of(self.pass_) | frozenset(self.tags))
            kinds = self._base[1]
            if scope is not None:
                kinds |= scope.kinds(self.pass_)
            self._kinds = (generation, kinds)
        return kinds

    @property
    def op_name(self) -> str | None:
        return self.pass_.op_name


@dataclass(eq=False)
class BundleEntry:
    """A bundle as placed in the pipeline: its name and its own copies of the passes."""

    name: str
    members: list[PassEntry]
    origin: Origin
    home: Level | None = field(init=False, default=None, repr=False)

    def signature(self) -> tuple[str, ...]:
        """What the bundle runs, options included; equal signatures are duplicates."""
        return tuple(str(member.pass_) for member in self.members)


@dataclass(eq=False)
class NestedEntry:
    """A nested pipeline, `anchor(...)`, that runs on the direct children named anchor."""

    level: Level
    origin: Origin
    home: Level | None = field(init=False, default=None, repr=False)

    def __post_init__(self) -> None:
        self.level.owner = self

    @property
    def op_name(self) -> str | None:
        return None if self.level.anchor == "any" else self.level.anchor


@dataclass(eq=False)
class PointEntry:
    """An extension point: a named place, possibly empty, where extensions add passes.

    It runs nothing itself. Passes added at it go right before it, so they run in
    the order they were added, and the point stays after them for the next ones.
    """

    name: str
    origin: Origin
    home: Level | None = field(init=False, default=None, repr=False)

    @property
    def op_name(self) -> str | None:
        return None


Entry = PassEntry | BundleEntry | NestedEntry | PointEntry


@dataclass(eq=False)
class Level:
    """One pipeline: its anchor op and its entries in order."""

    anchor: str
    entries: list[Entry] = field(default_factory=lambda: list[Entry]())
    owner: NestedEntry | None = field(default=None, repr=False)
    """The nested entry that holds this level; None for the root."""

    def position(self, entry: Entry) -> int:
        """The index of `entry` in this level (entries compare by identity)."""
        return self.entries.index(entry)


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
        if manager.recursive:
            raise BuilderError(
                f"the nested pipeline '{manager}' runs on ops at any depth, which the "
                "builder cannot place relative to other passes; fix: build it with "
                "OpPassManager and add the passes around it there"
            )
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
        elif isinstance(entry, NestedEntry):
            yield from pass_entries(entry.level.entries)


def entry_matches(anchor: Anchor, entry: PassEntry) -> bool:
    """Whether the anchor looks for this pass (by argument, kind, class or bundle)."""
    home = entry.home
    bundle = home.name if isinstance(home, BundleEntry) else None
    return matches(anchor, entry.pass_, entry.kinds, bundle)


def copy_level(level: Level, copies: dict[int, Entry]) -> Level:
    """A copy of `level` whose passes are clones, for a builder's `copy()`.

    `copies` receives each copied entry under the id of its original, so that
    what refers to entries (extension points, warnings already issued) can be
    carried over to the copy.
    """
    return Level(level.anchor, [_copy_entry(entry, copies) for entry in level.entries])


def _copy_entry(entry: Entry, copies: dict[int, Entry]) -> Entry:
    made: Entry
    if isinstance(entry, PassEntry):
        made = PassEntry(entry.pass_.clone(), entry.origin, entry.tags)
    elif isinstance(entry, BundleEntry):
        members = [_copy_entry(m, copies) for m in entry.members]
        made = BundleEntry(entry.name, cast(list[PassEntry], members), entry.origin)
    elif isinstance(entry, NestedEntry):
        made = NestedEntry(copy_level(entry.level, copies), entry.origin)
    else:
        made = PointEntry(entry.name, entry.origin)
    copies[id(entry)] = made
    return made
