"""Seed 003's scenario: two frameworks, one extension, no shared code.

A framework builds its pipeline (ingress, tensor passes, bufferization, memref passes,
lowering, with cleanups in between) and hands the builder to the extensions it found.
The extension, `register_tpp`, knows no framework. It places a tensor pass before
one-shot bufferization, a memref pass after it, and a pass before any Lowering pass.
If a framework has no one-shot bufferization, the first insertion raises
AnchorNotFoundError, every change of the attempt is undone, and the extension falls
back to anchoring on the Bufferization kind.

The passes here are stubs named like the MLIR passes they stand for; they only need
names, kinds and constraints to show the composition.

Run: .venv/bin/python examples/builder_framework.py
"""

from __future__ import annotations

from passflow import OperationPass, ir
from passflow.builder import (
    AnchorNotFoundError,
    BeforeFirst,
    Bundle,
    FollowedByCleanup,
    PassKind,
    PipelineBuilder,
    Requires,
    cleanup,
)


class _Stub(OperationPass):
    """A stage of the pipeline; running it leaves the IR as it is."""

    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


# --- passes the frameworks own ------------------------------------------------


class ImportStablehlo(_Stub):
    argument = "stablehlo-import"
    kinds = (PassKind.INGRESS,)


class LegalizeToLinalg(_Stub):
    argument = "stablehlo-legalize-to-linalg"
    op_name = "func.func"
    kinds = (PassKind.NORMALIZATION,)


class FuseElementwise(_Stub):
    argument = "linalg-fuse-elementwise-ops"
    op_name = "func.func"
    kinds = (PassKind.EARLY_OPTIMIZATION,)


class OneShotBufferize(_Stub):
    argument = "one-shot-bufferize"
    kinds = (PassKind.BUFFERIZATION,)


class LinalgBufferize(_Stub):
    argument = "linalg-bufferize"
    op_name = "func.func"
    kinds = (PassKind.BUFFERIZATION,)


class FuncBufferize(_Stub):
    argument = "func-bufferize"
    kinds = (PassKind.BUFFERIZATION,)


class BufferHoisting(_Stub):
    argument = "buffer-hoisting"
    op_name = "func.func"
    kinds = (PassKind.LATE_OPTIMIZATION,)


class ConvertLinalgToLoops(_Stub):
    argument = "convert-linalg-to-loops"
    op_name = "func.func"
    kinds = (PassKind.LOWERING,)


class ConvertToLLVM(_Stub):
    argument = "convert-to-llvm"
    kinds = (PassKind.LOWERING,)


class LegacyGpuLowering(_Stub):
    """An old pass that declares no kind; the framework tags it when adding it."""

    argument = "legacy-gpu-lowering"


# --- the extension's passes -----------------------------------------------------


class TppPackTensors(_Stub):
    """Packs tensors into blocks; relies on one-shot bufferization to keep them."""

    argument = "tpp-pack-tensors"
    op_name = "func.func"
    kinds = (PassKind.EARLY_OPTIMIZATION,)


class TppPropagatePacks(_Stub):
    """Must follow the packing directly: a canonicalization between them folds
    the packs away. The two go in one bundle so nothing gets between them."""

    argument = "tpp-propagate-packs"
    op_name = "func.func"
    kinds = (PassKind.EARLY_OPTIMIZATION,)


class TppMemrefPass(_Stub):
    """Works on memrefs: before any bufferization it would silently do nothing."""

    argument = "tpp-memref-to-xsmm"
    op_name = "func.func"
    kinds = (PassKind.LATE_OPTIMIZATION,)
    ordering = (Requires(PassKind.BUFFERIZATION), FollowedByCleanup())


class TppLowerKernels(_Stub):
    """Must see the XSMM calls before any lowering pass rewrites them."""

    argument = "tpp-lower-kernels"
    kinds = (PassKind.HARDWARE_OPTIMIZATION,)
    ordering = (BeforeFirst(PassKind.LOWERING),)


# --- the extension: framework-agnostic -------------------------------------------


def register_tpp(builder: PipelineBuilder) -> None:
    """Seed 003's `registerDialectAndPasses`, for any framework built with kinds."""
    packing = Bundle("tpp-packing", TppPackTensors(), TppPropagatePacks())
    try:
        with builder.extension("tpp"):  # all or nothing
            # Tensor passes: we only support one-shot bufferization.
            builder.insert_before(packing, "one-shot-bufferize")
            builder.insert_before(cleanup(), "one-shot-bufferize")
            # Memref passes, right after it.
            builder.insert_after(TppMemrefPass(), "one-shot-bufferize")
            builder.insert_after(cleanup(), "tpp-memref-to-xsmm")
            # Before any lowering pass, whichever comes first.
            builder.insert_before(TppLowerKernels(), PassKind.LOWERING)
        return
    except AnchorNotFoundError as err:
        print(
            f"tpp: no {err.anchor!r} here (kinds: {', '.join(err.kinds)}); falling back"
        )
    # Without one-shot bufferization the packing is useless, but the memref pass
    # still fits after the last bufferization pass, whatever it is called.
    with builder.extension("tpp-fallback"):
        builder.insert_after(TppMemrefPass(), PassKind.BUFFERIZATION)
        builder.insert_after(cleanup(), "tpp-memref-to-xsmm")
        builder.insert_before(TppLowerKernels(), PassKind.LOWERING)


# --- two frameworks that never heard of tpp --------------------------------------


def acme_cpu_pipeline() -> PipelineBuilder:
    """Framework one: one-shot bufferization, CPU lowering."""
    builder = PipelineBuilder("builtin.module", framework="acme-cpu")
    builder.require(PassKind.EARLY_OPTIMIZATION, FollowedByCleanup())
    builder.add(ImportStablehlo())
    functions = builder.nest("func.func")
    functions.add(LegalizeToLinalg())
    functions.add(FuseElementwise())
    functions.add(cleanup())
    builder.add(OneShotBufferize())
    builder.add(cleanup())
    builder.add(BufferHoisting())
    builder.add(cleanup())
    builder.add(ConvertLinalgToLoops())
    builder.add(ConvertToLLVM())
    return builder


def beta_gpu_pipeline() -> PipelineBuilder:
    """Framework two: bufferization in two passes, and an untyped legacy lowering."""
    builder = PipelineBuilder("builtin.module", framework="beta-gpu")
    builder.add(ImportStablehlo())
    builder.add(LegalizeToLinalg())
    builder.add(cleanup())
    builder.add(LinalgBufferize())
    builder.add(FuncBufferize())
    builder.add(cleanup())
    builder.add(LegacyGpuLowering(), kinds=(PassKind.LOWERING,))
    builder.add(ConvertToLLVM())
    return builder


def compose(title: str, builder: PipelineBuilder) -> None:
    print(f"=== {title} ===")
    register_tpp(builder)
    pm = builder.build()
    print(f"pipeline text: {pm}\n")
    print(f"build report:\n{builder.report}\n")
    print(builder.explain())
    module = ir.parse_module("func.func @f() {\n  func.return\n}\n", name="f.mlir")
    pm.run(module)
    print("\n(the built pipeline ran)\n")


def main() -> None:
    compose("acme-cpu: one-shot bufferization", acme_cpu_pipeline())
    compose("beta-gpu: no one-shot bufferization, tpp falls back", beta_gpu_pipeline())


if __name__ == "__main__":
    main()
