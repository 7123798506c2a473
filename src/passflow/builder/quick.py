"""The quick check: do the passes placed since the last check break anything?

After a clean check, a call that only places passes (`add`, `insert_before`,
`insert_after`, `nest`) can break a constraint in three ways only:

- a new pass's own constraint fails (its declared `ordering`, or a rule whose
  subject it matches);
- a new pass matches the anchor of an existing pass's `AfterLast` (and runs after
  it) or `BeforeFirst` (and runs before it); `Requires` cannot break by adding;
- a new pass now runs right before an existing pass with `PrecededByCleanup`.

Each is answered with the tree's order keys and anchor indexes, so the quick check
costs what was placed, not what the pipeline holds. A contradiction needs a broken
constraint, since constraints that hold all point forward in run order. When the
answer is "maybe", the full evaluation decides, with its exact messages. A
`FollowedByCleanup` with no cleanup after it waits for `build()` either way.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import cast

from passflow.builder.checks import Rule
from passflow.builder.constraints import (
    AfterLast,
    BeforeFirst,
    Constraint,
    PrecededByCleanup,
    Requires,
    ordering_of,
)
from passflow.builder.entries import BundleEntry, PassEntry, entry_matches
from passflow.builder.kinds import Anchor, PassKind, matches
from passflow.builder.tree import Tree

__all__ = ["quick_check"]


def quick_check(tree: Tree, rules: Sequence[Rule]) -> bool:
    """True when the passes in `tree.added` surely break no constraint."""
    added = tree.added
    if not added:
        return True
    new = {id(entry) for entry in added}
    preceded = _any_preceded_by_cleanup(tree, rules)
    for entry in added:
        if not all(_holds(tree, entry, c) for c in _constraints(entry, rules)):
            return False
        if not preceded:
            continue
        after = tree.pass_after(entry)
        if (
            after is not None
            and id(after) not in new
            and any(
                isinstance(c, PrecededByCleanup) and not _holds(tree, after, c)
                for c in _constraints(after, rules)
            )
        ):
            return False
    for subject, constraint in _interval_constraints(tree, rules):
        for entry in added:
            if not entry_matches(constraint.anchor, entry):
                continue
            subjects = tree.ordered(subject)
            if isinstance(constraint, AfterLast):
                first = subjects.first_other(entry)
                if first is not None and first.key < entry.key:
                    return False
            else:
                last = subjects.last_other(entry)
                if last is not None and last.key > entry.key:
                    return False
    return True


def _constraints(entry: PassEntry, rules: Sequence[Rule]) -> Iterator[Constraint]:
    yield from ordering_of(entry.pass_)
    if not rules:
        return
    home = entry.home
    bundle = home.name if isinstance(home, BundleEntry) else None
    kinds = entry.kinds  # once, not once per rule
    for rule in rules:
        if matches(rule.subject, entry.pass_, kinds, bundle):
            yield rule.constraint


def _any_preceded_by_cleanup(tree: Tree, rules: Sequence[Rule]) -> bool:
    """Whether any rule or placed pass class declares PrecededByCleanup: if none
    does, no pass placed can break one, and the pass after it is not looked at."""
    if any(isinstance(rule.constraint, PrecededByCleanup) for rule in rules):
        return True
    for cls in tree.ordering_classes:
        declared = cast(object, getattr(cls, "ordering", ()))
        if isinstance(declared, tuple | list) and any(
            isinstance(c, PrecededByCleanup)
            for c in cast("tuple[object, ...]", declared)
        ):
            return True
    return False


def _interval_constraints(
    tree: Tree, rules: Sequence[Rule]
) -> Iterator[tuple[Anchor, AfterLast | BeforeFirst]]:
    """(subject anchor, constraint) for every AfterLast and BeforeFirst in play.

    A class anchor stands for the passes of a class that declares the constraint;
    it also matches subclasses, which can only make the check more cautious.
    """
    for rule in rules:
        if isinstance(rule.constraint, AfterLast | BeforeFirst):
            yield rule.subject, rule.constraint
    for cls in tree.ordering_classes:
        declared = cast(object, getattr(cls, "ordering", ()))
        if isinstance(declared, tuple | list):
            for constraint in cast("tuple[object, ...]", declared):
                if isinstance(constraint, AfterLast | BeforeFirst):
                    yield cast(Anchor, cls), constraint


def _holds(tree: Tree, entry: PassEntry, constraint: Constraint) -> bool:
    if isinstance(constraint, Requires):
        first = tree.ordered(constraint.anchor).first_other(entry)
        return first is not None and first.key < entry.key
    if isinstance(constraint, AfterLast):
        last = tree.ordered(constraint.anchor).last_other(entry)
        return last is None or last.key < entry.key
    if isinstance(constraint, BeforeFirst):
        first = tree.ordered(constraint.anchor).first_other(entry)
        return first is None or first.key > entry.key
    if isinstance(constraint, PrecededByCleanup):
        before = tree.pass_before(entry)
        return before is not None and PassKind.CLEANUP in before.kinds
    return True  # FollowedByCleanup: pending until build() when no cleanup follows
