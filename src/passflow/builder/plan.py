"""From the builder's entries to the flat pipeline that `build()` hands to the manager.

Planning does four things, in this order:

1. Flatten bundles into their passes and nested entries into nested pipelines. A pass
   restricted to another op than its pipeline's anchor is wrapped in `op(...)`, as
   `OpPassManager.add` does with implicit nesting.
2. Merge adjacent nested pipelines on the same op, `func.func(a),func.func(b)` into
   `func.func(a,b)`. The pass manager does the same before it runs (MLIR's
   finalize), so the pipeline printed is the one that runs. Empty nested pipelines
   are dropped.
3. Collapse duplicate cleanup bundles: when two identical bundles made only of Cleanup
   passes run one right after the other in the same pipeline, the second is dropped.
   Nothing ran between them that could have left work for it.
4. Number the passes in execution order, #1 first. Messages and `explain()` use
   these numbers.

The constraint checks and `explain()` read the numbered plan, so they describe
exactly the pipeline that `build()` returns.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from passflow.builder.entries import BundleEntry, Level, NestedEntry, PassEntry
from passflow.builder.kinds import PassKind
from passflow.manager import OpPassManager
from passflow.pass_base import Pass

__all__ = ["Nest", "Plan", "Slot", "make_plan", "nested_text", "pass_label"]


@dataclass(eq=False)
class Slot:
    """One pass of the planned pipeline, with where it sits and where it came from."""

    entry: PassEntry
    bundle: BundleEntry | None
    path: tuple[str, ...] = ()
    number: int = 0
    stands_for: list[BundleEntry | PassEntry] = field(
        default_factory=lambda: list[BundleEntry | PassEntry]()
    )

    @property
    def kinds(self) -> frozenset[str]:
        return self.entry.kinds

    @property
    def display(self) -> str:
        """The pass inside its nested pipelines, options left out: `func.func(cse)`."""
        return nested_text(self.path, pass_label(self.entry.pass_))

    def describe(self) -> str:
        """`'func.func(cse)' (#4, placed by framework via add)`, for messages."""
        return f"'{self.display}' (#{self.number}, placed by {self.entry.origin})"


@dataclass(eq=False)
class Nest:
    """A nested pipeline of the plan, `anchor(items...)`."""

    anchor: str
    items: list[Slot | Nest]


@dataclass(eq=False)
class Plan:
    """The pipeline `build()` returns, in a form the checks and `explain()` can read."""

    anchor: str
    items: list[Slot | Nest]
    slots: list[Slot]
    notes: list[str]

    def emit(self, pm: OpPassManager) -> None:
        """Add copies of the planned passes to `pm`, so the builder stays reusable."""
        _emit(self.items, pm)


def pass_label(pass_: Pass) -> str:
    """A pass's argument, or `unknown<Name>` as its text says when it has none."""
    return pass_.argument or f"unknown<{pass_.name}>"


def nested_text(path: tuple[str, ...], text: str) -> str:
    """`text` wrapped in the nested pipelines of `path`: `a(b(text))`."""
    for anchor in reversed(path):
        text = f"{anchor}({text})"
    return text


def make_plan(root: Level) -> Plan:
    """Plan the pipeline of `root`, which is left unchanged."""
    tidier = _Tidier()
    items = tidier.tidy(_lower(root))
    slots: list[Slot] = []
    _number(items, (), slots)
    notes = [_collapse_note(kept, dropped) for kept, dropped in tidier.collapsed]
    notes.extend(
        f"dropped an empty '{anchor}' pipeline: it has nothing to run"
        for anchor in tidier.dropped
    )
    return Plan(root.anchor, items, slots, notes)


def _collapse_note(kept: list[Slot], dropped: BundleEntry | PassEntry) -> str:
    if isinstance(dropped, BundleEntry):
        return (
            f"collapsed bundle '{dropped.name}' (placed by {dropped.origin}) into the "
            f"identical bundle at #{kept[0].number}-#{kept[-1].number} (placed by "
            f"{kept[0].entry.origin}): nothing runs between them"
        )
    return (
        f"collapsed '{pass_label(dropped.pass_)}' (placed by {dropped.origin}) into "
        f"the identical #{kept[0].number} (placed by {kept[0].entry.origin}): only "
        "Cleanup passes run between them"
    )


def _lower(level: Level) -> list[Slot | Nest]:
    items: list[Slot | Nest] = []
    for entry in level.entries:
        if isinstance(entry, PassEntry):
            items.append(_wrap(level.anchor, Slot(entry, None)))
        elif isinstance(entry, BundleEntry):
            items.extend(_wrap(level.anchor, Slot(m, entry)) for m in entry.members)
        elif isinstance(entry, NestedEntry):
            items.append(Nest(entry.level.anchor, _lower(entry.level)))
    return items


