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
from passflow.builder.kinds import (
    Anchor,
    PassKind,
    anchor_code,
    anchor_noun,
    anchor_text,
    is_anchor,
)
from passflow.builder.nesting import can_hold, home_hint, homes
from passflow.builder.plan import make_plan, nested_text, pass_label
from passflow.builder.tree import Tree

__all__ = [
    "Occurrence",
    "Site",
    "boundary",
    "find_sites",
    "matching_in",
    "misfit",
    "misplaced",
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
            elif isinstance(entry, NestedEntry):
                walk(entry.level, here)

    walk(scope, ())
    return found


def matching_in(tree: Tree, anchor: Anchor, scope: Level) -> list[PassEntry]:
    """The passes in `scope` (nested levels included) matching `anchor`, in run order."""
    found = tree.matching(anchor)
    if scope is tree.root:
        return found
    return [entry for entry in found if any(lv is scope for lv, _ in tree.path(entry))]


def site_of(tree: Tree, entry: PassEntry, scope: Level) -> Site:
    """The site of `entry`, its steps starting at `scope`."""
    steps = tree.path(entry)
    start = next(i for i, (level, _) in enumerate(steps) if level is scope)
    bundle = entry.home if isinstance(entry.home, BundleEntry) else None
    return Site(entry, bundle, steps[start:])


def select(
    what: str,
    anchor: Anchor,
    occurrence: Occurrence | None,
    scope: Level,
    tree: Tree,
) -> list[Site]:
    """The sites in `scope` an operation is about, or an error saying what exists.

    `occurrence=None` asks for exactly one match. Matches come from the tree's
    anchor index, so selecting the first or last costs no walk of the pipeline.
    """
    if not is_anchor(anchor):
        raise BuilderError(
            f"{what}: the anchor {anchor!r} is not a pass argument, a PassKind, a "
            'pass class or an InBundle; fix: anchor on e.g. "cse", PassKind.LOWERING, '
            'CSE or InBundle("cleanup")'
        )
    if isinstance(anchor, str) and not isinstance(anchor, PassKind):
        _check_plain(what, anchor)
    entries = matching_in(tree, anchor, scope)
    where = f"the '{scope.anchor}' pipeline (nested pipelines included)"
    if not entries:
        error = _not_found(what, anchor, find_sites(scope), where)
        _add_notes(error, what, anchor, tree, scope)
        raise error

    def listing() -> str:
        numbers = {id(slot.entry): slot.number for slot in make_plan(tree.root).slots}
        found = [site_of(tree, entry, scope) for entry in entries]
        return "; ".join(
            f"{i}: #{numbers[id(s.entry)]} {s.describe()}"
            if id(s.entry) in numbers
            else f"{i}: {s.describe()}, collapsed at build"
            for i, s in enumerate(found)
        )

    if occurrence == "every":
        return [site_of(tree, entry, scope) for entry in entries]
    if occurrence is None:
        if len(entries) > 1:
            raise AmbiguousAnchorError(
                f"{what}: {len(entries)} passes match {anchor_code(anchor)}: "
                f"{listing()}\n  fix: pass occurrence=<index> to pick one "
                '(negative counts from the end), or occurrence="every"'
            )
        return [site_of(tree, entries[0], scope)]
    index = cast(object, occurrence)  # callers may be untyped
    if isinstance(index, bool) or not isinstance(index, int):
        raise BuilderError(
            f"{what}: occurrence={occurrence!r} is neither an index nor "
            '"every"; fix: pass 0 for the first match, -1 for the last, or "every"'
        )
    if not -len(entries) <= occurrence < len(entries):
        sites = find_sites(scope)
        raise AnchorNotFoundError(
            f"{what}: occurrence {occurrence} of {anchor_code(anchor)} was asked "
            f"for, but {where} has {len(entries)}: {listing()}\n  fix: use an "
            f'occurrence in range({-len(entries)}, {len(entries)}), or "every"',
            anchor=anchor_text(anchor),
            arguments=_arguments(sites),
            kinds=_kinds(sites),
        )
    return [site_of(tree, entries[occurrence], scope)]


def _check_plain(what: str, anchor: str) -> None:
    """Refuse an argument anchor that cannot name a pass: with options, or a
    nested pipeline."""
    if "{" in anchor:
        bare = anchor.split("{", 1)[0].strip()
        raise BuilderError(
            f"{what}: an anchor names a pass by its argument, without options; fix: "
            f'drop the options, "{bare}"'
        )
    if "(" in anchor:
        inner = anchor.split("(", 1)[1].rstrip(") ").split(",")[0].strip()
        raise BuilderError(
            f"{what}: an anchor names one pass, not a nested pipeline; fix: anchor "
            f'on the pass inside, "{inner}"'
        )


def _add_notes(
    error: AnchorNotFoundError, what: str, anchor: Anchor, tree: Tree, scope: Level
) -> None:
    """Notes for the likely mistakes behind a missing anchor: a bundle's name, a
    nested pipeline's op, a pass outside a nested builder's own pipeline."""
    notes: list[str] = []
    if isinstance(anchor, str) and not isinstance(anchor, PassKind):
        sites = find_sites(scope)
        if any(s.bundle is not None and s.bundle.name == anchor for s in sites):
            notes.append(
                f"note: '{anchor}' is the name of a bundle here; a plain string "
                "matches pass arguments, so anchor on its passes with "
                f'InBundle("{anchor}")'
            )
        inside = [
            s.entry.pass_.argument
            for s in sites
            if any(level.anchor == anchor for level, _ in s.steps[1:])
        ]
        if inside:
            notes.append(
                f"note: '{anchor}' is a nested pipeline here, not a pass; anchor on a "
                f"pass inside it ({', '.join(dict.fromkeys(inside))}), or add to it "
                f'with the builder nest("{anchor}") returned'
            )
    if scope is not tree.root and tree.matching(anchor):
        notes.append(
            f"note: '{anchor_text(anchor)}' is in the enclosing builder, the "
            f"'{tree.root.anchor}' pipeline; call {what.split('(')[0]} on it: this "
            f"nested builder searches its own '{scope.anchor}' pipeline only"
        )
    if notes:
        first, rest = str(error).split("\n", 1)
        error.args = ("\n".join([first, *(f"  {n}" for n in notes), rest]),)


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
    elif isinstance(anchor, str):
        if anchor in kinds:
            lines.append(
                f"  note: '{anchor}' is a kind here; a plain string matches pass "
                f"arguments only, so anchor on {PassKind(anchor)!r}"
            )
        close = get_close_matches(anchor, arguments, n=1)
    else:
        close = []
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
        "\n".join(lines), anchor=anchor_text(anchor), arguments=arguments, kinds=kinds
    )


