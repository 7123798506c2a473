"""iree-org/iree#22666, with PipelineBuilder: a plugin pass in IREE's Global
Optimization phase, with no extension point for it in IREE.

The issue: IREE's plugin API offers two pipeline hooks,
`extendInputConversionPreprocessingPassPipeline` and
`extendPreprocessingPassPipeline`, and none for Global Optimization, the phase
after preprocessing and before dispatch regions are formed, where a plugin's
custom fusion would see what preprocessing left and run before dispatch
formation. The request is a third virtual method.

Here `iree_pipeline()` is IREE's pipeline as IREE writes it, unmodified and with
no hook at all. The plugin places its pass by naming the pass that forms
dispatch regions, and states what it needs as constraints (preprocessing before
it, dispatch formation after it), so a later reordering of IREE's pipeline is
an error at build time instead of a pass that silently sees the wrong IR. The
passes named like IREE's are stand-ins that record their name on the module;
`canonicalize` and `cse` are passflow's own. The plugin's pass inspects the real
IR: it sees the function after Global Optimization's CSE merged its additions.

Run: .venv/bin/python examples/builder_iree_global_opt.py
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import ArrayAttr, StringAttr
from xdsl.utils.hints import isa

from passflow import OperationPass, ir
from passflow.builder import (
    BeforeFirst,
    PassKind,
    PipelineBuilder,
    Requires,
    diff_pipelines,
)

INPUT = """\
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}
"""


class Stage(OperationPass):
    """One of IREE's passes, standing in: appends its argument to `iree.stages`."""

    op_name = "builtin.module"

    def run_on_operation(self) -> None:
        module = self.get_operation()
        before = module.attributes.get("iree.stages")
        done = list(before.data) if isa(before, ArrayAttr[StringAttr]) else []
        module.attributes["iree.stages"] = ArrayAttr([*done, StringAttr(self.argument)])
        self.mark_all_analyses_preserved()


class InputConversion(Stage):
    argument = "iree-input-conversion"
    kinds = (PassKind.INGRESS,)


class PadLinalgOps(Stage):
    argument = "iree-preprocessing-pad-linalg-ops"
    kinds = (PassKind.NORMALIZATION,)


class PropagateTransposes(Stage):
    argument = "iree-global-opt-propagate-linalg-transpose"
    kinds = (PassKind.EARLY_OPTIMIZATION,)


class HoistIntoGlobals(Stage):
    argument = "iree-util-hoist-into-globals"
    kinds = (PassKind.EARLY_OPTIMIZATION,)


class FormDispatchRegions(Stage):
    argument = "iree-dispatch-creation-form-dispatch-regions"
    kinds = (PassKind("DispatchCreation"),)


class ConvertToStream(Stage):
    argument = "iree-stream-conversion"
    kinds = (PassKind.LOWERING,)


def iree_pipeline() -> PipelineBuilder:
    """IREE's pipeline: input conversion, preprocessing, Global Optimization,
    dispatch creation, stream. It offers no extension point."""
    builder = PipelineBuilder(framework="iree")
    builder.add(InputConversion())
    builder.add(PadLinalgOps())  # preprocessing
    builder.add(PropagateTransposes())  # Global Optimization from here
    functions = builder.nest("func.func")
    functions.add("canonicalize")
    functions.add("cse")
    builder.add(HoistIntoGlobals())
    builder.add(FormDispatchRegions())  # dispatch creation
    builder.add(ConvertToStream())
    return builder


# --- the plugin: knows IREE's pass names, not its code --------------------------


class CustomFusion(OperationPass):
    """The plugin's high-level optimization: it needs preprocessing's results and
    must run before dispatch regions are formed."""

    argument = "my-plugin-custom-fusion"
    op_name = "builtin.module"
    kinds = (PassKind.EARLY_OPTIMIZATION,)
    ordering = (
        Requires("iree-preprocessing-pad-linalg-ops"),
        BeforeFirst("iree-dispatch-creation-form-dispatch-regions"),
    )

    def run_on_operation(self) -> None:
        module = self.get_operation()
        stages = module.attributes["iree.stages"]
        assert isa(stages, ArrayAttr[StringAttr])
        last = stages.data[-1]
        adds = sum(isinstance(op, arith.AddiOp) for op in module.walk())
        module.attributes["plugin.saw"] = StringAttr(
            f"after {last.data}: {adds} arith.addi"
        )
        self.mark_all_analyses_preserved()


def extend_global_optimization(builder: PipelineBuilder) -> None:
    """What `extendGlobalOptimizationPassPipeline` would do, against the
    pipeline as it is: at the end of Global Optimization, right before
    dispatch regions are formed."""
    with builder.extension("global-opt-plugin"):
        builder.insert_before(
            CustomFusion(), "iree-dispatch-creation-form-dispatch-regions"
        )


def main() -> None:
    base = iree_pipeline()
    print(f"IREE's pipeline:\n  {base.build()}\n")
    extended = iree_pipeline()
    extend_global_optimization(extended)
    pm = extended.build()
    print(f"with the plugin:\n  {pm}\n")
    print(f"what changed:\n  {diff_pipelines(base, extended)}\n")
    print(extended.explain().split("\n\n")[0], "\n")
    module = ir.parse_module(INPUT, name="input.mlir")
    pm.run(module)
    print(ir.print_op(module))


if __name__ == "__main__":
    main()
