"""The kinds of the passes whose authors declared none: passflow's and xDSL's.

A kind anchor (`insert_before(p, PassKind.LOWERING)`) only finds passes that carry
kinds. passflow's built-in passes and xDSL's passes declare none in their classes, so
this module keeps a table, by pass argument, of what each of them does. Every
registered pass has an entry, `UNKNOWN` where no kind fits (debug printers, test
passes, generic rewrite drivers); a test fails when a pass is registered without one.

Passes from elsewhere are tagged with `tag_kinds`, by argument or by class, so that a
framework can give kinds to passes it does not own.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

from xdsl.passes import ModulePass

from passflow.builder.errors import BuilderError
from passflow.builder.kinds import STANDARD_KINDS, PassKind
from passflow.pass_base import Pass
from passflow.xdsl_passes import XDSLPass

__all__ = [
    "KIND_TABLE",
    "UNKNOWN",
    "KindTags",
    "kinds_generation",
    "kinds_of",
    "known_kinds",
    "tag_kinds",
]

UNKNOWN: tuple[PassKind, ...] = ()
"""The entry of a pass no kind fits: it is known, and anchors on kinds skip it."""

_BY_KIND: dict[tuple[PassKind, ...], tuple[str, ...]] = {
    (PassKind.INGRESS,): (
        "frontend-desymrefy",
        "function-persist-arg-names",
        "jax-use-donated-arguments",
    ),
    (PassKind.NORMALIZATION,): (
        "lift-arith-to-linalg",
        "linalg-generalize-named-ops",
        "shape-inference",
        "symbol-privatize",
        "topological-sort",
    ),
    (PassKind.EARLY_OPTIMIZATION,): (
        "constant-fold-interp",
        "distribute-stencil",
        "function-constant-pinning",
        "inline",
        "linalg-fuse-multiply-add",
        "mem2reg",
        "sroa",
        "sccp",
        "stencil-inlining",
        "stencil-shape-minimize",
        "stencil-storage-materialization",
        "stencil-tensorize-z-dimension",
        "stencil-unroll",
    ),
    (PassKind.BUFFERIZATION,): (
        "convert-ml-program-to-memref",
        "csl-stencil-bufferize",
        "empty-tensor-to-alloc-tensor",
        "stencil-bufferize",
    ),
    (PassKind.LATE_OPTIMIZATION,): (
        "approximate-math-with-bitcast",
        "arith-add-fastmath",
        "control-flow-hoist",
        "control-flow-sink",
        "convert-arith-to-varith",
        "convert-varith-to-arith",
        "expand-math-to-polynomials",
        "licm",
        "loop-hoist-memref",
        "loop-invariant-code-motion",
        "scf-for-loop-flatten",
        "scf-for-loop-range-folding",
        "scf-for-loop-unroll",
        "scf-parallel-loop-tiling",
        "varith-fuse-repeated-operands",
    ),
    (PassKind.HARDWARE_OPTIMIZATION,): (
        "convert-linalg-to-memref-stream",
        "convert-memref-stream-to-snitch-stream",
        "convert-riscv-scf-for-to-frep",
        "convert-vector-to-x86",
        "csl-stencil-handle-async-flow",
        "csl-stencil-materialize-stores",
        "csl-stencil-set-global-coeffs",
        "csl-wrapper-hoist-buffers",
        "gpu-map-parallel-loops",
        "linalg-to-csl",
        "memref-stream-fold-fill",
        "memref-stream-generalize-fill",
        "memref-stream-infer-fill",
        "memref-stream-interleave",
        "memref-stream-legalize",
        "memref-stream-tile-outer-loops",
        "memref-stream-unnest-out-parameters",
        "memref-streamify",
        "memref-to-dsd",
        "memref-to-gpu",
        "replace-incompatible-fpga",
        "riscv-allocate-infinite-registers",
        "riscv-allocate-registers",
        "riscv-prologue-epilogue-insertion",
        "riscv-scf-for-infer-constant-step",
        "riscv-scf-loop-range-folding",
        "snitch-allocate-registers",
        "vector-split-load-extract",
        "x86-allocate-registers",
        "x86-infer-broadcast",
        "x86-prologue-epilogue-insertion",
        "x86-regalloc-legalize",
        "x86-regalloc-verify-liveness",
    ),
    (PassKind.LOWERING,): (
        "convert-arith-to-riscv",
        "convert-arith-to-riscv-snitch",
        "convert-arith-to-x86",
        "convert-func-to-riscv-func",
        "convert-func-to-x86-func",
        "convert-linalg-to-loops",
        "convert-memref-stream-to-loops",
        "convert-memref-to-ptr",
        "convert-memref-to-riscv",
        "convert-pdl-to-pdl-interp",
        "convert-print-format-to-riscv-debug",
        "convert-ptr-to-llvm",
        "convert-ptr-to-riscv",
        "convert-ptr-to-x86",
        "convert-ptr-type-offsets",
        "convert-riscv-scf-to-riscv-cf",
        "convert-riscv-to-llvm",
        "convert-scf-to-cf",
        "convert-scf-to-openmp",
        "convert-scf-to-riscv-scf",
        "convert-scf-to-x86-scf",
        "convert-snitch-stream-to-snitch",
        "convert-stencil-to-csl-stencil",
        "convert-stencil-to-ll-mlir",
        "convert-vector-to-ptr",
        "convert-x86-scf-to-x86",
        "csl-stencil-to-csl-wrapper",
        "dmp-to-mpi",
        "hls-convert-stencil-to-ll-mlir",
        "inline-snrt",
        "lower-affine",
        "lower-csl-stencil",
        "lower-csl-wrapper",
        "lower-hls",
        "lower-mpi",
        "lower-riscv-func",
        "lower-snitch",
        "printf-to-llvm",
        "printf-to-putchar",
        "reconcile-unrealized-casts",
        "riscv-lower-parallel-mov",
    ),
    (PassKind.CLEANUP,): (
        "canonicalize",
        "canonicalize-dmp",
        "cse",
        "dce",
        "remove-dead-values",
        "symbol-dce",
    ),
    UNKNOWN: (
        "composite-fixed-point-pass",
        "strip-debuginfo",
        "apply-eqsat-pdl",
        "apply-eqsat-pdl-interp",
        "apply-individual-rewrite",
        "apply-pdl",
        "apply-pdl-interp",
        "convert-pdl-interp-to-eqsat-pdl-interp",
        "eqsat-add-costs",
        "eqsat-create-eclasses",
        "eqsat-create-egraphs",
        "eqsat-extract",
        "eqsat-serialize-egraph",
        "func-to-pdl-rewrite",
        "mlir-opt",
        "print-ir",
        "print-op-stats",
        "view-op-graph",
        "test-add-timers-to-top-level-funcs",
        "test-constant-folding",
        "test-deprecation",
        "test-busy-work",
        "test-dynamic-pipeline",
        "test-function-pass",
        "test-interface-pass",
        "test-linalg-tiling",
        "test-lower-linalg-to-snitch",
        "test-module-pass",
        "test-options-pass",
        "test-options-super-pass",
        "test-pass-crash",
        "test-pass-crash-on-op",
        "test-pass-create-invalid-ir",
        "test-pass-failure",
        "test-pass-invalid-parent",
        "test-patterns",
        "test-print-liveness",
        "test-remark",
        "test-specialised-constant-folding",
        "test-stats-pass",
        "test-transform-dialect-erase-schedule",
        "test-vectorize-matmul",
        "transform-interpreter",
        "x86-set-arch",
    ),
}


def _invert(
    by_kind: Mapping[tuple[PassKind, ...], tuple[str, ...]],
) -> dict[str, tuple[PassKind, ...]]:
    table: dict[str, tuple[PassKind, ...]] = {}
    for kinds, names in by_kind.items():
        for name in names:
            table[name] = (*table.get(name, ()), *kinds)
    return table


KIND_TABLE: Mapping[str, tuple[PassKind, ...]] = _invert(_BY_KIND)
"""The kinds of every built-in passflow pass and every xDSL pass, by argument.

