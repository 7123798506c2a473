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

from passflow.builder.entries import BundleEntry, Level, PassEntry
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
    stands_for: list[BundleEntry] = field(default_factory=lambda: list[BundleEntry]())

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
    notes = [
        f"collapsed bundle '{dropped.name}' (placed by {dropped.origin}) into the "
        f"identical bundle at #{kept[0].number}-#{kept[-1].number} (placed by "
        f"{kept[0].entry.origin}): nothing runs between them"
        for kept, dropped in tidier.collapsed
    ]
    notes.extend(
        f"dropped an empty '{anchor}' pipeline: it has nothing to run"
        for anchor in tidier.dropped
    )
    return Plan(root.anchor, items, slots, notes)


def _lower(level: Level) -> list[Slot | Nest]:
    items: list[Slot | Nest] = []
    for entry in level.entries:
        if isinstance(entry, PassEntry):
            items.append(_wrap(level.anchor, Slot(entry, None)))
        elif isinstance(entry, BundleEntry):
            items.extend(_wrap(level.anchor, Slot(m, entry)) for m in entry.members)
        else:
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

    collapsed: list[tuple[list[Slot], BundleEntry]] = field(
        default_factory=lambda: list[tuple[list[Slot], BundleEntry]]()
    )
    dropped: list[str] = field(default_factory=lambda: list[str]())

    def tidy(self, items: list[Slot | Nest]) -> list[Slot | Nest]:
        result: list[Slot | Nest] = []
        for item in items:
            if isinstance(item, Nest):
                item.items = self.tidy(item.items)
                if not item.items:
                    self.dropped.append(item.anchor)
                    continue
                previous = result[-1] if result else None
                if (
                    isinstance(previous, Nest)
                    and previous.anchor == item.anchor != "any"
                ):
                    previous.items = self.tidy(previous.items + item.items)
                    continue
            result.append(item)
        return self._collapse(result)

    def _collapse(self, items: list[Slot | Nest]) -> list[Slot | Nest]:
        result: list[Slot | Nest] = []
        kept: list[Slot] | None = None  # a whole cleanup bundle ending `result`
        index = 0
        while index < len(items):
            item = items[index]
            if not isinstance(item, Slot) or item.bundle is None:
                result.append(item)
                kept = None
                index += 1
                continue
            bundle = item.bundle
            run: list[Slot] = []
            for other in items[index:]:
                if not isinstance(other, Slot) or other.bundle is not bundle:
                    break
                run.append(other)
            index += len(run)
            whole = len(run) == len(bundle.members) and _is_cleanup(bundle)
            if (
                whole
                and kept is not None
                and kept[0].bundle is not None
                and kept[0].bundle.signature() == bundle.signature()
            ):
                kept[0].stands_for.append(bundle)
                self.collapsed.append((kept, bundle))
                continue
            result.extend(run)
            kept = run if whole else None
        return result


def _is_cleanup(bundle: BundleEntry) -> bool:
    return all(PassKind.CLEANUP in member.kinds for member in bundle.members)


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