def _arguments(sites: list[Site]) -> tuple[str, ...]:
    return tuple(sorted({s.entry.pass_.argument for s in sites} - {""}))


def _kinds(sites: list[Site]) -> tuple[str, ...]:
    return tuple(sorted({kind for s in sites for kind in s.entry.kinds}))


def placement(
    what: str, site: Site, units: list[Entry], enclosing: tuple[str, ...]
) -> int:
    """The step of `site` whose level is the innermost around it that can run `units`.

    `enclosing` are the anchors of the levels around the searched one. When the
    level is not the site's own, `boundary` splits the nested pipelines between
    them, so that the units still go exactly next to the site.
    """
    paths: list[tuple[str, ...]] = []
    path = enclosing
    for level, _ in site.steps:
        path = (*path, level.anchor)
        paths.append(path)
    op: str | None = None
    for depth in range(len(site.steps) - 1, -1, -1):
        op = misfit(units, site.steps[depth][0].anchor, paths[depth])
        if op is None:
            return depth
    assert op is not None
    searched = site.steps[0][0].anchor
    if op in paths[0]:
        raise BuilderError(
            f"{what}: the new passes run on '{op}' ops, which enclose the "
            f"'{searched}' pipeline searched, so they would never run there; fix: "
            f"call {what.split('(')[0]} on the builder of the '{op}' pipeline"
        )
    raise BuilderError(
        f"{what}: it runs on '{op}' ops, which are only ever directly inside "
        f"{homes(op)}, and no pipeline around '{site.display}' runs on those; fix: "
        f"insert it next to a pass of a pipeline on {homes(op)} ({home_hint(op)})"
    )


