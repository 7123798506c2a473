"""Checking ordering constraints against a plan, and finding contradictions.

Each constraint is checked on each pass it applies to, which gives one `Check`: does
it hold, which pass satisfies it (the witness, which `explain()` shows), which pass
breaks it (the offender, which the message names). A contradiction is a cycle in the
"must run before" relation that the constraints imply. No order of the passes can
satisfy such a set of constraints, so `ContradictionError` reports the whole chain
instead of one of the violations the cycle causes.

Only what the passes present prove is reported while the pipeline is still being
built. The one exception is a pass that needs a cleanup and is still the last pass:
the next call may add that cleanup, so the check waits for `build()`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from passflow.builder.constraints import (
    AfterLast,
    BeforeFirst,
    Constraint,
    FollowedByCleanup,
    Requires,
    Violation,
    ordering_of,
)
from passflow.builder.kinds import Anchor, PassKind, anchor_code, anchor_noun, matches
from passflow.builder.plan import Plan, Slot
from passflow.diagnostics import Severity

__all__ = ["Check", "Evaluation", "Rule", "evaluate"]


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
    return Evaluation(plan, tuple(checks), _find_cycle(plan.slots, checks, index))


class _Index:
    """The passes matching each anchor, computed once per evaluation."""

    def __init__(self, slots: list[Slot]) -> None:
        self._slots = slots
        self._cache: dict[tuple[bool, str], list[Slot]] = {}

    def matching(self, anchor: Anchor) -> list[Slot]:
        key = (isinstance(anchor, PassKind), str(anchor))
        found = self._cache.get(key)
        if found is None:
            found = [s for s in self._slots if matches(anchor, s.entry.pass_, s.kinds)]
            self._cache[key] = found
        return found

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
    if isinstance(constraint, FollowedByCleanup):
        return _check_cleanup(subject, constraint, source, severity, slots)
    head = subject.describe()
    tail = f"[{constraint}, {source}]"
    name = subject.display
    anchor = constraint.anchor
    noun = anchor_noun(anchor)
    code = anchor_code(anchor)
    others = index.others(anchor, subject)
    earlier = [s for s in others if s.number < subject.number]
    later = [s for s in others if s.number > subject.number]

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
    constraint: FollowedByCleanup,
    source: str,
    severity: Severity,
    slots: list[Slot],
) -> Check:
    """A Cleanup must come after the subject (after its bundle's last non-Cleanup pass)."""
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
    following = slots[last + 1]
    if PassKind.CLEANUP in following.kinds:
        return Check(
            subject,
            constraint,
            source,
            severity,
            False,
            f"cleaned up by #{following.number} {following.display}",
            witness=following,
        )
    return Check(
        subject,
        constraint,
        source,
        severity,
        True,
        f"#{following.number} {following.display} runs next",
        f"{subject.describe()} should be followed by a Cleanup pass before any other "
        f"pass {tail}, but {following.describe()} runs next.\n  fix: insert a "
        f'cleanup between them, e.g. insert_after(cleanup(), "{name}"), or place '
        f"'{following.display}' after a cleanup",
        offender=following,
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