`UNKNOWN` (no kind) where none fits. A pass class that declares kinds keeps them;
the table adds to them.
"""


class KindTags:
    """Kinds given to passes by argument and by class (subclasses too), as
    `tag_kinds` gives them: everywhere (the module's), or in one builder
    (`PipelineBuilder.tag_kinds`). `generation` changes with every tag, for
    caches of kinds."""

    def __init__(self) -> None:
        self.names: dict[str, frozenset[str]] = {}
        self.classes: dict[type, frozenset[str]] = {}
        self.generation = 0

    def tag(
        self,
        target: str | type[Pass] | type[ModulePass],
        kinds: tuple[str, ...],
        call: str,
    ) -> None:
        """Add `kinds` to `target`'s; `call` (`tag_kinds`) names the call in errors."""
        given = cast(tuple[object, ...], kinds)  # callers may be untyped
        if not given or not all(isinstance(k, str) and k for k in given):
            raise BuilderError(
                f"{call}({_target_code(target)}, ...): kinds={given!r}; expected one "
                f"or more kind names; fix: {call}(target, PassKind.LOWERING)"
            )
        added = frozenset(str(k) for k in kinds)
        given_target = cast(object, target)  # callers may be untyped
        if isinstance(target, str) and target:
            self.names[target] = self.names.get(target, frozenset()) | added
        elif isinstance(given_target, type) and issubclass(
            given_target, Pass | ModulePass
        ):
            self.classes[given_target] = (
                self.classes.get(given_target, frozenset()) | added
            )
        else:
            raise BuilderError(
                f"{call}({_target_code(target)}, ...): expected a pass argument or a "
                f'pass class; fix: {call}("my-pass", ...) or {call}(MyPass, ...)'
            )
        self.generation += 1

    def kinds(self, pass_: Pass) -> frozenset[str]:
        """The kinds tagged on `pass_`, by its argument and its classes."""
        kinds = self.names.get(pass_.argument, frozenset())
        if self.classes:
            classes: tuple[type, ...] = type(pass_).__mro__
            if isinstance(pass_, XDSLPass):
                classes = (*classes, *pass_.xdsl_class.__mro__)
            for cls in classes:
                kinds |= self.classes.get(cls, frozenset())
        return kinds

    def all_kinds(self) -> set[str]:
        return {
            kind
            for tags in (*self.names.values(), *self.classes.values())
            for kind in tags
        }

    def copy(self) -> KindTags:
        new = KindTags()
        new.restore(self.snapshot())
        return new

    def snapshot(self) -> tuple[dict[str, frozenset[str]], dict[type, frozenset[str]]]:
        return dict(self.names), dict(self.classes)

    def restore(
        self, saved: tuple[dict[str, frozenset[str]], dict[type, frozenset[str]]]
    ) -> None:
        self.names, self.classes = dict(saved[0]), dict(saved[1])
        self.generation += 1


_GLOBAL_TAGS = KindTags()


def tag_kinds(target: str | type[Pass] | type[ModulePass], *kinds: str) -> None:
    """Give kinds to passes you don't own, everywhere: by argument, or by class
    (subclasses too).

    `tag_kinds("convert-foo-to-llvm", PassKind.LOWERING)` or
    `tag_kinds(ForeignPass, PassKind.LOWERING)`; an xDSL `ModulePass` class tags the
    adapter that runs it. Tags add to what the class and the table declare, apply in
    every builder from now on (passes already placed included), and cannot be taken
    back. This is for a pass's author, saying what the pass does; a framework
    that tags passes for its own pipeline uses `PipelineBuilder.tag_kinds`, which
    leaves other builders alone.
    """
    _GLOBAL_TAGS.tag(target, kinds, "tag_kinds")


def _target_code(target: object) -> str:
    return target.__name__ if isinstance(target, type) else repr(target)


def kinds_generation() -> int:
    """A number that changes whenever `tag_kinds` adds kinds, for caches of kinds."""
    return _GLOBAL_TAGS.generation


def known_kinds() -> frozenset[str]:
    """The standard kinds, the table's, and every kind given by `tag_kinds`."""
    known = {str(kind) for kind in STANDARD_KINDS}
    known.update(kind for kinds in KIND_TABLE.values() for kind in kinds)
    known.update(_GLOBAL_TAGS.all_kinds())
    return frozenset(known)


def kinds_of(pass_: Pass) -> frozenset[str]:
    """A pass's kinds: its class's `kinds`, the table's entry, and tags by name or class."""
    kinds = _declared(pass_) | frozenset(KIND_TABLE.get(pass_.argument, UNKNOWN))
    return kinds | _GLOBAL_TAGS.kinds(pass_)


def _declared(pass_: Pass) -> frozenset[str]:
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
