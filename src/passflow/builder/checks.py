"""Checking ordering constraints against a plan, and finding contradictions.

Each constraint is checked on each pass it applies to, which gives one `Check`: does
it hold, which pass satisfies it (the witness, which `explain()` shows), which pass
breaks it (the offender, which the message names). A contradiction is a cycle in the
"must run before" relation that the constraints imply. No order of the passes can
satisfy such a set of constraints, so `ContradictionError` reports the whole chain
instead of one of the violations the cycle causes.

Only what the passes present prove is reported while the pipeline is still being
built. The one exception is a pass that needs a cleanup and has none after it: any
later call may append one (the need is "eventually"), so the check waits for
`build()`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from itertools import pairwise

from passflow.builder.catalog import known_kinds
from passflow.builder.constraints import (
    AfterLast,
    BeforeFirst,
    Constraint,
    FollowedByCleanup,
    PrecededByCleanup,
    Requires,
    Violation,
    ordering_of,
)
from passflow.builder.entries import entry_matches
from passflow.builder.kinds import (
    Anchor,
    PassKind,
    anchor_code,
    anchor_key,
    anchor_noun,
)
from passflow.builder.plan import Plan, Slot
from passflow.diagnostics import Severity

__all__ = ["Check", "Evaluation", "Rule", "evaluate", "unknown_kinds"]


@dataclass(frozen=True)
class Rule:
    """A pipeline-wide constraint: every pass matching `subject` must satisfy `constraint`."""

    subject: Anchor
    constraint: Constraint
    placed_by: str

    @property
    def source(self) -> str:
        return f"required of {anchor_code(self.subject)} by {self.placed_by}"


@dataclass(frozen=True, eq=False)
class Check:
    """One constraint checked on one pass."""

    subject: Slot
    constraint: Constraint
    source: str
    severity: Severity
    broken: bool
    detail: str
    message: str = ""
    witness: Slot | None = None
    offender: Slot | None = None
    pending: bool = False

    def violation(self) -> Violation:
        return Violation(
            self.severity, self.constraint, self.subject.display, self.message
        )

    def key(self) -> tuple[object, ...]:
        """Identifies the violation across plans, so it is warned about only once."""
        offender = None if self.offender is None else self.offender.entry
        return (self.subject.entry, self.constraint, self.source, offender)


@dataclass(frozen=True)
class Evaluation:
    """A plan with every check on it and, if the constraints contradict, the cycle."""

    plan: Plan
    checks: tuple[Check, ...]
    cycle: tuple[str, ...]

    def broken(self, severity: Severity, *, final: bool) -> list[Check]:
        """The broken checks of `severity`; pending ones only when `final`."""
        return [
            c
            for c in self.checks
            if c.broken and c.severity is severity and (final or not c.pending)
        ]


def evaluate(plan: Plan, rules: Sequence[Rule], weak: Severity) -> Evaluation:
    """Check every declared constraint and every rule on `plan`."""
    index = _Index(plan.slots)
    checks: list[Check] = []
    for slot in plan.slots:
        pass_ = slot.entry.pass_
        source = f"declared by pass class {type(pass_).__name__}"
        checks.extend(
            _check(slot, c, source, weak, index, plan.slots) for c in ordering_of(pass_)
        )
    for rule in rules:
        checks.extend(
            _check(slot, rule.constraint, rule.source, weak, index, plan.slots)
            for slot in index.matching(rule.subject)
        )
    checks.sort(key=lambda c: c.subject.number)
    # Satisfied constraints are edges that run forward, which cannot form a cycle.
    cycle = (
        _find_cycle(plan.slots, checks, index)
        if any(c.broken and not c.pending for c in checks)
        else ()
    )
    return Evaluation(plan, tuple(checks), cycle)


class _Index:
    """The passes matching each anchor, computed once per evaluation."""

    def __init__(self, slots: list[Slot]) -> None:
        self._slots = slots
        self._cache: dict[object, tuple[list[Slot], list[int]]] = {}
        self._next_cleanup: list[Slot | None] | None = None

    def _lookup(self, anchor: Anchor) -> tuple[list[Slot], list[int]]:
        key = anchor_key(anchor)
        found = self._cache.get(key)
        if found is None:
            slots = [s for s in self._slots if entry_matches(anchor, s.entry)]
            found = (slots, [s.number for s in slots])
            self._cache[key] = found
        return found

    def matching(self, anchor: Anchor) -> list[Slot]:
        """The passes matching `anchor`, in run order."""
        return self._lookup(anchor)[0]

    def around(self, anchor: Anchor, subject: Slot) -> tuple[list[Slot], list[Slot]]:
        """The first and last matches before `subject`, and after it (binary search)."""
        slots, numbers = self._lookup(anchor)
        low = bisect_left(numbers, subject.number)
        high = bisect_right(numbers, subject.number)
        earlier = [slots[i] for i in sorted({0, low - 1}) if 0 <= i < low]
        later = [
            slots[i] for i in sorted({high, len(slots) - 1}) if high <= i < len(slots)
        ]
        return earlier, later

    def next_cleanup(self, position: int) -> Slot | None:
        """The first Cleanup pass at `position` or after, in the plan's slots."""
        if self._next_cleanup is None:
            table: list[Slot | None] = [None] * (len(self._slots) + 1)
            for i in range(len(self._slots) - 1, -1, -1):
                slot = self._slots[i]
                table[i] = slot if PassKind.CLEANUP in slot.kinds else table[i + 1]
            self._next_cleanup = table
        return self._next_cleanup[min(position, len(self._slots))]

    def others(self, anchor: Anchor, subject: Slot) -> list[Slot]:
        return [s for s in self.matching(anchor) if s is not subject]