def misfit(units: Sequence[Entry], anchor: str, path: tuple[str, ...]) -> str | None:
    """The op of a unit that cannot run in a pipeline on `anchor` at `path`, or None.

    A pass restricted to op X can run there if the pipeline is on X or on any op, or
    if X ops may sit directly inside `anchor` ops (`nesting.can_hold`) and X is
    none of the ops around the pipeline: then `build()` nests the pass. A module
    pass never goes inside `func.func(...)`, nor a `gpu.module` pass (a symbol,
    which sits in a symbol table, never in a function). A nested pipeline `X(...)`
    is judged like a pass restricted to X.
    """
    for unit in units:
        members = unit.members if isinstance(unit, BundleEntry) else [unit]
        for member in members:
            op = member.op_name
            if op is None or anchor in (op, "any"):
                continue
            if op in path or not can_hold(anchor, op):
                return op
    return None


def misplaced(op: str, anchor: str, path: tuple[str, ...]) -> str:
    """Why a pass on `op` ops cannot run in the pipeline on `anchor` at `path`,
    and where it could: the reason and the `fix:`, for `misfit`'s callers."""
    if op in path:
        return (
            f"it runs on '{op}' ops, which enclose this '{anchor}' pipeline, so it "
            f"would never run here; fix: add it to the builder of the '{op}' pipeline"
        )
    outer = next(
        (a for a in reversed(path[:-1]) if a in (op, "any") or can_hold(a, op)), None
    )
    where = (
        f"the builder of the enclosing '{outer}' pipeline"
        if outer is not None
        else f"a pipeline on {homes(op)} ({home_hint(op)})"
    )
    return (
        f"it runs on '{op}' ops, which are never directly inside '{anchor}' ops, so "
        f"'{anchor}({op}(...))' would never run; fix: add it to {where}"
    )


def unwrap(units: list[Entry], level: Level) -> list[Entry]:
    """`func.func(x)` placed in a func.func pipeline becomes `x`."""
    result: list[Entry] = []
    for unit in units:
        if isinstance(unit, NestedEntry) and unit.level.anchor == level.anchor != "any":
            result.extend(unit.level.entries)
        else:
            result.append(unit)
    return result


def boundary(
    tree: Tree,
    steps: tuple[tuple[Level, Entry], ...],
    *,
    after: bool,
    splits: list[str],
) -> int:
    """The index in `steps[0]`'s level right before (or after) `steps[-1]`'s entry.

    When the entry sits in nested pipelines below that level, each of them is
    split in two at the entry, so that what is inserted at the returned index runs
    exactly next to it: `func.func(a,b)` split after `a` is
    `func.func(a),func.func(b)`. The second half keeps the original level, so a
    nested builder still appends at the end of its pipeline. Each split is
    recorded in `splits` by the anchor of the pipeline split.
    """
    level, target = steps[-1]
    index = tree.position(level, target) + after
    for depth in range(len(steps) - 2, -1, -1):
        outer, nested = steps[depth]
        inner = steps[depth + 1][0]
        assert isinstance(nested, NestedEntry)
        if index == 0:
            index = tree.position(outer, nested)
        elif index == len(inner.entries):
            index = tree.position(outer, nested) + 1
        else:
            tree.split(outer, nested, index)
            splits.append(inner.anchor)
            index = tree.position(outer, nested)
    return index
