"""Finding anchors and placing new entries next to them.

A search walks a level and its nested levels in run order and returns `Site`s. A
site is a matching pass together with the entries that lead to it, one per level,
so that a new entry can be placed next to the pass itself or next to the nested
pipeline that contains it. Which of those it is depends on the ops the new passes
are restricted to (see `misfit`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Literal, TypeAlias, cast

from passflow.builder.entries import BundleEntry, Entry, Level, NestedEntry, PassEntry
from passflow.builder.errors import (
    AmbiguousAnchorError,
    AnchorNotFoundError,
    BuilderError,
)
from passflow.builder.kinds import Anchor, PassKind, anchor_code, anchor_noun, matches
from passflow.builder.plan import make_plan, nested_text, pass_label

__all__ = [
    "Occurrence",
    "Site",
    "find_sites",
    "misfit",
    "placement",
    "select",
    "unwrap",
]

Occurrence: TypeAlias = "int | Literal['every']"
"""Which matching pass an operation is about.

This follows Python's indexing: 0 is the first match, -1 the last, and `"every"` is
all of them (GCC's instance 0). Passes are counted in the order they run, and each
pass of a bundle counts on its own.
"""


@dataclass(frozen=True, eq=False)
class Site:
    """A pass found by a search: the entries that lead to it, one per level."""

    entry: PassEntry
    bundle: BundleEntry | None
    steps: tuple[tuple[Level, Entry], ...]

    @property
    def display(self) -> str:
        path = tuple(level.anchor for level, _ in self.steps[1:])
        return nested_text(path, pass_label(self.entry.pass_))

    def describe(self) -> str:
        bundle = "" if self.bundle is None else f", in bundle '{self.bundle.name}'"
        return f"'{self.display}' (placed by {self.entry.origin}{bundle})"


def find_sites(scope: Level) -> list[Site]:
    """Every pass in `scope` and the levels nested in it, in run order."""
    found: list[Site] = []

    def walk(level: Level, steps: tuple[tuple[Level, Entry], ...]) -> None:
        for entry in level.entries:
            here = (*steps, (level, entry))
            if isinstance(entry, PassEntry):
                found.append(Site(entry, None, here))
            elif isinstance(entry, BundleEntry):
                found.extend(Site(m, entry, here) for m in entry.members)
            else:
                walk(entry.level, here)

    walk(scope, ())
    return found


def select(
    what: str,
    anchor: Anchor,
    occurrence: Occurrence | None,
    scope: Level,
    root: Level,
) -> list[Site]:
    """The sites in `scope` an operation is about, or an error saying what exists.

    `occurrence=None` asks for exactly one match. `root` is only used to number the
    matches as the built pipeline will, so that the listing in an error matches
    `explain()`.
    """
    sites = find_sites(scope)
    found = [s for s in sites if matches(anchor, s.entry.pass_, s.entry.kinds)]
    where = f"the '{scope.anchor}' pipeline (nested pipelines included)"
    if not found:
        raise _not_found(what, anchor, sites, where)

    def listing() -> str:
        numbers = {id(slot.entry): slot.number for slot in make_plan(root).slots}
        return "; ".join(
            f"{i}: #{numbers[id(s.entry)]} {s.describe()}"
            if id(s.entry) in numbers
            else f"{i}: {s.describe()}, collapsed at build"
            for i, s in enumerate(found)
        )

    if occurrence == "every":
        return found
    if occurrence is None:
        if len(found) > 1:
            raise AmbiguousAnchorError(
                f"{what}: {len(found)} passes match {anchor_code(anchor)}: "
                f"{listing()}\n  fix: pass occurrence=<index> to pick one "
                '(negative counts from the end), or occurrence="every"'
            )
        return found
    index = cast(object, occurrence)  # callers may be untyped
    if isinstance(index, bool) or not isinstance(index, int):
        raise BuilderError(
            f"{what}: occurrence={occurrence!r} is neither an index nor "
            '"every"; fix: pass 0 for the first match, -1 for the last, or "every"'
        )
    if not -len(found) <= occurrence < len(found):
        raise AnchorNotFoundError(
            f"{what}: occurrence {occurrence} of {anchor_code(anchor)} was asked "
            f"for, but {where} has {len(found)}: {listing()}\n  fix: use an "
            f'occurrence in range({-len(found)}, {len(found)}), or "every"',
            anchor=str(anchor),
            arguments=_arguments(sites),
            kinds=_kinds(sites),
        )
    return [found[occurrence]]


def _not_found(
    what: str, anchor: Anchor, sites: list[Site], where: str
) -> AnchorNotFoundError:
    arguments, kinds = _arguments(sites), _kinds(sites)
    lines = [f"{what}: no {anchor_noun(anchor)} in {where}"]
    if isinstance(anchor, PassKind):
        if anchor in arguments:
            lines.append(
                f"  note: '{anchor}' is a pass argument here; a PassKind matches "
                f'declared kinds only, so anchor on the string "{anchor}"'
            )
        close = get_close_matches(anchor, kinds, n=1)
    else:
        if anchor in kinds:
            lines.append(
                f"  note: '{anchor}' is a kind here; a plain string matches pass "
                f"arguments only, so anchor on {PassKind(anchor)!r}"
            )
        close = get_close_matches(anchor, arguments, n=1)
    if close and close[0] != anchor:
        lines.append(f"  note: did you mean '{close[0]}'?")
    by_kind = {
        kind: sorted(
            {
                s.entry.pass_.argument or s.display
                for s in sites
                if kind in s.entry.kinds
            }
        )
        for kind in kinds
    }
    described = "; ".join(f"{k} ({', '.join(v)})" for k, v in by_kind.items())
    lines.append(f"  passes present: {', '.join(arguments) or '(none)'}")
    lines.append(f"  kinds present: {described or '(none)'}")
    lines.append(
        "  fix: anchor on one of these, or catch AnchorNotFoundError to fall "
        f"back when a pipeline has no {anchor_noun(anchor)}"
    )
    return AnchorNotFoundError(
        "\n".join(lines), anchor=str(anchor), arguments=arguments, kinds=kinds
    )


def _arguments(sites: list[Site]) -> tuple[str, ...]:
    return tuple(sorted({s.entry.pass_.argument for s in sites} - {""}))


def _kinds(sites: list[Site]) -> tuple[str, ...]:
    return tuple(sorted({kind for s in sites for kind in s.entry.kinds}))


def placement(
    what: str, site: Site, units: list[Entry], enclosing: tuple[str, ...]
) -> tuple[Level, Entry]:
    """The innermost level around `site` that can run `units`, and the entry there.

    `enclosing` are the anchors of the levels around the searched one.
    """
    candidates: list[tuple[Level, Entry, tuple[str, ...]]] = []
    path = enclosing
    for level, entry in site.steps:
        path = (*path, level.anchor)
        candidates.append((level, entry, path))
    op: str | None = None
    for level, entry, path in reversed(candidates):
        op = misfit(units, level.anchor, path)
        if op is None:
            return level, entry
    searched = site.steps[0][0].anchor
    raise BuilderError(
        f"{what}: the new passes run on '{op}' ops, which enclose the '{searched}' "
        "pipeline searched, so they would never run there; fix: call "
        f"{what.split('(')[0]} on the builder of the '{op}' pipeline"
    )


def misfit(units: Sequence[Entry], anchor: str, path: tuple[str, ...]) -> str | None:
    """The op of a unit that cannot run in a pipeline on `anchor` at `path`, or None.

    A pass restricted to op X can run there if the pipeline is on X or on any op, or
    if X is none of the ops around the pipeline: then X ops may be nested inside, and
    `build()` nests the pass. A module pass never goes inside `func.func(...)`. A
    nested pipeline `X(...)` is judged like a pass restricted to X.
    """
    for unit in units:
        members = unit.members if isinstance(unit, BundleEntry) else [unit]
        for member in members:
            op = member.op_name
            if op is not None and anchor not in (op, "any") and op in path:
                return op
    return None


def unwrap(units: list[Entry], level: Level) -> list[Entry]:
    """`func.func(x)` placed in a func.func pipeline becomes `x`."""
    result: list[Entry] = []
    for unit in units:
        if isinstance(unit, NestedEntry) and unit.level.anchor == level.anchor != "any":
            result.extend(unit.level.entries)
        else:
            result.append(unit)
    return result
