"""Every loop of a pipeline graph is bounded, whatever its shape: overlapping loops
do not reset each other's counts, a run-wide bound backs the per-edge cap up, and
the cap's message says how to raise it."""

from __future__ import annotations

from typing import ClassVar

import pytest
from xdsl.dialects.builtin import StringAttr

from passflow import (
    OperationPass,
    OpPassManager,
    PassManager,
    PassPipelineError,
    ir,
    registry,
)
from passflow.graph import (
    JUMP_TARGET_ATTRIBUTE,
    JumpLimitError,
    PipelineGraph,
    PipelineGraphError,
    PipelineSchedulePass,
    PopulatePipeline,
    register_graph,
)
from passflow.pipeline_text import parse_pass_pipeline

MODULE = "func.func @f() {\n  func.return\n}\n"

RUNAWAY = 2_000
"""More pipeline runs than any test here needs: a guard that turns a run that
never ends into a failure instead of a hang."""


class Visit(OperationPass):
    """Logs `label`; from its `every`-th visit on, requests a jump to `target` on
    every `every`-th visit (so `every=2` jumps on visits 2, 4, 6, ...)."""

    argument = "test-loops-visit"
    log: ClassVar[list[str]] = []

    def __init__(self, label: str, target: str | None = None, every: int = 1) -> None:
        super().__init__()
        self.label = label
        self.target = target
        self.every = every
        self.visits = 0

    def run_on_operation(self) -> None:
        Visit.log.append(self.label)
        if len(Visit.log) > RUNAWAY:
            raise RuntimeError("the run does not stop")
        self.visits += 1
        if self.target is not None and self.visits % self.every == 0:
            attributes = self.get_operation().attributes
            attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr(self.target)


@pytest.fixture(autouse=True)
def _clear_log() -> None:
    Visit.log.clear()


def visit(label: str, target: str | None = None, every: int = 1) -> PopulatePipeline:
    def populate(pm: OpPassManager) -> None:
        pm.add(Visit(label, target, every))

    return populate


def overlapping() -> PipelineGraph:
    """`b` jumps back to `a` on every second visit, `c` back to `b` always: each
    jump leaves the other's loop, which used to restart its count."""
    graph = PipelineGraph("overlap")
    graph.register_pipeline("a", populate=visit("a"))
    graph.register_pipeline("b", ["a"], [], ["a"], populate=visit("b", "a", every=2))
    graph.register_pipeline("c", ["b"], [], ["b"], populate=visit("c", "b"))
    return graph


def test_overlapping_loops_do_not_reset_each_others_counts() -> None:
    module = ir.parse_module(MODULE)
    with pytest.raises(JumpLimitError) as info:
        overlapping().create_schedule(max_jumps_per_edge=3).run(module)
    assert (info.value.pipeline, info.value.target) == ("c", "b")
    message = info.value.errors[0].message
    assert "the jump c -> b reached the cap of 3 jumps per edge" in message
    assert "the loop from 'b' to 'c' does not converge" in message
    assert Visit.log.count("c") == 4


def test_a_run_wide_bound_backs_up_the_per_edge_cap() -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("a", populate=visit("a"))
    graph.register_pipeline("b", ["a"], [], ["a"], populate=visit("b", "a"))
    schedule = graph.create_schedule(max_pipeline_runs=5)
    assert schedule.max_pipeline_runs == 5
    with pytest.raises(JumpLimitError) as info:
        schedule.run(ir.parse_module(MODULE))
    assert Visit.log == ["a", "b", "a", "b", "a"]
    message = info.value.errors[0].message
    assert message.startswith(
        "schedule 'g' reached its run-wide bound of 5 pipeline runs "
        "(max_pipeline_runs) before 'b' could run again"
    )
    assert "jumps taken: b -> a (2 times)" in message
    assert "create_schedule(max_pipeline_runs=10)" in message
    assert "g{max-runs=10}" in message


def test_the_default_run_wide_bound_follows_the_loops_nesting() -> None:
    # The outer loop is taken 3 times, the inner 3 times per visit, 4 visits:
    # a structured loop nest never reaches the bound before its per-edge caps.
    graph = PipelineGraph("g")
    graph.register_pipeline("start", populate=visit("start"))
    graph.register_pipeline("inner", ["start"], [], ["start"])
    graph.register_pipeline("outer", ["inner"], [], ["start"])
    graph.register_pipeline("end", ["outer"])
    assert graph.create_schedule(max_jumps_per_edge=3).pipeline_run_limit == (
        16 + 16 + 4 + 1
    )
    with pytest.raises(PipelineGraphError, match="max_pipeline_runs of graph 'g'"):
        graph.create_schedule(max_pipeline_runs=0)


@pytest.mark.parametrize(
    ("cap", "told"),
    [
        (
            0,
            "pipeline 'loop' requested the jump to 'loop', but the jump loop -> loop "
            "reached the cap of 0 jumps per edge of schedule 'g' (jumps are off), so "
            "the loop from 'loop' to 'loop' cannot run; to allow it, raise the cap: "
            "create_schedule(max_jumps_per_edge=1) from Python, or g{max-jumps=1} in "
            "the pipeline text",
        ),
        (
            1,
            "pipeline 'loop' requested the jump to 'loop' again after taking it "
            "once: the jump loop -> loop reached the cap of 1 jump per edge of "
            "schedule 'g', so the loop from 'loop' to 'loop' does not converge; to "
            "allow more, raise the cap: create_schedule(max_jumps_per_edge=2) from "
            "Python, or g{max-jumps=2} in the pipeline text",
        ),
        (
            10,
            "pipeline 'loop' requested the jump to 'loop' again after taking it 10 "
            "times in a row: the jump loop -> loop reached the cap of 10 jumps per "
            "edge of schedule 'g', so the loop from 'loop' to 'loop' does not "
            "converge; to allow more, raise the cap: "
            "create_schedule(max_jumps_per_edge=20) from Python, or "
            "g{max-jumps=20} in the pipeline text",
        ),
    ],
)
def test_the_cap_message_says_how_to_raise_it(cap: int, told: str) -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("loop", [], [], ["loop"], populate=visit("loop", "loop"))
    with pytest.raises(JumpLimitError) as info:
        graph.create_schedule(max_jumps_per_edge=cap).run(ir.parse_module(MODULE))
    assert info.value.errors[0].message == told
    assert Visit.log == ["loop"] * (cap + 1)


def test_a_registered_graph_takes_its_run_wide_bound_as_an_option() -> None:
    graph = PipelineGraph("test-loops-registered")
    graph.register_pipeline("a", populate=visit("a"))
    graph.register_pipeline("b", ["a"], [], ["a"], populate=visit("b", "a"))
    register_graph(graph)
    try:
        text = "builtin.module(test-loops-registered{max-jumps=50 max-runs=3})"
        pm = parse_pass_pipeline(text)
        assert str(pm) == text
        runner = pm.passes[0]
        assert isinstance(runner, PipelineSchedulePass)
        run = PassManager()
        run.assign(pm)
        with pytest.raises(PassPipelineError, match="run-wide bound of 3 pipeline"):
            run.run(ir.parse_module(MODULE))
        assert Visit.log == ["a", "b", "a"]
        plain = "builtin.module(test-loops-registered)"
        assert str(parse_pass_pipeline(plain)) == plain
    finally:
        registry.unregister("test-loops-registered")