def _article(noun: str) -> str:
    return f"an {noun}" if noun[0] in "AEIOU" else f"a {noun}"


def _check(
    subject: Slot,
    constraint: Constraint,
    source: str,
    weak: Severity,
    index: _Index,
    slots: list[Slot],
) -> Check:
    severity = Severity.ERROR if constraint.strong else weak
    if isinstance(constraint, FollowedByCleanup | PrecededByCleanup):
        return _check_cleanup(subject, constraint, source, severity, slots, index)
    head = subject.describe()
    tail = f"[{constraint}, {source}]"
    name = subject.display
    anchor = constraint.anchor
    noun = anchor_noun(anchor)
    code = anchor_code(anchor)
    earlier, later = index.around(anchor, subject)  # first and last of each side

    def ok(detail: str, witness: Slot | None) -> Check:
        return Check(subject, constraint, source, severity, False, detail, "", witness)

    def broken(detail: str, message: str, offender: Slot | None) -> Check:
        return Check(
            subject, constraint, source, severity, True, detail, message, None, offender
        )

    if isinstance(constraint, Requires):
        if earlier:
            return ok(f"after #{earlier[-1].number} {earlier[-1].display}", earlier[-1])
        if not later:
            return broken(
                "none in the pipeline",
                f"{head} requires {_article(noun)} to run before it {tail}, but the "
                f"pipeline has none.\n  fix: add {_article(noun)} before '{name}', or "
                f"leave '{name}' out of pipelines without one (an extension can catch "
                "BuilderError and fall back)",
                None,
            )
        first = later[0]
        return broken(
            f"#{first.number} {first.display} runs after it",
            f"{head} requires {_article(noun)} to run before it {tail}, but the only "
            f"ones run after it, from {first.describe()} on.\n  fix: place "
            f"'{name}' after '{first.display}', e.g. with insert_after(..., {code})",
            first,
        )
    if isinstance(constraint, AfterLast):
        if not later:
            if earlier:
                return ok(f"after #{earlier[-1].number} {earlier[-1].display}", None)
            return ok("none in the pipeline", None)
        last = later[-1]
        return broken(
            f"#{last.number} {last.display} runs after it",
            f"{head} must run after the last {noun} {tail}, but {last.describe()} "
            f"runs after it.\n  fix: place '{name}' after '{last.display}' "
            f"(insert_after(..., {code}) picks the last one), or remove "
            f"'{last.display}'",
            last,
        )
    if not earlier:
        if later:
            return ok(f"before #{later[0].number} {later[0].display}", None)
        return ok("none in the pipeline", None)
    first = earlier[0]
    return broken(
        f"#{first.number} {first.display} runs before it",
        f"{head} must run before the first {noun} {tail}, but {first.describe()} "
        f"runs before it.\n  fix: place '{name}' before '{first.display}' "
        f"(insert_before(..., {code}) picks the first one), or remove "
        f"'{first.display}'",
        first,
    )


