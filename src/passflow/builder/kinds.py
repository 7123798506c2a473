"""Pass kinds: labels for what a pass does, so that extensions can anchor on them.

Seed 003 proposes kinds rather than stages. A stage is a block of the pipeline that
every framework would have to agree on. A kind is a property of a pass. The passes of
one kind form an interval of the pipeline (from the first pass of that kind to the
last), and intervals of different kinds may overlap. An extension that needs "before
any lowering" or "after bufferization" anchors on a kind, so it does not depend on the
exact pass names a framework uses.
"""

from __future__ import annotations

from typing import ClassVar, TypeAlias, cast

from passflow.builder.errors import BuilderError
from passflow.pass_base import Pass

__all__ = ["STANDARD_KINDS", "Anchor", "PassKind"]


class PassKind(str):
    """The name of a kind of pass, such as `PassKind.BUFFERIZATION` ("Bufferization").

    A pass declares its kinds in a class attribute, `kinds = (PassKind.LOWERING,)`.
    Plain strings work there too, because a PassKind is its name. Anywhere the builder
    takes an anchor, a PassKind means "the passes of this kind" and a plain string
    means "the passes with this argument". That distinction is the only reason this
    class exists. Any string can be a kind: `PassKind("Vectorization")` is as valid as
    the eight standard kinds from seed 003 below.
    """

    __slots__ = ()

    INGRESS: ClassVar[PassKind]
    """Reads front-end dialects and cleans up a bit."""
    NORMALIZATION: ClassVar[PassKind]
    """Converts front-end dialects to the generic input dialect (linalg on tensors)."""
    EARLY_OPTIMIZATION: ClassVar[PassKind]
    """High-level tensor transformations."""
    BUFFERIZATION: ClassVar[PassKind]
    """Converts tensors to memrefs; may be several passes, scattered."""
    LATE_OPTIMIZATION: ClassVar[PassKind]
    """Low-level memref transformations."""
    HARDWARE_OPTIMIZATION: ClassVar[PassKind]
    """Converts memrefs to vectors or hardware dialects."""
    LOWERING: ClassVar[PassKind]
    """Lowers the remaining dialects to LLVM, SPIR-V, ..."""
    CLEANUP: ClassVar[PassKind]
    """Canonicalization, CSE and the like, run between other passes."""

    def __repr__(self) -> str:
        constant = _CONSTANT_NAMES.get(str(self))
        if constant is not None:
            return f"PassKind.{constant}"
        return f"PassKind({str.__repr__(self)})"


_CONSTANT_NAMES = {
    "Ingress": "INGRESS",
    "Normalization": "NORMALIZATION",
    "EarlyOptimization": "EARLY_OPTIMIZATION",
    "Bufferization": "BUFFERIZATION",
    "LateOptimization": "LATE_OPTIMIZATION",
    "HardwareOptimization": "HARDWARE_OPTIMIZATION",
    "Lowering": "LOWERING",
    "Cleanup": "CLEANUP",
}

PassKind.INGRESS = PassKind("Ingress")
PassKind.NORMALIZATION = PassKind("Normalization")
PassKind.EARLY_OPTIMIZATION = PassKind("EarlyOptimization")
PassKind.BUFFERIZATION = PassKind("Bufferization")
PassKind.LATE_OPTIMIZATION = PassKind("LateOptimization")
PassKind.HARDWARE_OPTIMIZATION = PassKind("HardwareOptimization")
PassKind.LOWERING = PassKind("Lowering")
PassKind.CLEANUP = PassKind("Cleanup")

STANDARD_KINDS: tuple[PassKind, ...] = tuple(PassKind(name) for name in _CONSTANT_NAMES)
"""Seed 003's eight kinds, in the order a pipeline usually reaches them."""

Anchor: TypeAlias = "str | PassKind"
"""What insert_before, insert_after, replace, remove and the constraints search for.

A plain string matches the passes with that argument (`"one-shot-bufferize"`), and a
`PassKind` matches the passes of that kind (`PassKind.LOWERING`).
"""


def kinds_of(pass_: Pass) -> frozenset[str]:
    """The kinds a pass class declares in its `kinds` attribute (none by default)."""
    declared: object = getattr(type(pass_), "kinds", ())
    if isinstance(declared, tuple | list):
        items = cast("tuple[object, ...] | list[object]", declared)
        kinds = [kind for kind in items if isinstance(kind, str)]
        if len(kinds) == len(items):
            return frozenset(str(kind) for kind in kinds)
    raise BuilderError(
        f"pass class {type(pass_).__name__} declares kinds={declared!r}, which is "
        "not a tuple of strings; fix the class attribute, e.g. "
        "kinds = (PassKind.LOWERING,)"
    )


def matches(anchor: Anchor, pass_: Pass, kinds: frozenset[str]) -> bool:
    """Whether a pass with these kinds is one the anchor looks for."""
    if isinstance(anchor, PassKind):
        return anchor in kinds
    return bool(anchor) and pass_.argument == anchor


def anchor_code(anchor: Anchor) -> str:
    """The anchor as it is written in code: `"cse"` or `PassKind.LOWERING`."""
    if isinstance(anchor, PassKind):
        return repr(anchor)
    return f'"{anchor}"'


def anchor_noun(anchor: Anchor) -> str:
    """The anchor in prose: `'cse' pass` or `Lowering pass`."""
    if isinstance(anchor, PassKind):
        return f"{anchor} pass"
    return f"'{anchor}' pass"
