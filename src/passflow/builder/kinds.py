"""Pass kinds: labels for what a pass does, so that extensions can anchor on them.

the "Pass Manager Builder" proposal proposes kinds rather than stages. A stage is a block of the pipeline that
every framework would have to agree on. A kind is a property of a pass. The passes of
one kind form an interval of the pipeline (from the first pass of that kind to the
last), and intervals of different kinds may overlap. An extension that needs "before
any lowering" or "after bufferization" anchors on a kind, so it does not depend on the
exact pass names a framework uses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeAlias, cast

from xdsl.passes import ModulePass

from passflow.pass_base import Pass
from passflow.xdsl_passes import XDSLPass

__all__ = ["STANDARD_KINDS", "Anchor", "InBundle", "PassKind"]


class PassKind(str):
    """The name of a kind of pass, such as `PassKind.BUFFERIZATION` ("Bufferization").

    A pass declares its kinds in a class attribute, `kinds = (PassKind.LOWERING,)`.
    Plain strings work there too, because a PassKind is its name. Anywhere the builder
    takes an anchor, a PassKind means "the passes of this kind" and a plain string
    means "the passes with this argument". That distinction is the only reason this
    class exists. Any string can be a kind: `PassKind("Vectorization")` is as valid as
    the eight standard kinds from the "Pass Manager Builder" proposal below.
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
"""the "Pass Manager Builder" proposal's eight kinds, in the order a pipeline usually reaches them."""


@dataclass(frozen=True)
class InBundle:
    """An anchor on the passes of the bundles named `name`: `InBundle("tpp-packing")`.

    Anchoring on a bundle's member places around the whole bundle, so
    `insert_after(p, InBundle("cleanup"))` goes after the last cleanup bundle, and
    an extension can name a framework's bundle without knowing what is in it.
    """

    name: str

    @property
    def __name__(self) -> str:
        return f'InBundle("{self.name}")'


Anchor: TypeAlias = "str | PassKind | type[Pass] | type[ModulePass] | InBundle"
"""What insert_before, insert_after, replace, remove and the constraints search for.

A plain string matches the passes with that argument (`"one-shot-bufferize"`), a
`PassKind` the passes of that kind (`PassKind.LOWERING`), and a pass class its
instances, subclasses included (`OneShotBufferize`, the "Pass Manager Builder"
proposal's `addBeforePass<New, Old>`). An xDSL `ModulePass` class matches the
adapter that runs it, and `InBundle("name")` the members of the bundles so named.
"""


def is_anchor(anchor: object) -> bool:
    """Whether `anchor` is something the builder can search for."""
    if isinstance(anchor, str):
        return bool(anchor)
    if isinstance(anchor, InBundle):
        return bool(anchor.name)
    return isinstance(anchor, type) and issubclass(anchor, Pass | ModulePass)


def matches(
    anchor: Anchor, pass_: Pass, kinds: frozenset[str], bundle: str | None = None
) -> bool:
    """Whether a pass with these kinds, in the bundle so named, is one the anchor
    looks for."""
    if isinstance(anchor, PassKind):
        return anchor in kinds
    if isinstance(anchor, str):
        return bool(anchor) and pass_.argument == anchor
    if isinstance(anchor, InBundle):
        return bundle == anchor.name
    if isinstance(pass_, anchor):
        return True
    return isinstance(pass_, XDSLPass) and issubclass(pass_.xdsl_class, anchor)


def anchor_key(anchor: Anchor) -> object:
    """A key that tells anchors apart: a kind, an argument and a class never collide."""
    if isinstance(anchor, str):
        return (isinstance(anchor, PassKind), str(anchor))
    return anchor


def anchor_text(anchor: Anchor) -> str:
    """The anchor as a plain string: the argument, the kind or the class name."""
    return str(anchor) if isinstance(anchor, str) else anchor.__name__


def anchor_code(anchor: Anchor) -> str:
    """The anchor as it is written in code: `"cse"`, `PassKind.LOWERING` or `CSE`."""
    if isinstance(anchor, PassKind):
        return repr(anchor)
    if isinstance(anchor, str):
        return f'"{anchor}"'
    given = cast(object, anchor)  # callers may be untyped; messages must not fail
    return anchor.__name__ if isinstance(given, type) else repr(given)


def anchor_noun(anchor: Anchor) -> str:
    """The anchor in prose: `'cse' pass`, `Lowering pass` or `CSE pass`."""
    if isinstance(anchor, PassKind):
        return f"{anchor} pass"
    if isinstance(anchor, str):
        return f"'{anchor}' pass"
    if isinstance(anchor, InBundle):
        return f"pass of a bundle '{anchor.name}'"
    return f"{anchor.__name__} pass"
