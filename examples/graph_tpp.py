"""The "PipelineGraph" RFC's TPP graph, with stand-in passes: a GPU or a CPU branch.

Run: .venv/bin/python examples/graph_tpp.py

The RFC's table gives the dependencies only: `gpu-pipeline` and
`default-pipeline` both follow `frontend` and precede `bufferization`. Which
branch a module takes is known only during compilation (here, from its
`tpp.target` attribute). The one addition to the table is the choice `device`,
whose alternatives are the two branches: its pass `tpp-pick-branch` names the
branch in `pipeline.jump_target`, exactly that one runs, and the run continues
at `bufferization`, whatever order the pipelines are registered in.

The schedule is then registered as the pipeline `tpp-mlir`, so it also runs from
pipeline text, between ordinary nested `func.func` pipelines.
"""

from __future__ import annotations

import sys

from xdsl.dialects.builtin import StringAttr

from passflow import OperationPass, PassManager, ir
from passflow.graph import (
    JUMP_TARGET_ATTRIBUTE,
    PipelineGraph,
    PipelineSchedulePass,
    PopulatePipeline,
)
from passflow.manager import OpPassManager
from passflow.options import Option
from passflow.pipeline_text import parse_pass_pipeline

TEMPLATE = """\
builtin.module attributes {{tpp.target = "{target}"}} {{
  func.func @matmul() {{
    func.return
  }}
}}
"""


class StandIn(OperationPass):
    """Stands in for one of TPP's pass bundles; changes nothing."""

    argument = "tpp-stand-in"
    op_name = "builtin.module"
    stage = Option("", help="the TPP bundle this pass stands in for")

    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


class PickBranch(OperationPass):
    """The pass of the choice `device`: picks the branch for the module's target."""

    argument = "tpp-pick-branch"
    op_name = "builtin.module"

    def run_on_operation(self) -> None:
        module = self.get_operation()
        gpu = module.attributes.get("tpp.target") == StringAttr("gpu")
        branch = "gpu-pipeline" if gpu else "default-pipeline"
        module.attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr(branch)
        self.mark_all_analyses_preserved()


def stand_in(stage: str, *then: type[OperationPass]) -> PopulatePipeline:
    """Populates a pipeline with the stand-in for `stage`, then a `then()` each."""

    def populate(pm: OpPassManager) -> None:
        pm.add(StandIn(stage=stage))
        for make in then:
            pm.add(make())

    return populate


def build_graph() -> PipelineGraph:
    """The RFC's table, `name: [predecessors], [successors], [jumps]`, plus the
    choice that makes the branches exclusive."""
    graph = PipelineGraph("tpp-mlir")
    graph.register_pipeline("frontend", populate=stand_in("frontend"))
    graph.register_choice(
        "device",
        ["gpu-pipeline", "default-pipeline"],
        populate=lambda pm: pm.add(PickBranch()),
    )
    graph.register_pipeline(
        "gpu-pipeline",
        ["frontend"],
        ["bufferization"],
        populate=stand_in("gpu-pipeline"),
    )
    graph.register_pipeline(
        "default-pipeline",
        ["frontend"],
        ["bufferization"],
        populate=stand_in("default-pipeline"),
    )
    graph.register_pipeline(
        "bufferization", [], ["linalg-lowering"], populate=stand_in("bufferization")
    )
    graph.register_pipeline(
        "linalg-lowering", [], ["lower-to-llvm"], populate=stand_in("linalg-lowering")
    )
    graph.register_pipeline("lower-to-llvm", populate=stand_in("lower-to-llvm"))
    return graph


def main() -> None:
    schedule = build_graph().create_schedule()
    print("== schedule")
    print(schedule)
    for target in ("gpu", "cpu"):
        module = ir.parse_module(TEMPLATE.format(target=target), name=f"{target}.mlir")
        trace = schedule.run(module)
        print(f"\n== executed sequence for tpp.target = {target!r}")
        print(trace)

    schedule.register(summary="TPP's compiler as a pipeline schedule")
    text = "builtin.module(func.func(test-function-pass),tpp-mlir)"
    pm = PassManager()
    pm.assign(parse_pass_pipeline(text))
    print(f"\n== registered, then parsed from {text}")
    pm.dump(sys.stdout)
    pm.run(ir.parse_module(TEMPLATE.format(target="cpu"), name="cpu.mlir"))
    runner = pm.passes[-1]
    assert isinstance(runner, PipelineSchedulePass)
    print("\n== executed sequence (kept by the schedule's pass)")
    print(runner.trace)


if __name__ == "__main__":
    main()
