"""The "PipelineGraph" RFC's numba-mlir graph: a loop back, and an optional GPU stage.

Run: .venv/bin/python examples/graph_numba.py

numba-mlir lowers scalar Python in `python-to-std` and NumPy in `numpy-to-linalg`.
Lowering NumPy can generate new Python-level code (the body of a `linalg.generic`),
so `numpy-to-linalg` may jump back to `cfg-to-scf` to have it lowered too. Here
the stand-in for `numpy-to-linalg` adds one new function `@linalg_body` the first
time it runs and sets `pipeline.jump_target = "cfg-to-scf"`; the second pass
through `python-to-std` lowers it, and `numpy-to-linalg` has nothing left to do.

`lower-to-gpu` is optional: the choice `gpu-offload` runs it for a module marked
`numba.target = "gpu"`, and the empty `host-only` otherwise, whatever the order
the pipelines are registered in. `optimization` runs real passes, given as
pipeline text. The other stages are stand-ins that change nothing.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr, UnitAttr

from passflow import OperationPass, OpToOpPassAdaptor, Pass, PassManager, ir
from passflow.graph import (
    JUMP_TARGET_ATTRIBUTE,
    PipelineGraph,
    PipelineSchedulePass,
)
from passflow.instrumentation import PassInstrumentation, PipelineParentInfo
from passflow.manager import OpPassManager
from passflow.options import Option

TEMPLATE = """\
builtin.module attributes {{numba.target = "{target}"}} {{
  func.func @kernel() {{
    func.return
  }}
}}
"""

GENERATED = "linalg_body"


class StandIn(OperationPass):
    """Stands in for one of numba-mlir's pipelines; changes nothing."""

    argument = "numba-stand-in"
    op_name = "builtin.module"
    stage = Option("", help="the numba-mlir pipeline this pass stands in for")

    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


class LowerPython(OperationPass):
    """`python-to-std`: lowers each function once, marking it `numba.lowered`."""

    argument = "numba-lower-python"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        function = self.get_operation()
        if "numba.lowered" in function.attributes:
            self.mark_all_analyses_preserved()
            return
        function.attributes["numba.lowered"] = UnitAttr()
        print(f"    lowered @{ir.symbol_name(function)}")


class NumpyToLinalg(OperationPass):
    """`numpy-to-linalg`: the first time, generates Python-level code and asks
    for the Python pipelines to run again."""

    argument = "numba-numpy-to-linalg"
    op_name = "builtin.module"

    def run_on_operation(self) -> None:
        module = self.get_operation()
        names = {ir.symbol_name(op) for op in ir.direct_children(module)}
        if GENERATED in names:
            self.mark_all_analyses_preserved()
            return
        body = func.FuncOp(GENERATED, ((), ()))
        body.body.block.add_op(func.ReturnOp())
        module.regions[0].block.add_op(body)
        module.attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr("cfg-to-scf")
        print(f"    generated @{GENERATED}; jump to cfg-to-scf requested")


class ShowStages(PassInstrumentation):
    """Prints every pass as it starts, under the stage running it.

    The schedule is one `PassManager.run`: each stage is a dynamic pipeline whose
    parent pass is the `PipelineSchedulePass`, which names the current stage.
    """

    def run_before_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        if isinstance(parent.parent_pass, PipelineSchedulePass):
            print(f"  [{parent.parent_pass.current_pipeline}]")

    def run_before_pass(self, pass_: Pass, op: ir.Operation) -> None:
        if not isinstance(pass_, PipelineSchedulePass | OpToOpPassAdaptor):
            symbol = ir.symbol_name(op)
            where = f"@{symbol}" if symbol else ir.operation_name(op).name
            print(f"    {pass_} on {where}")


def stand_in(stage: str) -> StandIn:
    return StandIn(stage=stage)


def add_python_to_std(pm: OpPassManager) -> None:
    pm.nest("func.func").add(LowerPython())


def offload_target(module: ir.Operation) -> str:
    """Picks `gpu-offload`'s alternative from the module's `numba.target`."""
    gpu = module.attributes.get("numba.target") == StringAttr("gpu")
    return "lower-to-gpu" if gpu else "host-only"


def build_graph() -> PipelineGraph:
    """The RFC's table, `name: [predecessors], [successors], [jumps]`, with
    `lower-to-gpu` made optional by the choice `gpu-offload`."""
    graph = PipelineGraph("numba-mlir")
    graph.register_pipeline(
        "frontend", populate=lambda pm: pm.add(stand_in("frontend"))
    )
    graph.register_pipeline(
        "cfg-to-scf",
        ["frontend"],
        ["optimization"],
        populate=lambda pm: pm.add(stand_in("cfg-to-scf")),
    )
    graph.register_pipeline(
        "python-to-std", ["cfg-to-scf"], ["optimization"], populate=add_python_to_std
    )
    graph.register_pipeline(
        "numpy-to-linalg",
        ["python-to-std"],
        ["bufferization", "optimization"],
        ["cfg-to-scf"],
        populate=lambda pm: pm.add(NumpyToLinalg()),
    )
    graph.register_pipeline(
        "bufferization",
        [],
        ["optimization"],
        populate=lambda pm: pm.add(stand_in("bufferization")),
    )
    graph.register_pipeline(
        "optimization", populate="func.func(cse,loop-invariant-code-motion)"
    )
    graph.register_choice(
        "gpu-offload", ["lower-to-gpu", "host-only"], select=offload_target
    )
    graph.register_pipeline(
        "lower-to-gpu",
        ["optimization"],
        ["lower-to-llvm"],
        populate=lambda pm: pm.add(stand_in("lower-to-gpu")),
    )
    graph.register_pipeline("host-only")
    graph.register_pipeline(
        "lower-to-llvm",
        ["optimization"],
        populate=lambda pm: pm.add(stand_in("lower-to-llvm")),
    )
    return graph


def main() -> None:
    schedule = build_graph().create_schedule()
    print("== schedule")
    print(schedule)
    module = ir.parse_module(TEMPLATE.format(target="cpu"), name="kernel.mlir")
    pm = PassManager()
    pm.add_instrumentation(ShowStages())
    print("\n== run (an instrumentation prints each stage and pass)")
    trace = schedule.run(module, pm)
    print("\n== executed sequence for numba.target = 'cpu'")
    print(trace)
    print("\n== result")
    print(ir.print_op(module))
    gpu = ir.parse_module(TEMPLATE.format(target="gpu"), name="gpu.mlir")
    print("\n== run for numba.target = 'gpu'")
    trace = schedule.run(gpu)
    print("\n== executed sequence for numba.target = 'gpu'")
    print(trace)


if __name__ == "__main__":
    main()
