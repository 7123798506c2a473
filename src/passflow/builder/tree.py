"""The builder's entries as a tree that knows where everything is, cheaply.

Every change to the builder goes through a `Tree`, which keeps three things up to
date as it changes, so that an `add` or an `insert_*` costs what it touches and not
what the pipeline holds:

- back-pointers: each entry's `home` (its level or bundle) and each level's `owner`,
  so the passes around a position and the path from the root are found by walking
  up, not by searching;
- order keys: each pass's `key` grows in run order, so "does X run before Y" is one
  comparison. New passes get keys between their neighbours'; when no room is left,
  every pass is renumbered (rare);
- indexes: the passes of each argument, kind and bundle name, sorted by key, kept
  for every pass as it is placed (each pass is in one list per argument, kind and
  bundle it has), so any such anchor, however many distinct ones are searched, is
  a dictionary lookup and its first and last match a bisection. A class anchor
  (which matches subclasses) gets its list the first time it is searched, by one
  walk, and is kept up to date from then on.

Changes are made inside transactions, which journal how to undo them: an
insertion by where it went and how many entries (undone by deleting them), any
other change by a copy of the list taken the first time the transaction changes
it in place. `rollback` undoes them in reverse order. That is how every call stays
all-or-nothing without copying the pipeline, or even the list it inserts into.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from typing import Any

from passflow.builder.catalog import KindTags, kinds_generation
from passflow.builder.entries import (
    BundleEntry,
    Entry,
    Level,
    NestedEntry,
    PassEntry,
    PointEntry,
    pass_entries,
)
from passflow.builder.kinds import Anchor, InBundle, PassKind, anchor_key
from passflow.xdsl_passes import XDSLPass

__all__ = ["Tree"]

_STEP = 1.0
_MIN_GAP = 1e-9
"""The narrowest gap between two keys. Keys grow by one step per pass appended;
up to 10**6 a double still has at least 8 ulps per gap, so midpoints stay apart.
Random insertions halve a gap about 30 times before a spot is re-keyed."""


class _Ordered:
    """The passes matching one anchor, sorted by key."""

    def __init__(self, anchor: Anchor) -> None:
        self.anchor = anchor
        self.keys: list[float] = []
        self.entries: list[PassEntry] = []

    def add(self, entry: PassEntry) -> None:
        index = bisect_right(self.keys, entry.key)
        self.keys.insert(index, entry.key)
        self.entries.insert(index, entry)

    def discard(self, entry: PassEntry) -> None:
        index = bisect_left(self.keys, entry.key)
        while index < len(self.entries) and self.entries[index] is not entry:
            index += 1
        if index < len(self.entries):
            del self.keys[index]
            del self.entries[index]

    def first_other(self, entry: PassEntry) -> PassEntry | None:
        """The first match that is not `entry`."""
        for candidate in self.entries[:2]:
            if candidate is not entry:
                return candidate
        return None

    def last_other(self, entry: PassEntry) -> PassEntry | None:
        """The last match that is not `entry`."""
        for candidate in reversed(self.entries[-2:]):
            if candidate is not entry:
                return candidate
        return None


class _Journal:
    """How to undo one transaction: in reverse order, each record either puts a
    list back as it was (`saved`) or deletes `count` entries inserted at
    `index`. Lists copied already are in `touched`."""

    def __init__(self) -> None:
        self.undo: list[tuple[list[Any], list[Any] | None, int, int]] = []
        self.touched: set[int] = set()


class Tree:
    """The root level with back-pointers, order keys, anchor indexes and undo."""

    def __init__(self, root: Level) -> None:
        self.root = root
        self._indexes: dict[object, _Ordered] = {}
        """Every argument's, kind's and bundle's passes (by `anchor_key`)."""
        self._class_indexes: dict[object, _Ordered] = {}
        """The passes of each class searched so far (subclasses included)."""
        self._exact: dict[type, _Ordered] = {}
        """The passes of each class exactly (an xDSL pass's adapter is under its
        xDSL class too): what a class anchor's list is first made from."""
        self._indexed: dict[int, tuple[_Ordered, ...]] = {}
        """The lists each pass is in, by the pass entry's id."""
        self.scope = KindTags()
        """The kinds this builder gives passes (`PipelineBuilder.tag_kinds`)."""
        self._generation = self._kinds_generation()
        self._journals: list[_Journal] = []
        self.added: list[PassEntry] = []
        """Passes placed since the last check, for the quick check."""
        self.dirty = False
        """A change the quick check cannot judge happened since the last check."""
        self.classes: set[type] = set()
        """The class of every pass placed so far (some may be gone)."""
        self.ordering_classes: list[type] = []
        """The classes in `classes` that declare an `ordering`, in the order seen."""
        self.renumber()

    # --- transactions ----------------------------------------------------------

    def begin(self) -> None:
        self._journals.append(_Journal())

    def commit(self) -> None:
        journal = self._journals.pop()
        if self._journals:
            outer = self._journals[-1]
            outer.undo.extend(journal.undo)
            outer.touched |= journal.touched

    def rollback(self) -> None:
        """Put back every list of entries the transaction changed."""
        journal = self._journals.pop()
        if not journal.undo:
            return
        for entries, saved, index, count in reversed(journal.undo):
            if saved is not None:
                entries[:] = saved
            else:
                del entries[index : index + count]
        self.dirty = True
        self.renumber()

    def touch(self, entries: list[Any]) -> None:
        """Remember `entries` as it is now, before the transaction changes it
        in place (a removal, a replacement, a split)."""
        if self._journals:
            journal = self._journals[-1]
            if id(entries) not in journal.touched:
                journal.touched.add(id(entries))
                journal.undo.append((entries, list(entries), 0, 0))

    def _inserted(self, entries: list[Any], index: int, count: int) -> None:
        """Remember that `count` entries were put at `index` of `entries`: undone
        by deleting them, which costs what was inserted, not the list's length."""
        if self._journals:
            self._journals[-1].undo.append((entries, None, index, count))

    # --- changes ---------------------------------------------------------------

    def insert(self, level: Level, index: int, units: Sequence[Entry]) -> None:
        """Put `units` at `index` of `level`, keyed and indexed."""
        self._inserted(level.entries, index, len(units))
        before = self._pass_before(level, index)
        after = self._pass_after(level, index)
        passes = list(pass_entries(list(units)))
        for entry in passes:  # keeps the level sorted by key until `_spread`
            entry.key = before.key if before is not None else float("-inf")
            entry.scope = self.scope
        level.entries[index:index] = units
        for unit in units:
            _home(unit, level)
        if not passes:
            return
        for entry in passes:
            self._saw_class(type(entry.pass_))
        self._spread(before, passes, after)
        for entry in passes:
            self._index(entry)
        self.added.extend(passes)

    def _spread(
        self, before: PassEntry | None, passes: list[PassEntry], after: PassEntry | None
    ) -> None:
        """Key `passes`, which run between `before` and `after`.

        When the gap between them is too narrow, the neighbours on both sides are
        re-keyed too, in a window that doubles until the keys fit: the cost is the
        size of the crowded region, not of the pipeline (order maintenance).
        """
        left: list[PassEntry] = []  # neighbours before, nearest first
        right: list[PassEntry] = []  # neighbours after, nearest first
        low_pass, high_pass = before, after  # the passes just outside the window
        width = 0
        while True:
            while len(left) < width and low_pass is not None:
                left.append(low_pass)
                low_pass = self.pass_before(low_pass)
            while len(right) < width and high_pass is not None:
                right.append(high_pass)
                high_pass = self.pass_after(high_pass)
            run = [*reversed(left), *passes, *right]
            low = low_pass.key if low_pass is not None else 0.0
            if high_pass is not None:
                high = high_pass.key
            else:
                high = max([low, *(p.key for p in right)]) + _STEP * (len(run) + 1)
            gap = (high - low) / (len(run) + 1)
            if gap >= _MIN_GAP or (low_pass is None and high_pass is None):
                break
            width = max(2 * width, 8)
        moved = [*left, *right]
        for entry in moved:
            self._unindex(entry)
        for i, entry in enumerate(run, 1):
            entry.key = low + gap * i
        for entry in moved:
            self._index(entry)

    def changed(self) -> None:
        """After a change made in place (remove, replace): renumber and reindex."""
        self.dirty = True
        self.renumber()

    def split(self, level: Level, nested: NestedEntry, inner: int) -> None:
        """Split `nested` (in `level`) before its entry `inner`: the first half moves
        to a new nested entry placed before it, the second keeps the level."""
        moved = nested.level.entries[:inner]
        self.touch(nested.level.entries)
        del nested.level.entries[:inner]
        first = NestedEntry(Level(nested.level.anchor, moved), nested.origin)
        for entry in moved:
            _home(entry, first.level)
        self.touch(level.entries)
        level.entries.insert(self.position(level, nested), first)
        first.home = level

    def _kinds_generation(self) -> tuple[int, int]:
        return kinds_generation(), self.scope.generation

    def renumber(self) -> None:
        """Give every pass a fresh key in run order, and rebuild the indexes."""
        _home_all(self.root)
        self._indexes.clear()
        self._exact.clear()
        self._indexed.clear()
        anchors = [ordered.anchor for ordered in self._class_indexes.values()]
        self._class_indexes.clear()
        self._generation = self._kinds_generation()
        key = 0.0
        for entry in pass_entries(self.root.entries):
            key += _STEP
            entry.key = key
            entry.scope = self.scope
            self._saw_class(type(entry.pass_))
            self._index(entry)  # in run order: each list stays sorted
        for anchor in anchors:
            self.matching(anchor)

    # --- queries ---------------------------------------------------------------

    def matching(self, anchor: Anchor) -> list[PassEntry]:
        """The passes matching `anchor`, in run order."""
        return self.ordered(anchor).entries

    def ordered(self, anchor: Anchor) -> _Ordered:
        if self._generation != self._kinds_generation():
            self.renumber()
        key = anchor_key(anchor)
        if isinstance(anchor, str | InBundle):
            ordered = self._indexes.get(key)
            if ordered is None:  # no pass has it: an empty list that fills later
                ordered = self._indexes[key] = _Ordered(anchor)
            return ordered
        ordered = self._class_indexes.get(key)
        if ordered is None:
            ordered = self._class_indexes[key] = _Ordered(anchor)
            found = {
                id(entry): entry
                for cls in _subclasses(anchor)
                if cls in self._exact
                for entry in self._exact[cls].entries
            }
            for entry in sorted(found.values(), key=_pass_key):
                ordered.keys.append(entry.key)
                ordered.entries.append(entry)
                self._indexed[id(entry)] += (ordered,)
        return ordered

    def pass_before(self, entry: PassEntry | PointEntry) -> PassEntry | None:
        """The pass that runs right before `entry` (a pass or an extension point)."""
        home = entry.home
        if isinstance(home, BundleEntry):
            assert isinstance(entry, PassEntry)
            index = home.members.index(entry)
            if index > 0:
                return home.members[index - 1]
            assert home.home is not None
            return self._pass_before(home.home, self.position(home.home, home))
        assert home is not None
        return self._pass_before(home, self.position(home, entry))

    def pass_after(self, entry: PassEntry) -> PassEntry | None:
        """The pass that runs right after `entry`."""
        home = entry.home
        if isinstance(home, BundleEntry):
            index = home.members.index(entry)
            if index + 1 < len(home.members):
                return home.members[index + 1]
            assert home.home is not None
            return self._pass_after(home.home, self.position(home.home, home) + 1)
        assert home is not None
        return self._pass_after(home, self.position(home, entry) + 1)

    def path(self, entry: PassEntry) -> tuple[tuple[Level, Entry], ...]:
        """The entries leading from the root to `entry`, one per level."""
        home = entry.home
        step: Entry = entry
        if isinstance(home, BundleEntry):
            step, home = home, home.home
        steps: list[tuple[Level, Entry]] = []
        while home is not None:
            steps.append((home, step))
            owner = home.owner
            if owner is None:
                break
            step, home = owner, owner.home
        steps.reverse()
        return tuple(steps)

    def _pass_before(self, level: Level, index: int) -> PassEntry | None:
        """The last pass run before position `index` of `level`."""
        current = level
        while True:
            entries = current.entries
            for i in range(min(index, len(entries)) - 1, -1, -1):
                found = _last_pass(entries[i])
                if found is not None:
                    return found
            owner = current.owner
            if owner is None or owner.home is None:
                return None
            current, index = owner.home, self.position(owner.home, owner)

    def _pass_after(self, level: Level, index: int) -> PassEntry | None:
        """The first pass run at or after position `index` of `level`."""
        current = level
        while True:
            entries = current.entries
            for i in range(index, len(entries)):
                found = _first_pass(entries[i])
                if found is not None:
                    return found
            owner = current.owner
            if owner is None or owner.home is None:
                return None
            current, index = owner.home, self.position(owner.home, owner) + 1

    def position(self, level: Level, entry: Entry) -> int:
        """The index of `entry` in `level`, found by bisecting on order keys.

        Falls back to a scan when the keys cannot tell (empty nested pipelines
        have none), so it is always right and usually logarithmic.
        """
        first = _first_pass(entry)
        if first is not None:
            # bisect_left by hand: a pass's key is read inline, so the probes
            # cost no call each (they are most of what placing a pass costs).
            entries, target = level.entries, first.key
            low, high = 0, len(entries)
            while low < high:
                middle = (low + high) // 2
                probe = entries[middle]
                key = probe.key if type(probe) is PassEntry else _entry_key(probe)
                if key < target:
                    low = middle + 1
                else:
                    high = middle
            if low < len(entries) and entries[low] is entry:
                return low
        return level.position(entry)

    def _saw_class(self, cls: type) -> None:
        if cls not in self.classes:
            self.classes.add(cls)
            if getattr(cls, "ordering", ()):
                self.ordering_classes.append(cls)

    def _unindex(self, entry: PassEntry) -> None:
        for ordered in self._indexed.pop(id(entry), ()):
            ordered.discard(entry)

    def _index(self, entry: PassEntry) -> None:
        """Put `entry` in the list of its argument, each of its kinds, its bundle
        and each class anchor it matches: what it costs is what it has, not how
        many anchors were searched."""
        lists: list[_Ordered] = []
        argument = entry.pass_.argument
        if argument:
            lists.append(self._list(str(argument)))
        lists.extend(self._list(PassKind(kind)) for kind in entry.kinds)
        home = entry.home
        if isinstance(home, BundleEntry):
            lists.append(self._list(InBundle(home.name)))
        for cls in _classes_of(entry):
            exact = self._exact.get(cls)
            if exact is None:
                exact = self._exact[cls] = _Ordered(cls)
            lists.append(exact)
            lists.extend(
                self._class_indexes[c] for c in cls.__mro__ if c in self._class_indexes
            )
        for ordered in lists:
            ordered.add(entry)
        self._indexed[id(entry)] = tuple(lists)

    def _list(self, anchor: str | InBundle) -> _Ordered:
        key = anchor_key(anchor)
        ordered = self._indexes.get(key)
        if ordered is None:
            ordered = self._indexes[key] = _Ordered(anchor)
        return ordered


