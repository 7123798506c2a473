"""Ordering constraints: what a pass needs from the passes around it.

A pass declares its own constraints in a class attribute, `ordering = (...)`, so they
travel with the pass into any framework. A framework states rules for the whole
pipeline with `PipelineBuilder.require(subject, constraint)`. Both kinds are checked
after every change to the builder and again by `build()`.

| constraint              | holds when                                          | strength |
|-------------------------|-----------------------------------------------------|----------|
| `Requires(X)`           | at least one X pass runs before this pass           | strong   |
| `AfterLast(X)`          | no X pass runs after this pass                      | weak     |
| `BeforeFirst(X)`        | no X pass runs before this pass                     | weak     |
| `FollowedByCleanup()`   | a Cleanup pass runs before the next other pass      | weak     |

A strong constraint is broken when there is no X pass at all; it is always an error.
A weak one holds trivially when no X pass is present, and its severity is the
builder's `weak_severity`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeAlias, cast

from passflow.builder.errors import BuilderError
from passflow.builder.kinds import Anchor, anchor_code
from passflow.diagnostics import Severity
from passflow.pass_base import Pass

__all__ = [
    "AfterLast",
    "BeforeFirst",
    "Constraint",
    "FollowedByCleanup",
    "Requires",
    "Violation",
]


@dataclass(frozen=True)
class Requires:
    """At least one pass matching `anchor` must run before the constrained pass.

    Use it for a real prerequisite. A memref pass placed before any bufferization
    finds nothing to do and still succeeds, which is the silent failure seed 003
    wants caught when the pipeline is built. The constraint is strong: a pipeline
    with no such pass at all is an error too.
    """

    anchor: Anchor
    strong: ClassVar[bool] = True

    def __str__(self) -> str:
        return f"Requires({anchor_code(self.anchor)})"


@dataclass(frozen=True)
class AfterLast:
    """If passes matching `anchor` are present, the constrained pass runs after all of them.

    This is the interval reading of kinds in seed 003: "my pass runs after the last
    X". The constraint is weak, so a pipeline without any X pass satisfies it.
    """

    anchor: Anchor
    strong: ClassVar[bool] = False

    def __str__(self) -> str:
        return f"AfterLast({anchor_code(self.anchor)})"


@dataclass(frozen=True)
class BeforeFirst:
    """If passes matching `anchor` are present, the constrained pass runs before all of them.

    "My pass runs before the first Lowering pass", whatever order the framework's
    lowering passes come in. The constraint is weak.
    """

    anchor: Anchor
    strong: ClassVar[bool] = False

    def __str__(self) -> str:
        return f"BeforeFirst({anchor_code(self.anchor)})"


@dataclass(frozen=True)
class FollowedByCleanup:
    """A Cleanup pass must run after this pass, before any pass that is not a Cleanup.

    This is seed 003's weak ordering: a transform should be cleaned up afterwards.
    For a pass inside a bundle, "after" means after the bundle's last non-Cleanup
    member, because a bundle keeps its passes together on purpose.
    """

    strong: ClassVar[bool] = False

    def __str__(self) -> str:
        return "FollowedByCleanup()"


Constraint: TypeAlias = Requires | AfterLast | BeforeFirst | FollowedByCleanup
"""Any of the four ordering constraints."""

_CONSTRAINT_TYPES = (Requires, AfterLast, BeforeFirst, FollowedByCleanup)


def ordering_of(pass_: Pass) -> tuple[Constraint, ...]:
    """The constraints a pass class declares in its `ordering` attribute (none by default)."""
    declared: object = getattr(type(pass_), "ordering", ())
    if isinstance(declared, tuple | list):
        items = cast("tuple[object, ...] | list[object]", declared)
        constraints = [c for c in items if isinstance(c, _CONSTRAINT_TYPES)]
        if len(constraints) == len(items):
            return tuple(constraints)
    raise BuilderError(
        f"pass class {type(pass_).__name__} declares ordering={declared!r}, which is "
        "not a tuple of Requires, AfterLast, BeforeFirst or FollowedByCleanup; fix the "
        "class attribute, e.g. ordering = (Requires(PassKind.BUFFERIZATION),)"
    )


@dataclass(frozen=True)
class Violation:
    """A constraint the pipeline breaks.

    `subject` is the constrained pass as it appears in the pipeline text (for
    example `func.func(tensor-fold)`). `message` names the passes, who placed them,
    the constraint and where it comes from, and ends with a "fix:" line.
    """

    severity: Severity
    constraint: Constraint
    subject: str
    message: str

    def __str__(self) -> str:
        return f"{self.severity.value}: {self.message}"