def _check_cleanup(
    subject: Slot,
    constraint: FollowedByCleanup | PrecededByCleanup,
    source: str,
    severity: Severity,
    slots: list[Slot],
    index: _Index,
) -> Check:
    """Dispatch to the check of one of the two cleanup constraints."""
    if isinstance(constraint, PrecededByCleanup):
        return _check_preceded(subject, constraint, source, severity, slots)
    return _check_followed(subject, constraint, source, severity, slots, index)


def _check_followed(
    subject: Slot,
    constraint: FollowedByCleanup,
    source: str,
    severity: Severity,
    slots: list[Slot],
    index: _Index,
) -> Check:
    """A Cleanup must run, eventually, after the subject (past its own bundle's
    non-Cleanup members)."""
    last = subject.number - 1
    if subject.bundle is not None:
        for position in range(last + 1, len(slots)):
            slot = slots[position]
            if slot.bundle is not subject.bundle:
                break
            if PassKind.CLEANUP not in slot.kinds:
                last = position
    tail = f"[{constraint}, {source}]"
    name = subject.entry.pass_.argument or subject.display
    cleanup = index.next_cleanup(last + 1)
    if cleanup is not None:
        return Check(
            subject,
            constraint,
            source,
            severity,
            False,
            f"cleaned up by #{cleanup.number} {cleanup.display}",
            witness=cleanup,
        )
    if last + 1 == len(slots):
        return Check(
            subject,
            constraint,
            source,
            severity,
            True,
            "nothing runs after it",
            f"{subject.describe()} should be followed by a Cleanup pass {tail}, but "
            "nothing runs after it.\n  fix: add cleanup() at the end of the pipeline",
            pending=True,
        )
    final = slots[-1]
    return Check(
        subject,
        constraint,
        source,
        severity,
        True,
        "no Cleanup pass runs after it",
        f"{subject.describe()} should be followed by a Cleanup pass, eventually "
        f"{tail}, but none runs after it, up to the last pass {final.describe()}."
        f'\n  fix: insert a cleanup after it, e.g. insert_after(cleanup(), "{name}"), '
        "or add cleanup() at the end of the pipeline",
        pending=True,
    )


def _check_preceded(
    subject: Slot,
    constraint: PrecededByCleanup,
    source: str,
    severity: Severity,
    slots: list[Slot],
) -> Check:
    """The pass right before the subject must be a Cleanup pass."""
    tail = f"[{constraint}, {source}]"
    name = subject.entry.pass_.argument or subject.display
    fix = f'\n  fix: insert a cleanup right before it, e.g. insert_before(cleanup(), "{name}")'
    if subject.number == 1:
        return Check(
            subject,
            constraint,
            source,
            severity,
            True,
            "nothing runs before it",
            f"{subject.describe()} should be preceded by a Cleanup pass {tail}, but "
            f"it runs first.{fix}",
        )
    previous = slots[subject.number - 2]
    if PassKind.CLEANUP in previous.kinds:
        return Check(
            subject,
            constraint,
            source,
            severity,
            False,
            f"cleaned up by #{previous.number} {previous.display}",
            witness=previous,
        )
    return Check(
        subject,
        constraint,
        source,
        severity,
        True,
        f"#{previous.number} {previous.display} runs right before it",
        f"{subject.describe()} should be preceded by a Cleanup pass {tail}, but "
        f"{previous.describe()} runs right before it.{fix}",
        offender=previous,
    )


