"""triton-lang/triton#8137, with PipelineBuilder: a downstream overrides a
Triton backend's stage pipelines (adds a pass, turns one off for one kernel)
without editing the backend's compiler.py.

The pull request: a Triton backend's pass pipelines are written out in its
`compiler.py` (`make_ttir`, `make_ttgir`, ...), so inserting a pass for
instrumentation, a downstream optimization or a custom lowering meant editing
that file. It adds a hook into the compiler stages, and with Python inspection
a downstream can enable or disable passes for specific kernels, and one day
insert out-of-tree passes anywhere in the stages.

Here `Backend.make_ttir` is the backend's stage, unmodified: it returns the
stage's pipeline as a `PipelineBuilder`. A downstream's `override(stage, kernel,
builder)` edits it by pass name, as the hook would: an instrumentation pass
after `triton-combine`, and `loop-invariant-code-motion` off for one kernel.
`inline`, `canonicalize`, `cse`, `loop-invariant-code-motion` and `symbol-dce`
are passflow's own passes; the Triton-specific ones are stand-ins. The kernels
are real IR: the first gets its loop-invariant product hoisted, the second
keeps it in the loop.

Run: .venv/bin/python examples/builder_triton_stages.py
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects.builtin import IntegerAttr, i64

from passflow import OperationPass, ir, registry
from passflow.builder import PipelineBuilder, diff_pipelines

KERNEL = """\
func.func @NAME(%n: index, %x: i32, %y: i32) -> i32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (i32) {
    %scale = arith.muli %x, %y : i32
    %next = arith.addi %acc, %scale : i32
    scf.yield %next : i32
  }
  func.return %r : i32
}
"""
"""Both kernels: `%scale` is loop-invariant, so LICM hoists it."""

KERNELS = {
    name: KERNEL.replace("NAME", name) for name in ("add_kernel", "debug_kernel")
}


class _StandIn(OperationPass):
    """One of Triton's own passes, standing in: leaves the IR as it is."""

    op_name = "builtin.module"

    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


class RewriteTensorPointer(_StandIn):
    argument = "triton-rewrite-tensor-pointer"


class Combine(_StandIn):
    argument = "triton-combine"


class ReorderBroadcast(_StandIn):
    argument = "triton-reorder-broadcast"


class LoopUnroll(_StandIn):
    argument = "triton-loop-unroll"


class Backend:
    """The backend's compiler.py: its stages, written out, no hook."""

    def make_ttir(self) -> PipelineBuilder:
        return PipelineBuilder.from_text(
            "builtin.module(inline,triton-rewrite-tensor-pointer,canonicalize,"
            "triton-combine,triton-reorder-broadcast,cse,loop-invariant-code-motion,"
            "symbol-dce,triton-loop-unroll)",
            framework="triton-backend",
        )


# --- the downstream: edits the stage by pass name ------------------------------


class CountArith(OperationPass):
    """Instrumentation: how many arith ops are there at this point?"""

    argument = "downstream-count-arith"
    op_name = "builtin.module"

    def run_on_operation(self) -> None:
        module = self.get_operation()
        count = sum(op.name.startswith("arith.") for op in module.walk())
        module.attributes["downstream.arith_ops"] = IntegerAttr(count, i64)
        self.mark_all_analyses_preserved()


Override = Callable[[str, str, PipelineBuilder], None]


def override(stage: str, kernel: str, builder: PipelineBuilder) -> None:
    """The downstream's hook: instrument every ttir stage after the combiner,
    and keep loop-invariant code in place in the kernel being debugged."""
    if stage != "ttir":
        return
    with builder.extension("downstream"):
        builder.insert_after(CountArith(), "triton-combine")
        if kernel == "debug_kernel":
            builder.remove("loop-invariant-code-motion")


def compile_kernel(name: str, hook: Override | None) -> str:
    builder = Backend().make_ttir()
    base = builder.copy()
    if hook is not None:
        hook("ttir", name, builder)
    print(f"== {name}: ttir stage, what the hook changed:")
    print(diff_pipelines(base, builder))
    module = ir.parse_module(KERNELS[name], name=f"{name}.mlir")
    builder.build().run(module)
    return ir.print_op(module)


def main() -> None:
    for stand_in in (RewriteTensorPointer, Combine, ReorderBroadcast, LoopUnroll):
        registry.register_pass(stand_in)
    for name in KERNELS:
        print(compile_kernel(name, override), "\n")


if __name__ == "__main__":
    main()