def _classes_of(entry: PassEntry) -> tuple[type, ...]:
    """The classes a class anchor finds `entry` by: its pass's, and for an xDSL
    pass's adapter the xDSL pass class too."""
    pass_ = entry.pass_
    if isinstance(pass_, XDSLPass):
        return (type(pass_), pass_.xdsl_class)
    return (type(pass_),)


def _subclasses(cls: type) -> Iterator[type]:
    """`cls` and every class derived from it, once each."""
    seen: set[type] = set()
    todo = [cls]
    while todo:
        current = todo.pop()
        if current not in seen:
            seen.add(current)
            yield current
            todo.extend(current.__subclasses__())


def _pass_key(entry: PassEntry) -> float:
    return entry.key


def _entry_key(entry: Entry) -> float:
    if isinstance(entry, PassEntry):  # the common case, on the hot path of position
        return entry.key
    first = _first_pass(entry)
    return first.key if first is not None else float("-inf")


def _last_pass(entry: Entry) -> PassEntry | None:
    if isinstance(entry, PassEntry):
        return entry
    if isinstance(entry, BundleEntry):
        return entry.members[-1] if entry.members else None
    if isinstance(entry, PointEntry):
        return None
    for inner in reversed(entry.level.entries):
        found = _last_pass(inner)
        if found is not None:
            return found
    return None


def _first_pass(entry: Entry) -> PassEntry | None:
    if isinstance(entry, PassEntry):
        return entry
    if isinstance(entry, BundleEntry):
        return entry.members[0] if entry.members else None
    if isinstance(entry, PointEntry):
        return None
    for inner in entry.level.entries:
        found = _first_pass(inner)
        if found is not None:
            return found
    return None


def _home(entry: Entry, level: Level) -> None:
    """Point `entry` (and everything inside it) at where it now lives."""
    entry.home = level
    if isinstance(entry, BundleEntry):
        for member in entry.members:
            member.home = entry
    elif isinstance(entry, NestedEntry):
        entry.level.owner = entry
        for inner in entry.level.entries:
            _home(inner, entry.level)


def _home_all(root: Level) -> None:
    root.owner = None
    for entry in root.entries:
        _home(entry, root)
