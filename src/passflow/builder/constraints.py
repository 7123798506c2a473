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
| `FollowedByCleanup()`   | a Cleanup pass runs after this pass, eventually     | weak     |
| `PrecededByCleanup()`   | the pass right before this one is a Cleanup pass    | weak     |

A strong constraint is broken when there is no X pass at all; it is always an error.
A weak one holds trivially when no X pass is present, and its severity is the
builder's `weak_severity`. A broken constraint is a `Violation`; the errors that
report violations, `OrderingError` and `ContradictionError`, are defined here too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeAlias, cast

from passflow.builder.errors import BuilderError
from passflow.builder.kinds import Anchor, anchor_code, is_anchor
from passflow.diagnostics import Severity
from passflow.pass_base import Pass

__all__ = [
    "CONSTRAINT_TYPES",
    "AfterLast",
    "BeforeFirst",
    "Constraint",
    "ContradictionError",
    "FollowedByCleanup",
    "OrderingError",
    "PrecededByCleanup",
    "Requires",
    "Violation",
]


@dataclass(frozen=True)
class Requires:
    """At least one pass matching `anchor` must run before the constrained pass.

    Use it for a real prerequisite. A memref pass placed before any bufferization
    finds nothing to do and still succeeds, which is the silent failure the "Pass Manager Builder" proposal
    wants caught when the pipeline is built. The constraint is strong: a pipeline
    with no such pass at all is an error too.
    """

    anchor: Anchor
    strong: ClassVar[bool] = True

    def __post_init__(self) -> None:
        _check_anchor("Requires", self.anchor)

    def __str__(self) -> str:
        return f"Requires({anchor_code(self.anchor)})"


@dataclass(frozen=True)
class AfterLast:
    """If passes matching `anchor` are present, the constrained pass runs after all of them.

    This is the interval reading of kinds in the "Pass Manager Builder" proposal: "my pass runs after the last
    X". The constraint is weak, so a pipeline without any X pass satisfies it.
    """

    anchor: Anchor
    strong: ClassVar[bool] = False

    def __post_init__(self) -> None:
        _check_anchor("AfterLast", self.anchor)

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

    def __post_init__(self) -> None:
        _check_anchor("BeforeFirst", self.anchor)

    def __str__(self) -> str:
        return f"BeforeFirst({anchor_code(self.anchor)})"


@dataclass(frozen=True)
class FollowedByCleanup:
    """A Cleanup pass must run after this pass, eventually, not necessarily next.

    This is the proposal's weak ordering: "a transform pass should be cleaned up
    afterwards ... not necessarily immediately after". Other passes may run in
    between, so adjacent bundles can share one cleanup. A pass that needs clean IR
    says so with `PrecededByCleanup()`. For a pass inside a bundle, "after" means
    after the bundle's last non-Cleanup member.
    """

    strong: ClassVar[bool] = False

    def __str__(self) -> str:
        return "FollowedByCleanup()"


@dataclass(frozen=True)
class PrecededByCleanup:
    """The pass right before this one must be a Cleanup pass: it needs clean IR.

    The proposal's other cleanup need: "the one after needs canonicalization to
    happen before it runs". Unlike `FollowedByCleanup`, this is immediate, since
    any other pass in between may leave work that a cleanup would have removed.
    """

    strong: ClassVar[bool] = False

    def __str__(self) -> str:
        return "PrecededByCleanup()"


def _check_anchor(name: str, anchor: object) -> None:
    if not is_anchor(anchor):
        raise BuilderError(
            f"{name}({anchor!r}): expected an anchor: a pass argument, a PassKind, "
            f"a pass class or an InBundle; fix: e.g. {name}(PassKind.BUFFERIZATION) "
            f'or {name}("cse")'
        )


Constraint: TypeAlias = (
    Requires | AfterLast | BeforeFirst | FollowedByCleanup | PrecededByCleanup
)
"""Any of the five ordering constraints."""

CONSTRAINT_TYPES = (
    Requires,
    AfterLast,
    BeforeFirst,
    FollowedByCleanup,
    PrecededByCleanup,
)


def ordering_of(pass_: Pass) -> tuple[Constraint, ...]:
    """The constraints a pass class declares in its `ordering` attribute (none by default)."""
    declared: object = getattr(type(pass_), "ordering", ())
    if isinstance(declared, tuple | list):
        items = cast("tuple[object, ...] | list[object]", declared)
        constraints = [c for c in items if isinstance(c, CONSTRAINT_TYPES)]
        if len(constraints) == len(items):
            return tuple(constraints)
    raise BuilderError(
        f"pass class {type(pass_).__name__} declares ordering={declared!r}, which is "
        "not a tuple of Requires, AfterLast, BeforeFirst, FollowedByCleanup or "
        "PrecededByCleanup; fix the "
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


class OrderingError(BuilderError):
    """The pipeline breaks ordering constraints at error severity.

    `violations` lists every broken constraint, each naming the passes involved, who
    placed them and where the constraint comes from.
    """

    def __init__(self, message: str, violations: tuple[Violation, ...]) -> None:
        super().__init__(message)
        self.violations = violations


class ContradictionError(OrderingError):
    """The passes' constraints form a cycle, so no order can satisfy them all.

    `chain` holds one line per link of the cycle. Moving passes cannot help; the fix
    is to remove one of the passes or drop one of the constraints.
    """

    def __init__(
        self, message: str, violations: tuple[Violation, ...], chain: tuple[str, ...]
    ) -> None:
        super().__init__(message, violations)
        self.chain = chain