def _find_cycle(
    slots: list[Slot], checks: list[Check], index: _Index
) -> tuple[str, ...]:
    """The links of a cycle in the "must run before" relation, or () when there is none.

    Edges come from AfterLast and BeforeFirst (to every matching pass), from Requires
    when exactly one pass can satisfy it, and from the fixed order of a bundle's
    members. A Requires with several candidates is an "or" and adds no edge; its
    violations are still reported one by one.
    """
    edges: dict[Slot, list[tuple[Slot, str]]] = {slot: [] for slot in slots}

    def link(before: Slot, after: Slot, why: str) -> None:
        edges[before].append(
            (
                after,
                f"'{before.display}' (#{before.number}) must run before "
                f"'{after.display}' (#{after.number}): {why}",
            )
        )

    for check in checks:
        constraint, subject = check.constraint, check.subject
        why = f"'{subject.display}' has {constraint} ({check.source})"
        if isinstance(constraint, AfterLast):
            for other in index.others(constraint.anchor, subject):
                link(other, subject, why)
        elif isinstance(constraint, BeforeFirst):
            for other in index.others(constraint.anchor, subject):
                link(subject, other, why)
        elif isinstance(constraint, Requires):
            candidates = index.others(constraint.anchor, subject)
            if len(candidates) == 1:
                link(candidates[0], subject, why)
    for before, after in pairwise(slots):
        if before.bundle is not None and before.bundle is after.bundle:
            link(before, after, f"bundle '{before.bundle.name}' keeps its order")
    return _cycle(slots, edges)


def _cycle(
    slots: list[Slot], edges: dict[Slot, list[tuple[Slot, str]]]
) -> tuple[str, ...]:
    """Depth-first search for a back edge; returns the links around the cycle."""
    state: dict[Slot, int] = {}  # 1: on the current path, 2: done
    for start in slots:
        if start in state:
            continue
        state[start] = 1
        stack = [(start, iter(edges[start]))]
        links: list[str] = []  # links[i] goes from stack[i] to stack[i + 1]
        while stack:
            node, pending = stack[-1]
            step = next(pending, None)
            if step is None:
                state[node] = 2
                stack.pop()
                if links:
                    links.pop()
                continue
            target, why = step
            if state.get(target) == 1:
                first = next(i for i, (n, _) in enumerate(stack) if n is target)
                return (*links[first:], why)
            if target not in state:
                state[target] = 1
                stack.append((target, iter(edges[target])))
                links.append(why)
    return ()


def unknown_kinds(
    plan: Plan, rules: Sequence[Rule], tagged: set[str]
) -> list[tuple[tuple[object, ...], str]]:
    """(key, message) for each kind that a weak constraint or a rule names, that
    no pass of `plan` has, and that is no standard, tabled or tagged kind: most
    likely a typo, which would make the constraint hold trivially. `tagged`
    are the kinds the builder's own `tag_kinds` gave."""
    present = {kind for slot in plan.slots for kind in slot.kinds}
    known = known_kinds() | present | tagged
    named: list[tuple[str, str]] = []  # (the constraint and its source, the kind)
    for rule in rules:
        where = f"require({anchor_code(rule.subject)}, {rule.constraint}) by {rule.placed_by}"
        anchors = [rule.subject]
        if isinstance(rule.constraint, AfterLast | BeforeFirst):
            anchors.append(rule.constraint.anchor)
        named.extend((where, a) for a in anchors if isinstance(a, PassKind))
    one_of_each = {type(slot.entry.pass_): slot.entry.pass_ for slot in plan.slots}
    for cls, pass_ in one_of_each.items():
        for constraint in ordering_of(pass_):
            if isinstance(constraint, AfterLast | BeforeFirst) and isinstance(
                constraint.anchor, PassKind
            ):
                where = f"{constraint} [declared by pass class {cls.__name__}]"
                named.append((where, constraint.anchor))
    found: list[tuple[tuple[object, ...], str]] = []
    for where, kind in dict.fromkeys(named):
        if kind in known:
            continue
        close = get_close_matches(kind, sorted(known), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        found.append(
            (
                ("unknown kind", where, str(kind)),
                f"{where} names the kind '{kind}', which no pass in the pipeline "
                f"has, so it holds trivially{hint}; fix: correct the kind, or "
                "ignore this if passes of that kind are added later",
            )
        )
    return found
