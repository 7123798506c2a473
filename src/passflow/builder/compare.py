"""What changed between two versions of a pipeline: passes that moved, came or went.

Each pipeline is read as its passes in run order, each with the nested
pipelines around it (`func.func` for `builtin.module(func.func(cse))`). The
longest common subsequence of the two (difflib's matcher, by text and place)
stayed put. Of the rest, a pass found in both versions **moved**; one whose
argument and place are in both with other options **changed**; the others
**came** (new only) or **went** (old only). Positions are 1-based, as `explain()`
numbers passes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from passflow.manager import OpPassManager, OpToOpPassAdaptor

__all__ = ["PassChange", "PipelineDiff", "diff_pass_managers"]


@dataclass(frozen=True)
class PassChange:
    """One pass that moved, came, went or changed its options.

    `where` is the nested pipelines around it (`"func.func"`, "" at the top);
    `old` and `new` its 1-based positions (None on the side it is missing from),
    and `old_text` what it was before it `changed`.
    """

    change: Literal["moved", "came", "went", "changed"]
    text: str
    where: str
    old: int | None
    new: int | None
    old_text: str | None = None

    def __str__(self) -> str:
        place = f" in {self.where}" if self.where else ""
        if self.change == "moved":
            return f"moved   {self.text}{place}: #{self.old} -> #{self.new}"
        if self.change == "came":
            return f"came    {self.text}{place}: #{self.new}"
        if self.change == "went":
            return f"went    {self.text}{place}: was #{self.old}"
        return (
            f"changed {self.old_text} -> {self.text}{place}: #{self.old} -> #{self.new}"
        )


@dataclass(frozen=True)
class PipelineDiff:
    """The changes from one pipeline to another, in the new pipeline's order
    (what went, in the old one's, after). False when the two are the same."""

    changes: tuple[PassChange, ...]

    def of(self, change: str) -> tuple[PassChange, ...]:
        return tuple(c for c in self.changes if c.change == change)

    @property
    def moved(self) -> tuple[PassChange, ...]:
        return self.of("moved")

    @property
    def came(self) -> tuple[PassChange, ...]:
        return self.of("came")

    @property
    def went(self) -> tuple[PassChange, ...]:
        return self.of("went")

    @property
    def changed(self) -> tuple[PassChange, ...]:
        return self.of("changed")

    def __bool__(self) -> bool:
        return bool(self.changes)

    def __str__(self) -> str:
        return "\n".join(map(str, self.changes)) or "no change"


Step = tuple[str, str, str]
"""(where, pass text, pass argument)"""


def diff_pass_managers(old: OpPassManager, new: OpPassManager) -> PipelineDiff:
    """The passes that moved, came, went or changed options from `old` to `new`."""
    before, after = list(_steps(old, "")), list(_steps(new, ""))
    keys_before = [(where, text) for where, text, _ in before]
    keys_after = [(where, text) for where, text, _ in after]
    matcher = SequenceMatcher(None, keys_before, keys_after, autojunk=False)
    kept_old: set[int] = set()
    kept_new: set[int] = set()
    for block in matcher.get_matching_blocks():
        kept_old.update(range(block.a, block.a + block.size))
        kept_new.update(range(block.b, block.b + block.size))
    left = [i for i in range(len(before)) if i not in kept_old]
    right = [j for j in range(len(after)) if j not in kept_new]
    changes: dict[int, PassChange] = {}
    for same in (_same_text, _same_pass):
        for j in list(right):
            i = next((i for i in left if same(before[i], after[j])), None)
            if i is None:
                continue
            left.remove(i)
            right.remove(j)
            where, text, _ = after[j]
            if before[i][1] == text:
                changes[j] = PassChange("moved", text, where, i + 1, j + 1)
            else:
                changes[j] = PassChange(
                    "changed", text, where, i + 1, j + 1, old_text=before[i][1]
                )
    for j in right:
        changes[j] = PassChange("came", after[j][1], after[j][0], None, j + 1)
    ordered = [changes[j] for j in sorted(changes)]
    ordered.extend(
        PassChange("went", before[i][1], before[i][0], i + 1, None) for i in left
    )
    return PipelineDiff(tuple(ordered))


def _same_text(a: Step, b: Step) -> bool:
    return a[:2] == b[:2]


def _same_pass(a: Step, b: Step) -> bool:
    return a[0] == b[0] and a[2] == b[2] and bool(a[2])


def _steps(pm: OpPassManager, where: str) -> Iterator[Step]:
    for pass_ in pm.passes:
        if isinstance(pass_, OpToOpPassAdaptor):
            for manager in pass_.managers:
                inner = f"{where}/{manager.anchor}" if where else manager.anchor
                yield from _steps(manager, inner)
        else:
            yield where, str(pass_), pass_.argument
