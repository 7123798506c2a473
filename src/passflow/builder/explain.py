"""`PipelineBuilder.explain()`: every pass of the built pipeline, with its provenance.

For each pass, the listing shows its number, its kinds, who placed it and with which
call, the bundle it belongs to, each constraint it is subject to (with the pass that
satisfies or breaks it), and the constraints of other passes it satisfies. Those last
lines answer "can I remove this?". After the passes come the build notes, the passes
that were removed or replaced, and every violation. IREE and LLVM users ask for this
listing and do not have it.
"""

from __future__ import annotations

from collections.abc import Sequence

from passflow.builder.checks import Check, Evaluation
from passflow.builder.entries import BundleEntry, PassEntry
from passflow.builder.plan import pass_label

__all__ = ["render"]

_INDENT = " " * 7


def render(
    evaluation: Evaluation,
    history: Sequence[str],
    splits: Sequence[str],
    points: Sequence[str] = (),
) -> str:
    plan = evaluation.plan
    count = f"{len(plan.slots)} pass{'es' * (len(plan.slots) != 1)}"
    lines = [f"{count} on '{plan.anchor}', in execution order:"]
    own: dict[int, list[Check]] = {}
    served: dict[int, list[Check]] = {}
    for check in evaluation.checks:
        own.setdefault(id(check.subject), []).append(check)
        if check.witness is not None:
            served.setdefault(id(check.witness), []).append(check)
    for slot in plan.slots:
        kinds = f"  [{', '.join(sorted(slot.kinds))}]" if slot.kinds else ""
        lines.append(f"{slot.number:>4}.  {slot.display}{kinds}")
        bundle = "" if slot.bundle is None else f", in bundle '{slot.bundle.name}'"
        lines.append(f"{_INDENT}placed by {slot.entry.origin}{bundle}")
        lines.extend(
            f"{_INDENT}stands for the identical {_name(other)} placed by "
            f"{other.origin} (collapsed)"
            for other in slot.stands_for
        )
        for check in own.get(id(slot), []):
            status = check.severity.value if check.broken else "ok"
            lines.append(
                f"{_INDENT}{status}: {check.constraint} [{check.source}]: {check.detail}"
            )
        lines.extend(
            f"{_INDENT}satisfies {check.constraint} of #{check.subject.number} "
            f"{check.subject.display}"
            for check in served.get(id(slot), [])
        )
    _section(lines, "build notes", plan.notes)
    _section(lines, "extension points", points)
    _section(lines, "nested pipelines split", splits)
    _section(lines, "removed and replaced", history)
    _section(
        lines,
        "violations",
        [str(c.violation()) for c in evaluation.checks if c.broken],
    )
    _section(lines, "contradiction (a cycle no order can satisfy)", evaluation.cycle)
    return "\n".join(lines)


def _name(entry: BundleEntry | PassEntry) -> str:
    if isinstance(entry, BundleEntry):
        return f"bundle '{entry.name}'"
    return f"'{pass_label(entry.pass_)}'"


def _section(lines: list[str], title: str, items: Sequence[str]) -> None:
    if items:
        lines.append(f"\n{title}:")
        lines.extend(f"  - {item}" for item in items)