def _wrap(anchor: str, slot: Slot) -> Slot | Nest:
    """The slot, or `op(slot)` when its pass is restricted to another op (implicit nesting)."""
    op = slot.entry.op_name
    if op is None or anchor in (op, "any"):
        return slot
    return Nest(op, [slot])


@dataclass
class _Tidier:
    """Merges, drops and collapses, recording what it collapsed and dropped."""

    collapsed: list[tuple[list[Slot], BundleEntry | PassEntry]] = field(
        default_factory=lambda: list[tuple[list[Slot], BundleEntry | PassEntry]]()
    )
    dropped: list[str] = field(default_factory=lambda: list[str]())

    def tidy(self, items: list[Slot | Nest]) -> list[Slot | Nest]:
        """Merge and drop nests, then collapse duplicate cleanups, each list once."""
        return self._collapse_all(self._merge(items))

    def _merge(self, items: list[Slot | Nest]) -> list[Slot | Nest]:
        result: list[Slot | Nest] = []
        for item in items:
            if isinstance(item, Nest):
                item.items = self._merge(item.items)
                if not item.items:
                    self.dropped.append(item.anchor)
                    continue
                previous = result[-1] if result else None
                if _same_nest(previous, item) and isinstance(previous, Nest):
                    _join(previous.items, item.items)
                    continue
            result.append(item)
        return result

    def _collapse_all(self, items: list[Slot | Nest]) -> list[Slot | Nest]:
        for item in items:
            if isinstance(item, Nest):
                item.items = self._collapse_all(item.items)
        return self._collapse(items)

    def _collapse(self, items: list[Slot | Nest]) -> list[Slot | Nest]:
        """Drop a sequence of Cleanup passes that repeats the one right before it.

        Within a run of Cleanup passes (nothing else between them), when the last
        k passes run exactly what the k before them ran (texts, options included),
        the second copy is dropped: `cleanup(),"canonicalize,cse"` runs once. It
        does not matter how they were added (bundles, text, single passes), but a
        bundle's own repeated members are kept, as the bundle asked for them.
        """
        result: list[Slot | Nest] = []
        run_start = 0
        for item in items:
            if not isinstance(item, Slot) or PassKind.CLEANUP not in item.kinds:
                result.append(item)
                run_start = len(result)
                continue
            result.append(item)
            end = len(result)
            for k in range(1, min((end - run_start) // 2, _LONGEST_REPEAT) + 1):
                first = cast(list[Slot], result[end - 2 * k : end - k])
                second = cast(list[Slot], result[end - k :])
                if _same(first, second):
                    del result[end - k :]
                    self._record(first, second)
                    break
        return result

    def _record(self, kept: list[Slot], dropped: list[Slot]) -> None:
        bundle = dropped[0].bundle
        whole = bundle is not None and [s.entry for s in dropped] == bundle.members
        kept_bundle = kept[0].bundle
        if (
            whole
            and bundle is not None
            and kept_bundle is not None
            and [s.entry for s in kept] == kept_bundle.members
        ):
            kept[0].stands_for.append(bundle)
            self.collapsed.append((kept, bundle))
            return
        for kept_slot, dropped_slot in zip(kept, dropped, strict=True):
            kept_slot.stands_for.append(dropped_slot.entry)
            self.collapsed.append(([kept_slot], dropped_slot.entry))


_LONGEST_REPEAT = 32
"""The longest sequence of Cleanup passes checked for a repeat (keeps collapsing linear)."""


def _same_nest(previous: Slot | Nest | None, item: Nest) -> bool:
    return isinstance(previous, Nest) and previous.anchor == item.anchor != "any"


def _join(into: list[Slot | Nest], more: list[Slot | Nest]) -> None:
    """Append `more` to `into`, merging the nests that meet at the junction."""
    if into and more:
        last, first = into[-1], more[0]
        if (
            isinstance(first, Nest)
            and _same_nest(last, first)
            and isinstance(last, Nest)
        ):
            _join(last.items, first.items)
            more = more[1:]
    into.extend(more)


def _same(first: list[Slot], second: list[Slot]) -> bool:
    """Whether `second` runs what `first` runs and is not the same bundle's members."""
    if any(
        b.bundle is not None and b.bundle is a.bundle for a in first for b in second
    ):
        return False
    return [str(a.entry.pass_) for a in first] == [str(b.entry.pass_) for b in second]


def _number(items: list[Slot | Nest], path: tuple[str, ...], out: list[Slot]) -> None:
    for item in items:
        if isinstance(item, Slot):
            item.path = path
            item.number = len(out) + 1
            out.append(item)
        else:
            _number(item.items, (*path, item.anchor), out)


def _emit(items: list[Slot | Nest], pm: OpPassManager) -> None:
    for item in items:
        if isinstance(item, Slot):
            pm.add(item.entry.pass_.clone())
        else:
            _emit(item.items, pm.nest(item.anchor))
