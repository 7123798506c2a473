"""The "Pass Manager Builder" proposal's scenario: two frameworks, two extensions,
no shared code.

A framework builds its pipeline (ingress, tensor passes, bufferization, memref passes,
lowering, with cleanups in between), declares extension points where it invites
additions, and loads the extensions it finds through the entry-point group
`passflow.builder_extensions`, so it hard-codes none of them.

`register_tpp` knows no framework. It places a tensor bundle before one-shot
bufferization, its memref pass at the framework's "after-bufferization" extension
point, and a pass before any Lowering pass. If a framework has no one-shot
bufferization (or no such point), the first step raises AnchorNotFoundError, every
change of the attempt is undone, and the extension falls back to anchoring on the
Bufferization kind.

`register_outline` is found by discovery: `main()` declares it in a distribution's
metadata on `sys.path`, as installing a package that declares the entry point
would. It puts a module pass right after a function pass, inside the framework's
`func.func(...)` pipeline, which the builder splits around it.

The passes here are stubs named like the MLIR passes they stand for; they only need
names, kinds and constraints to show the composition.

Run: .venv/bin/python examples/builder_framework.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from passflow import OperationPass, ir
from passflow.builder import (
    EXTENSION_GROUP,
    AnchorNotFoundError,
    BeforeFirst,
    Bundle,
    Extension,
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
    """The proposal's `registerDialectAndPasses`, for any framework built with kinds."""
    packing = Bundle("tpp-packing", TppPackTensors(), TppPropagatePacks())
    try:
        with builder.extension("tpp"):  # all or nothing
            # Tensor passes: we only support one-shot bufferization.
            builder.insert_before(packing, "one-shot-bufferize")
            builder.insert_before(cleanup(), "one-shot-bufferize")
            # Memref passes, where the framework invites them.
            builder.add_at("after-bufferization", TppMemrefPass())
            builder.add_at("after-bufferization", cleanup())
            # Before any lowering pass, whichever comes first.
            builder.insert_before(TppLowerKernels(), PassKind.LOWERING)
        return
    except AnchorNotFoundError as err:
        print(
            f"tpp: no {err.anchor!r} here (kinds: {', '.join(err.kinds)}); falling back"
        )
    # Without one-shot bufferization the packing is useless, but the memref pass
    # still fits after the last bufferization pass, whatever it is called.
    with builder.extension("fallback"):
        builder.insert_after(TppMemrefPass(), PassKind.BUFFERIZATION)
        builder.insert_after(cleanup(), "tpp-memref-to-xsmm")
        builder.insert_before(TppLowerKernels(), PassKind.LOWERING)


# --- a second extension, found by discovery ---------------------------------------


class OutlineKernels(_Stub):
    """Outlines the legalized kernels into their own module: a module pass that must
    run right after legalization, before the function passes that follow it."""

    argument = "outline-kernels"
    op_name = "builtin.module"


def register_outline(builder: PipelineBuilder) -> None:
    """Runs as extension 'outline'; the builder splits `func.func(...)` around it."""
    builder.insert_after(OutlineKernels(), "stablehlo-legalize-to-linalg")


# --- two frameworks that never heard of tpp --------------------------------------


def acme_cpu_pipeline() -> PipelineBuilder:
    """Framework one: one-shot bufferization, CPU lowering."""
    builder = PipelineBuilder("builtin.module", framework="acme-cpu")
    builder.require(PassKind.EARLY_OPTIMIZATION, FollowedByCleanup())
    builder.add(ImportStablehlo())
    functions = builder.nest("func.func")
    functions.add(LegalizeToLinalg())
    functions.add(FuseElementwise())
    functions.extension_point("tensor-optimization")
    functions.add(cleanup())
    builder.add(OneShotBufferize())
    builder.extension_point("after-bufferization")
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


def declare_outline_extension(site: Path) -> None:
    """Declare `register_outline` under the entry-point group, in a distribution's
    metadata in `site`, as `pip install` of a package declaring it would."""
    info = site / "passflow_outline-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: passflow-outline\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        f"[{EXTENSION_GROUP}]\noutline = builder_framework:register_outline\n"
    )
    sys.path.append(str(site))
    sys.path.append(str(Path(__file__).parent))  # where builder_framework lives


def compose(title: str, builder: PipelineBuilder) -> None:
    print(f"=== {title} ===")
    ran = builder.load_extensions(Extension("tpp", register_tpp))  # + discovered
    print(f"extensions: {', '.join(ran)}")
    pm = builder.build()
    print(f"pipeline text: {pm}\n")
    print(f"build report:\n{builder.report}\n")
    print(builder.explain())
    module = ir.parse_module("func.func @f() {\n  func.return\n}\n", name="f.mlir")
    pm.run(module)
    print("\n(the built pipeline ran)\n")


def main() -> None:
    with tempfile.TemporaryDirectory() as site:
        declare_outline_extension(Path(site))
        compose("acme-cpu: one-shot bufferization", acme_cpu_pipeline())
        compose(
            "beta-gpu: no one-shot bufferization, tpp falls back", beta_gpu_pipeline()
        )


if __name__ == "__main__":
    main()
