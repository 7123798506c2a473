"""PipelineGraph and PipelineSchedule (the "PipelineGraph" RFC): order, errors, jumps, export."""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import ClassVar, cast

import pytest
from xdsl.dialects.builtin import IntegerAttr, StringAttr, UnitAttr, i64

from passflow import (
    OperationPass,
    OpPassManager,
    Pass,
    PassflowError,
    PassInstrumentation,
    PassManager,
    PassPipelineError,
    PipelineParentInfo,
    RegistrationError,
    ir,
    registry,
)
from passflow.graph import (
    DEFAULT_MAX_JUMPS_PER_EDGE,
    JUMP_TARGET_ATTRIBUTE,
    AmbiguousJumpError,
    JumpLimitError,
    JumpTaken,
    PipelineCycleError,
    PipelineGraph,
    PipelineGraphError,
    PipelineNameError,
    PipelineSchedule,
    PipelineSchedulePass,
    PopulatePipeline,
    ScheduleRunError,
    SkippedPredecessorError,
    SubgraphBoundaryError,
    UndeclaredJumpError,
    UnknownPipelineError,
    dump_pipeline_graphs,
)
from passflow.pipeline_text import parse_pass_pipeline
from passflow.testing import TestInvalidIRPass
from passflow.tools import opt

Parse = Callable[[str], ir.ModuleOp]

ROOT = Path(__file__).resolve().parent.parent

MODULE = """\
func.func @f() {
  func.return
}
func.func @g() {
  func.return
}
"""


class Record(OperationPass):
    """Appends `label` (and the function's name, on a function) to `log`."""

    argument = "record"
    log: ClassVar[list[str]] = []

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label

    def run_on_operation(self) -> None:
        symbol = ir.symbol_name(self.get_operation())
        Record.log.append(self.label + (f"@{symbol}" if symbol else ""))


class RequestJump(OperationPass):
    """Sets `pipeline.jump_target` to `target` the first `times` times it runs
    (in one schedule run: each run works on fresh clones of the passes)."""

    argument = "request-jump"

    def __init__(self, target: str, times: int = 1) -> None:
        super().__init__()
        self.target = target
        self.times = times

    def run_on_operation(self) -> None:
        if self.times > 0:
            self.times -= 1
            self.get_operation().attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr(
                self.target
            )


@pytest.fixture(autouse=True)
def _clear_log() -> None:
    Record.log.clear()


@pytest.fixture
def module(parse: Parse) -> ir.ModuleOp:
    return parse(MODULE)


def record(label: str) -> PopulatePipeline:
    return lambda pm: pm.add(Record(label))


def record_then_jump(label: str, target: str, times: int = 1) -> PopulatePipeline:
    def populate(pm: OpPassManager) -> None:
        pm.add(Record(label))
        pm.add(RequestJump(target, times))

    return populate


Row = tuple[str, Sequence[str], Sequence[str], Sequence[str]]
"""The RFC's `name: [predecessors], [successors], [jumps]`."""


def table(rows: Sequence[Row]) -> PipelineGraph:
    """A graph from the RFC's `name: [predecessors], [successors], [jumps]` rows,
    each pipeline recording its name."""
    graph = PipelineGraph("table")
    for name, predecessors, successors, jumps in rows:
        graph.register_pipeline(
            name, predecessors, successors, jumps, populate=record(name)
        )
    return graph


NUMBA: list[Row] = [
    ("frontend", [], [], []),
    ("cfg-to-scf", ["frontend"], ["optimization"], []),
    ("python-to-std", ["cfg-to-scf"], ["optimization"], []),
    (
        "numpy-to-linalg",
        ["python-to-std"],
        ["bufferization", "optimization"],
        ["cfg-to-scf"],
    ),
    ("bufferization", [], ["optimization"], []),
    ("optimization", [], [], []),
    ("lower-to-gpu", ["optimization"], ["lower-to-llvm"], []),
    ("lower-to-llvm", ["optimization"], [], []),
]

TPP: list[Row] = [
    ("frontend", [], [], []),
    ("gpu-pipeline", ["frontend"], ["bufferization"], []),
    ("default-pipeline", ["frontend"], ["bufferization"], []),
    ("bufferization", [], ["linalg-lowering"], []),
    ("linalg-lowering", [], ["lower-to-llvm"], []),
    ("lower-to-llvm", [], [], []),
]


# --- schedule order -------------------------------------------------------------


def test_numba_graph_is_scheduled_in_dependency_order() -> None:
    schedule = table(NUMBA).create_schedule()
    assert schedule.order == (
        "frontend",
        "cfg-to-scf",
        "python-to-std",
        "numpy-to-linalg",
        "bufferization",
        "optimization",
        "lower-to-gpu",
        "lower-to-llvm",
    )


def test_tpp_graph_is_scheduled_in_dependency_order() -> None:
    schedule = table(TPP).create_schedule()
    assert schedule.order == (
        "frontend",
        "gpu-pipeline",
        "default-pipeline",
        "bufferization",
        "linalg-lowering",
        "lower-to-llvm",
    )


def test_every_edge_is_respected_whatever_the_registration_order() -> None:
    rows = list(reversed(NUMBA))
    schedule = table(rows).create_schedule()
    order = schedule.order
    for name, predecessors, successors, _ in rows:
        assert all(order.index(p) < order.index(name) for p in predecessors)
        assert all(order.index(name) < order.index(s) for s in successors)


def test_ties_are_broken_by_registration_order() -> None:
    first = table([("a", [], [], []), ("c", ["a"], [], []), ("b", ["a"], [], [])])
    second = table([("a", [], [], []), ("b", ["a"], [], []), ("c", ["a"], [], [])])
    assert first.create_schedule().order == ("a", "c", "b")
    assert second.create_schedule().order == ("a", "b", "c")
    unrelated = table([("z", [], [], []), ("y", [], [], []), ("x", [], [], [])])
    assert unrelated.create_schedule().order == ("z", "y", "x")


def test_a_ready_pipeline_registered_earlier_runs_before_a_later_one() -> None:
    # `late` is registered last but only waits for `a`; `b` waits for `slow`.
    graph = table(
        [
            ("a", [], [], []),
            ("slow", ["a"], [], []),
            ("b", ["slow"], [], []),
            ("late", ["a"], [], []),
        ]
    )
    assert graph.create_schedule().order == ("a", "slow", "b", "late")


def test_empty_pipelines_anchor_stages_inserted_later(module: ir.ModuleOp) -> None:
    graph = PipelineGraph("stages")
    graph.register_pipeline("high", populate=record("high"))
    graph.register_pipeline("high-to-middle", ["high"])
    graph.register_pipeline("middle-to-low", ["high-to-middle"])
    graph.register_pipeline("low", ["middle-to-low"], populate=record("low"))
    # An extension, registered after everything, lands between the anchors.
    graph.register_pipeline(
        "extension", ["high-to-middle"], ["middle-to-low"], populate=record("ext")
    )
    schedule = graph.create_schedule()
    assert schedule.order == (
        "high",
        "high-to-middle",
        "extension",
        "middle-to-low",
        "low",
    )
    assert [p.is_empty for p in schedule.pipelines] == [False, True, False, True, False]
    trace = schedule.run(module)
    assert Record.log == ["high", "ext", "low"]
    assert trace.executed == schedule.order


def test_populate_runs_for_each_schedule_so_schedules_share_no_pass() -> None:
    calls: list[str] = []

    def populate(pm: OpPassManager) -> None:
        calls.append("populate")
        pm.add(Record("a"))

    graph = PipelineGraph()
    graph.register_pipeline("a", populate=populate)
    one, two = graph.create_schedule(), graph.create_schedule()
    assert calls == ["populate", "populate"]
    first = one.pipelines[0].body
    second = two.pipelines[0].body
    assert isinstance(first, OpPassManager) and isinstance(second, OpPassManager)
    assert first.passes[0] is not second.passes[0]


# --- declaration errors ---------------------------------------------------------


def test_duplicate_name_is_refused_by_name() -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("a")
    with pytest.raises(
        PipelineNameError, match="pipeline 'a' is already registered in graph 'g'"
    ) as info:
        graph.register_pipeline("a")
    assert str(info.value).endswith(
        "; fix: to give it other passes, graph.replace_pipeline('a', populate); to "
        "add a stage beside it, register it under a new name"
    )
    with pytest.raises(PipelineNameError, match="'a' is already registered"):
        graph.register_subgraph("a", populate=lambda sub: None)
    assert graph.names == ("a",)


@pytest.mark.parametrize("name", ["", "outer/inner"])
def test_malformed_name_is_refused(name: str) -> None:
    with pytest.raises(PipelineNameError, match="invalid pipeline name"):
        PipelineGraph().register_pipeline(name)


def test_a_bare_string_is_not_split_into_names() -> None:
    with pytest.raises(
        PipelineGraphError,
        match=r"predecessors must be a sequence of names, not the string 'a'; "
        r"fix: predecessors=\['a'\]",
    ):
        PipelineGraph().register_pipeline("b", "a")


def test_wrong_argument_types_are_graph_errors_naming_the_argument() -> None:
    graph = PipelineGraph("numba-mlir")
    untyped = cast(Callable[..., None], graph.register_pipeline)
    with pytest.raises(
        PipelineNameError,
        match="a pipeline name in graph 'numba-mlir' must be a string, got int 7",
    ):
        untyped(7)
    with pytest.raises(
        PipelineGraphError, match="successors must be a sequence of names, got int 3"
    ):
        untyped("a", (), 3)
    with pytest.raises(
        PipelineGraphError,
        match=r"populate of pipeline 'a' in graph 'numba-mlir' must be a function "
        r"taking the pipeline's OpPassManager, pipeline text, an object with "
        r"build\(\) or an xDSL ModulePass or PassPipeline, got int 3",
    ):
        untyped("a", populate=3)
    assert graph.names == ()  # nothing was registered


def test_a_failing_populate_names_its_pipeline() -> None:
    graph = PipelineGraph("numba-mlir")

    def broken(pm: OpPassManager) -> None:
        raise KeyError("no such pass")

    graph.register_pipeline("cfg-to-scf", populate=broken)
    with pytest.raises(
        PipelineGraphError,
        match="populating pipeline 'cfg-to-scf' of graph 'numba-mlir' failed: "
        "KeyError: 'no such pass'",
    ) as caught:
        graph.create_schedule()
    assert isinstance(caught.value.__cause__, KeyError)


UNKNOWN_NAME_CASES: list[tuple[str, list[Row]]] = [
    ("predecessors", [("a", [], [], []), ("b", ["nope"], [], [])]),
    ("successors", [("a", [], [], []), ("b", [], ["nope"], [])]),
    ("jump_targets", [("a", [], [], []), ("b", [], [], ["nope"])]),
]


@pytest.mark.parametrize(("field", "rows"), UNKNOWN_NAME_CASES)
def test_unknown_names_are_reported_with_the_pipeline_and_field(
    field: str, rows: list[Row]
) -> None:
    with pytest.raises(UnknownPipelineError) as info:
        table(rows).create_schedule()
    assert str(info.value) == (
        f"pipeline 'b' of graph 'table' lists 'nope' in its {field}, "
        "but no such pipeline exists (pipelines: a, b); fix: name a pipeline of "
        "graph 'table', or register 'nope' (graph.register_pipeline('nope', ...)) "
        "before create_schedule"
    )


def test_unknown_name_suggests_a_close_one() -> None:
    graph = table([("bufferization", [], [], []), ("x", ["buferization"], [], [])])
    with pytest.raises(UnknownPipelineError, match="did you mean 'bufferization'"):
        graph.create_schedule()


def test_implicit_cycle_is_named() -> None:
    graph = table([("a", [], ["b"], []), ("b", [], [], []), ("c", [], [], [])])
    graph.register_pipeline("d", ["b"], ["a"])
    with pytest.raises(PipelineCycleError) as info:
        graph.create_schedule()
    assert info.value.cycle == ("a", "b", "d", "a")
    assert "form a cycle: a -> b -> d -> a; a loop must go through jump_targets" in str(
        info.value
    )


def test_two_pipeline_cycle_from_both_sides_is_named() -> None:
    # `a` declares b as a predecessor and b declares a as one: a -> b -> a.
    graph = table([("x", [], [], []), ("a", ["b"], [], []), ("b", ["a"], [], [])])
    with pytest.raises(PipelineCycleError) as info:
        graph.create_schedule()
    assert info.value.cycle == ("a", "b", "a")
    assert "a -> b -> a" in str(info.value)


def test_self_dependency_is_a_cycle() -> None:
    with pytest.raises(PipelineCycleError) as info:
        table([("a", ["a"], [], [])]).create_schedule()
    assert info.value.cycle == ("a", "a")


def test_cycles_through_jump_targets_are_allowed() -> None:
    graph = table([("a", [], [], ["b"]), ("b", ["a"], [], ["a", "b"])])
    assert graph.create_schedule().order == ("a", "b")


@pytest.mark.parametrize("cap", [-1, "3", 2.0])
def test_a_bad_jump_cap_is_refused(cap: object) -> None:
    with pytest.raises(
        PipelineGraphError,
        match=rf"max_jumps_per_edge of graph 'g' must be an int >= 0, got "
        rf"{type(cap).__name__} {re.escape(repr(cap))}",
    ):
        PipelineGraph("g").create_schedule(max_jumps_per_edge=cast(int, cap))


# --- running and jumping --------------------------------------------------------


def test_jump_back_reruns_the_pipelines_in_between(module: ir.ModuleOp) -> None:
    graph = table(NUMBA)
    graph.register_pipeline(
        "generate",
        ["python-to-std"],
        ["numpy-to-linalg"],
        ["cfg-to-scf"],
        populate=record_then_jump("generate", "cfg-to-scf"),
    )
    schedule = graph.create_schedule()
    trace = schedule.run(module)
    assert trace.executed == (
        "frontend",
        "cfg-to-scf",
        "python-to-std",
        "generate",
        "cfg-to-scf",
        "python-to-std",
        "generate",
        "numpy-to-linalg",
        "bufferization",
        "optimization",
        "lower-to-gpu",
        "lower-to-llvm",
    )
    assert trace.jumps == (JumpTaken("generate", "cfg-to-scf"),)
    assert Record.log == list(trace.executed)
    assert JUMP_TARGET_ATTRIBUTE not in module.attributes
    assert str(trace).splitlines()[3:6] == [
        "run  generate",
        "jump generate -> cfg-to-scf",
        "run  cfg-to-scf",
    ]


def test_a_forward_jump_that_skips_in_some_orders_only_is_refused() -> None:
    # Registered as a, c, b, the jump would skip nothing; as a, b, c it skips b.
    graph = PipelineGraph()
    graph.register_pipeline("a", [], [], ["c"], populate=record_then_jump("a", "c"))
    graph.register_pipeline("b", ["a"], populate=record("b"))
    graph.register_pipeline("c", ["a"], populate=record("c"))
    with pytest.raises(AmbiguousJumpError, match=r"jump 'a' -> 'c' .* is a branch"):
        graph.create_schedule()


def test_a_forward_jump_that_skips_nothing_runs_on(module: ir.ModuleOp) -> None:
    graph = PipelineGraph()
    graph.register_pipeline("a", [], [], ["b"], populate=record_then_jump("a", "b"))
    graph.register_pipeline("b", ["a"], populate=record("b"))
    graph.register_pipeline("c", ["b"], populate=record("c"))
    assert graph.create_schedule().run(module).executed == ("a", "b", "c")


def test_a_forward_jump_may_not_skip_a_predecessor_of_its_target() -> None:
    # `c` is declared to run after `b`: a jump from `a` to `c` would break that.
    graph = PipelineGraph("g")
    graph.register_pipeline("a", [], [], ["d"], populate=record("a"))
    graph.register_pipeline("b", ["a"], populate=record("b"))
    graph.register_pipeline("c", ["a"], ["d"], populate=record("c"))
    graph.register_pipeline("d", ["b"], populate=record("d"))
    with pytest.raises(SkippedPredecessorError) as info:
        graph.create_schedule()
    assert str(info.value) == (
        "jump 'a' -> 'd' of graph 'g' may skip 'b', which is declared to run "
        "before 'd' but not before 'a'; to run one of several pipelines, declare "
        "them as alternatives with register_choice"
    )


def test_each_run_starts_from_fresh_passes(module: ir.ModuleOp, parse: Parse) -> None:
    graph = PipelineGraph()
    graph.register_pipeline("a", [], [], ["a"], populate=record_then_jump("a", "a"))
    schedule = graph.create_schedule()
    assert schedule.run(module).executed == ("a", "a")
    assert schedule.run(parse(MODULE)).executed == ("a", "a")


def test_undeclared_jump_target_aborts_the_run(module: ir.ModuleOp) -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("a", populate=record("a"))
    graph.register_pipeline("b", ["a"], [], ["a"], populate=record_then_jump("b", "c"))
    graph.register_pipeline("c", ["b"], populate=record("c"))
    with pytest.raises(UndeclaredJumpError) as info:
        graph.create_schedule().run(module)
    error = info.value
    assert isinstance(error, PassPipelineError)
    assert (error.pipeline, error.target) == ("b", "c")
    assert [d.message for d in error.errors] == [
        "pipeline 'b' set pipeline.jump_target = \"c\", which is not one of its "
        "jump targets (a)"
    ]
    assert Record.log == ["a", "b"]


def test_a_jump_requested_on_a_nested_op_fails_instead_of_being_ignored(
    module: ir.ModuleOp,
) -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("a", [], [], ["b"], populate=record("a"))
    graph.register_pipeline(
        "b",
        ["a"],
        populate=lambda pm: pm.nest("func.func").add(RequestJump("a")),
    )
    graph.register_pipeline("c", ["b"], populate=record("c"))
    with pytest.raises(UndeclaredJumpError) as info:
        graph.create_schedule().run(module)
    messages = [d.message for d in info.value.errors]
    assert messages == [
        "pipeline 'b' set pipeline.jump_target = \"a\" on a nested 'func.func' op, "
        "where no jump reads it; a jump is requested on the 'builtin.module' op the "
        "schedule runs on",
        "pipeline.jump_target set here is ignored",
    ]
    assert info.value.errors[1].notes[0].message.startswith("fix: set it on")
    assert Record.log == ["a"]  # 'c' never ran on the misdirected request


class CountedJump(OperationPass):
    """Requests a jump to `target` until the op's `counter` attribute reaches
    `limit`, then resets the counter and lets the run go on: a loop that runs
    `limit` extra iterations each time it is entered."""

    argument = "counted-jump"

    def __init__(self, counter: str, target: str, limit: int) -> None:
        super().__init__()
        self.counter = counter
        self.target = target
        self.limit = limit

    def run_on_operation(self) -> None:
        op = self.get_operation()
        found = op.attributes.get(self.counter)
        count = found.value.data if isinstance(found, IntegerAttr) else 0
        if count < self.limit:
            op.attributes[self.counter] = IntegerAttr(count + 1, i64)
            op.attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr(self.target)
        else:
            del op.attributes[self.counter]


def nested_loops(max_jumps: int) -> PipelineSchedule:
    """numba's shape: `inner` loops back to `start` 3 times per visit, and
    `outer` loops back to `start` 3 times, re-entering the inner loop."""
    graph = PipelineGraph("numba")
    graph.register_pipeline("start", populate=record("start"))
    graph.register_pipeline(
        "inner",
        ["start"],
        [],
        ["start"],
        populate=lambda pm: pm.add(CountedJump("inner", "start", 3)),
    )
    graph.register_pipeline(
        "outer",
        ["inner"],
        [],
        ["start"],
        populate=lambda pm: pm.add(CountedJump("outer", "start", 3)),
    )
    return graph.create_schedule(max_jumps_per_edge=max_jumps)


def test_a_loop_cap_counts_iterations_per_entry_into_the_loop(
    module: ir.ModuleOp,
) -> None:
    result = nested_loops(max_jumps=3).run(module)
    # 4 visits of the inner loop (1 + 3 outer iterations), 4 runs of 'start' each.
    assert Record.log == ["start"] * 16
    assert len(result.jumps) == 4 * 3 + 3


def test_a_loop_cap_still_stops_a_loop_that_runs_too_long(module: ir.ModuleOp) -> None:
    with pytest.raises(JumpLimitError) as info:
        nested_loops(max_jumps=2).run(module)
    assert info.value.pipeline == "inner"


def test_jump_from_a_pipeline_without_jump_targets_is_undeclared(
    module: ir.ModuleOp,
) -> None:
    graph = PipelineGraph()
    graph.register_pipeline("a", populate=record_then_jump("a", "a"))
    with pytest.raises(UndeclaredJumpError, match=r"jump targets \(none\)"):
        graph.create_schedule().run(module)


def test_non_string_jump_target_is_undeclared(module: ir.ModuleOp) -> None:
    class SetInteger(OperationPass):
        def run_on_operation(self) -> None:
            self.get_operation().attributes[JUMP_TARGET_ATTRIBUTE] = IntegerAttr(1, i64)

    graph = PipelineGraph()
    graph.register_pipeline(
        "a", [], [], ["a"], populate=lambda pm: pm.add(SetInteger())
    )
    with pytest.raises(UndeclaredJumpError) as info:
        graph.create_schedule().run(module)
    assert info.value.target == "1 : i64"


def test_jump_target_left_on_the_input_is_reported_before_anything_runs(
    module: ir.ModuleOp,
) -> None:
    module.attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr("a")
    graph = PipelineGraph("g")
    graph.register_pipeline("a", [], [], ["a"], populate=record("a"))
    with pytest.raises(UndeclaredJumpError) as info:
        graph.create_schedule().run(module)
    assert info.value.pipeline is None
    assert "is already set before schedule 'g' started" in str(info.value)
    assert Record.log == []


def test_runaway_loop_hits_the_default_cap(module: ir.ModuleOp) -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("a", populate=record("a"))
    graph.register_pipeline(
        "loop", ["a"], [], ["a"], populate=record_then_jump("loop", "a", times=10**6)
    )
    with pytest.raises(JumpLimitError) as info:
        graph.create_schedule().run(module)
    assert (info.value.pipeline, info.value.target) == ("loop", "a")
    assert f"after taking it {DEFAULT_MAX_JUMPS_PER_EDGE} times in a row" in str(
        info.value
    )
    assert Record.log.count("loop") == DEFAULT_MAX_JUMPS_PER_EDGE + 1


@pytest.mark.parametrize("cap", [0, 1, 3])
def test_the_cap_is_configurable(module: ir.ModuleOp, cap: int) -> None:
    graph = PipelineGraph()
    graph.register_pipeline(
        "loop", [], [], ["loop"], populate=record_then_jump("loop", "loop", 10**6)
    )
    with pytest.raises(JumpLimitError):
        graph.create_schedule(max_jumps_per_edge=cap).run(module)
    assert Record.log == ["loop"] * (cap + 1)


def test_loop_within_the_cap_completes(module: ir.ModuleOp) -> None:
    graph = PipelineGraph()
    graph.register_pipeline(
        "loop", [], [], ["loop"], populate=record_then_jump("loop", "loop", 3)
    )
    graph.register_pipeline("after", ["loop"], populate=record("after"))
    trace = graph.create_schedule(max_jumps_per_edge=3).run(module)
    assert trace.executed == ("loop", "loop", "loop", "loop", "after")


def test_the_cap_counts_each_edge_separately(module: ir.ModuleOp) -> None:
    graph = PipelineGraph()
    graph.register_pipeline("a", populate=record("a"))
    graph.register_pipeline("b", ["a"], [], ["a"], populate=record_then_jump("b", "a"))
    graph.register_pipeline("c", ["b"], [], ["a"], populate=record_then_jump("c", "a"))
    trace = graph.create_schedule(max_jumps_per_edge=1).run(module)
    assert trace.jumps == (JumpTaken("b", "a"), JumpTaken("c", "a"))


def test_a_failing_pass_stops_the_schedule_as_a_plain_pipeline_error(
    module: ir.ModuleOp,
) -> None:
    graph = PipelineGraph()
    graph.register_pipeline(
        "broken", populate=lambda pm: pm.nest("func.func").add(TestInvalidIRPass())
    )
    graph.register_pipeline("after", ["broken"], populate=record("after"))
    with pytest.raises(PassPipelineError) as info:
        graph.create_schedule().run(module)
    assert not isinstance(info.value, ScheduleRunError)
    assert any("'arith.constant' op" in d.message for d in info.value.errors)
    assert Record.log == []


# --- PassManager semantics ------------------------------------------------------


class Events(PassInstrumentation):
    def __init__(self) -> None:
        self.events: list[str] = []

    def run_before_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        if isinstance(parent.parent_pass, PipelineSchedulePass):
            self.events.append(f"stage {parent.parent_pass.current_pipeline}")

    def run_before_pass(self, pass_: Pass, op: ir.Operation) -> None:
        self.events.append(f"pass {pass_}")


def test_the_run_goes_through_the_given_pass_manager(module: ir.ModuleOp) -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("a", [], [], ["a"], populate=record_then_jump("a", "a"))
    graph.register_pipeline("b", ["a"])
    pm = PassManager()
    events = Events()
    pm.add_instrumentation(events)
    graph.create_schedule().run(module, pm)
    assert events.events == [
        "pass g",
        "stage a",
        "pass record",
        "pass request-jump",
        "stage a",
        "pass record",
        "pass request-jump",
        "stage b",
    ]
    assert pm.passes == ()


def test_the_pass_managers_verifier_setting_applies_to_stages(
    module: ir.ModuleOp,
) -> None:
    graph = PipelineGraph()
    graph.register_pipeline(
        "breaks-ir", populate=lambda pm: pm.nest("func.func").add(TestInvalidIRPass())
    )
    graph.register_pipeline("after", ["breaks-ir"], populate=record("after"))
    pm = PassManager()
    pm.enable_verifier(False)
    graph.create_schedule().run(module, pm)
    assert Record.log == ["after"]


def test_stage_dialects_are_loaded_before_the_run(
    parse: Parse, ctx: ir.Context
) -> None:
    seen: list[bool] = []

    class NeedsScf(OperationPass):
        dependent_dialects = ("scf",)

        def run_on_operation(self) -> None:
            seen.append("scf" in {d.name for d in self.get_context().loaded_dialects})

    graph = PipelineGraph()
    graph.register_pipeline("a", populate=lambda pm: pm.add(NeedsScf()))
    assert "scf" not in {d.name for d in ctx.loaded_dialects}
    graph.create_schedule().run(parse(MODULE), PassManager(context=ctx))
    assert seen == [True]


def test_the_schedule_pass_counts_pipelines_and_jumps(module: ir.ModuleOp) -> None:
    graph = PipelineGraph()
    graph.register_pipeline("a", [], [], ["a"], populate=record_then_jump("a", "a"))
    graph.register_pipeline("b", ["a"])
    runner = graph.create_schedule().as_pass()
    pm = PassManager()
    pm.add(runner)
    pm.run(module)
    assert (runner.pipelines_run, runner.jumps_taken) == (3, 1)
    assert runner.trace.executed == ("a", "a", "b")


def test_cloning_the_schedule_pass_clones_every_stage() -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("a", populate=record("a"))
    runner = graph.create_schedule().as_pass("named")
    clone = runner.clone()
    assert clone is not runner
    assert str(clone) == "named"
    original = runner.schedule.pipelines[0].body
    copied = clone.schedule.pipelines[0].body
    assert isinstance(original, OpPassManager) and isinstance(copied, OpPassManager)
    assert copied is not original
    assert copied.passes[0] is not original.passes[0]
    assert str(copied) == str(original)


def test_run_refuses_a_pass_manager_that_holds_passes(module: ir.ModuleOp) -> None:
    pm = PassManager()
    pm.add(Record("x"))
    with pytest.raises(PipelineGraphError, match=r"add schedule.as_pass\(\) to it"):
        PipelineGraph().create_schedule().run(module, pm)


def test_schedule_mixes_with_nested_function_pipelines(module: ir.ModuleOp) -> None:
    graph = PipelineGraph("mixed")
    graph.register_pipeline(
        "per-function", populate=lambda pm: pm.nest("func.func").add(Record("stage"))
    )
    graph.register_pipeline(
        "module",
        ["per-function"],
        [],
        ["per-function"],
        populate=record_then_jump("module", "per-function"),
    )
    pm = PassManager()
    pm.nest("func.func").add(Record("before"))
    pm.add(graph.create_schedule().as_pass())
    pm.nest("func.func").add(Record("after"))
    assert str(pm) == "builtin.module(func.func(record),mixed,func.func(record))"
    pm.run(module)
    assert Record.log == [
        "before@f",
        "before@g",
        "stage@f",
        "stage@g",
        "module",
        "stage@f",
        "stage@g",
        "module",
        "after@f",
        "after@g",
    ]


def test_a_schedule_anchored_on_functions_runs_per_function(parse: Parse) -> None:
    class JumpOncePerFunction(OperationPass):
        def run_on_operation(self) -> None:
            function = self.get_operation()
            if "test.visited" not in function.attributes:
                function.attributes["test.visited"] = UnitAttr()
                function.attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr("a")

    def populate(pm: OpPassManager) -> None:
        pm.add(Record("a"))
        pm.add(JumpOncePerFunction())

    graph = PipelineGraph("per-func", anchor="func.func")
    graph.register_pipeline("a", [], [], ["a"], populate=populate)
    pm = PassManager()
    pm.nest("func.func").add(graph.create_schedule().as_pass())
    module = parse(MODULE)
    pm.run(module)
    assert Record.log == ["a@f", "a@f", "a@g", "a@g"]


def test_a_module_schedule_cannot_be_nested_on_functions(module: ir.ModuleOp) -> None:
    pm = PassManager()
    pm.nest("func.func").add(PipelineGraph("mod").create_schedule().as_pass())
    with pytest.raises(PassPipelineError) as info:
        pm.run(module)
    assert [d.message for d in info.value.errors] == [
        "unable to schedule pass 'PipelineSchedule' on a PassManager intended to "
        "run on 'func.func'!"
    ]


# --- subgraphs ------------------------------------------------------------------


def subgraph_members(sub: PipelineGraph) -> None:
    sub.register_pipeline("second", ["first"], populate=record("second"))
    sub.register_pipeline("first", populate=record("first"))


def test_subgraph_runs_as_one_unit_with_its_own_order(module: ir.ModuleOp) -> None:
    graph = PipelineGraph()
    graph.register_pipeline("after", ["sub"], populate=record("after"))
    graph.register_subgraph("sub", ["before"], populate=subgraph_members)
    graph.register_pipeline("before", populate=record("before"))
    schedule = graph.create_schedule()
    assert schedule.order == ("before", "sub", "after")
    inner = schedule.pipelines[1].body
    assert isinstance(inner, PipelineSchedule)
    assert inner.order == ("first", "second")
    expected = ("before", "sub/first", "sub/second", "after")
    assert schedule.run(module).executed == expected
    as_pass = schedule.as_pass()
    stages = as_pass.stages()
    assert tuple(name for name, _ in stages) == expected
    assert as_pass.nested_pipelines() == [pm for _, pm in stages]


def test_members_may_reuse_outer_names() -> None:
    graph = PipelineGraph()
    graph.register_pipeline("first")
    graph.register_subgraph("sub", ["first"], populate=subgraph_members)
    assert graph.create_schedule().order == ("first", "sub")


@pytest.mark.parametrize("field", ["predecessors", "successors", "jump_targets"])
def test_no_edge_or_jump_enters_a_subgraph(field: str) -> None:
    graph = PipelineGraph("outer")
    graph.register_subgraph("sub", populate=subgraph_members)
    edges = {"predecessors": (), "successors": (), "jump_targets": ()} | {
        field: ["second"]
    }
    graph.register_pipeline(
        "x", edges["predecessors"], edges["successors"], edges["jump_targets"]
    )
    with pytest.raises(SubgraphBoundaryError) as info:
        graph.create_schedule()
    assert str(info.value) == (
        f"pipeline 'x' of graph 'outer' lists 'second' in its {field}, but 'second' "
        "is a member of subgraph 'sub', which runs as one unit; name 'sub' instead"
    )


@pytest.mark.parametrize("field", ["predecessors", "jump_targets"])
def test_no_edge_or_jump_leaves_a_subgraph(field: str) -> None:
    def members(sub: PipelineGraph) -> None:
        if field == "predecessors":
            sub.register_pipeline("inner", predecessors=["outside"])
        else:
            sub.register_pipeline("inner", jump_targets=["outside"])

    graph = PipelineGraph("outer")
    graph.register_pipeline("outside")
    graph.register_subgraph("sub", populate=members)
    with pytest.raises(
        SubgraphBoundaryError,
        match=(
            f"pipeline 'inner' of graph 'sub' lists 'outside' in its {field}, but "
            "'outside' belongs to the enclosing graph 'outer'"
        ),
    ):
        graph.create_schedule()


def test_jump_requested_in_the_middle_of_a_subgraph_cannot_leave_it(
    module: ir.ModuleOp,
) -> None:
    def members(sub: PipelineGraph) -> None:
        sub.register_pipeline("first", populate=record_then_jump("first", "start"))
        sub.register_pipeline("second", ["first"], populate=record("second"))

    graph = PipelineGraph()
    graph.register_pipeline("start", populate=record("start"))
    graph.register_subgraph("sub", ["start"], [], ["start"], populate=members)
    with pytest.raises(UndeclaredJumpError) as info:
        graph.create_schedule().run(module)
    assert (info.value.pipeline, info.value.target) == ("sub/first", "start")
    assert Record.log == ["start", "first"]


def test_jump_requested_at_the_end_of_a_subgraph_leaves_from_the_subgraph(
    module: ir.ModuleOp,
) -> None:
    def members(sub: PipelineGraph) -> None:
        sub.register_pipeline("first", populate=record("first"))
        sub.register_pipeline(
            "last", ["first"], populate=record_then_jump("last", "start")
        )

    graph = PipelineGraph()
    graph.register_pipeline("start", populate=record("start"))
    graph.register_subgraph("sub", ["start"], [], ["start"], populate=members)
    trace = graph.create_schedule().run(module)
    assert trace.executed == (
        "start",
        "sub/first",
        "sub/last",
        "start",
        "sub/first",
        "sub/last",
    )
    assert trace.jumps == (JumpTaken("sub", "start"),)


def test_subgraph_ending_with_a_target_it_did_not_declare_is_blamed(
    module: ir.ModuleOp,
) -> None:
    graph = PipelineGraph()
    graph.register_pipeline("start")
    graph.register_subgraph(
        "sub",
        ["start"],
        populate=lambda sub: sub.register_pipeline(
            "last", populate=record_then_jump("last", "start")
        ),
    )
    with pytest.raises(UndeclaredJumpError) as info:
        graph.create_schedule().run(module)
    assert info.value.pipeline == "sub"


def test_jumps_inside_a_subgraph_stay_inside_and_restart_their_count(
    module: ir.ModuleOp,
) -> None:
    class JumpEveryOtherRun(OperationPass):
        """Requests a jump to `a` on its 1st, 3rd, 5th... run."""

        def __init__(self) -> None:
            super().__init__()
            self.runs = 0

        def run_on_operation(self) -> None:
            self.runs += 1
            if self.runs % 2:
                self.get_operation().attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr("a")

    def members(sub: PipelineGraph) -> None:
        sub.register_pipeline("a")
        sub.register_pipeline(
            "b", ["a"], [], ["a"], populate=lambda pm: pm.add(JumpEveryOtherRun())
        )

    graph = PipelineGraph()
    graph.register_subgraph("sub", populate=members)
    graph.register_pipeline(
        "end", ["sub"], [], ["sub"], populate=record_then_jump("end", "sub")
    )
    # Once per entry into `sub`: within the cap of 1, because the count restarts.
    trace = graph.create_schedule(max_jumps_per_edge=1).run(module)
    assert trace.jumps == (
        JumpTaken("sub/b", "sub/a"),
        JumpTaken("end", "sub"),
        JumpTaken("sub/b", "sub/a"),
    )
    assert trace.executed.count("sub/b") == 4


def test_empty_subgraph_is_a_valid_anchor(module: ir.ModuleOp) -> None:
    graph = PipelineGraph()
    graph.register_subgraph("nothing", populate=lambda sub: None)
    graph.register_pipeline("a", ["nothing"], populate=record("a"))
    schedule = graph.create_schedule()
    assert schedule.pipelines[0].is_empty
    assert schedule.run(module).executed == ("a",)


# --- registered as a pipeline, and the tool -------------------------------------


@pytest.fixture
def registered() -> Iterator[PipelineSchedule]:
    graph = PipelineGraph("test-graph-loop")
    graph.register_pipeline("a", [], [], ["a"], populate=record_then_jump("a", "a"))
    graph.register_pipeline(
        "b", ["a"], [], ["a"], populate=record_then_jump("b", "nowhere")
    )
    schedule = graph.create_schedule()
    schedule.register(summary="test schedule")
    yield schedule
    registry.unregister("test-graph-loop")


def test_registered_schedule_round_trips_through_pipeline_text(
    registered: PipelineSchedule,
) -> None:
    text = "builtin.module(func.func(test-function-pass),test-graph-loop)"
    pm = parse_pass_pipeline(text)
    assert str(pm) == text
    assert str(parse_pass_pipeline(str(pm))) == text
    info = registry.lookup_pipeline("test-graph-loop")
    assert info is not None and info.summary == "test schedule"
    with pytest.raises(
        RegistrationError, match="'test-graph-loop' is already registered"
    ):
        registered.register()


def test_registered_schedule_runs_with_its_jumps(
    registered: PipelineSchedule, module: ir.ModuleOp
) -> None:
    pm = PassManager()
    pm.assign(parse_pass_pipeline("builtin.module(test-graph-loop)"))
    with pytest.raises(PassPipelineError) as info:
        pm.run(module)
    assert Record.log == ["a", "a", "b"]
    assert [d.message for d in info.value.errors] == [
        "pipeline 'b' set pipeline.jump_target = \"nowhere\", which is not one of "
        "its jump targets (a)"
    ]


def test_a_registered_schedule_takes_its_jump_cap_as_an_option(
    registered: PipelineSchedule, module: ir.ModuleOp
) -> None:
    text = "builtin.module(test-graph-loop{max-jumps=0})"
    pm = parse_pass_pipeline(text)
    assert str(pm) == text
    default = "builtin.module(test-graph-loop{max-jumps=10})"
    assert str(parse_pass_pipeline(default)) == "builtin.module(test-graph-loop)"
    run = PassManager()
    run.assign(pm)
    with pytest.raises(PassPipelineError) as info:
        run.run(module)
    assert "reached the cap of 0 jumps per edge" in info.value.errors[0].message
    assert Record.log == ["a"]
    with pytest.raises(PassflowError, match="'-1' value invalid for uint argument"):
        parse_pass_pipeline("builtin.module(test-graph-loop{max-jumps=-1})")


def test_passflow_opt_runs_a_registered_schedule(
    registered: PipelineSchedule, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(MODULE)
    status = opt.main([str(source), "--pass-pipeline=builtin.module(test-graph-loop)"])
    captured = capsys.readouterr()
    assert status == 1
    assert Record.log == ["a", "a", "b"]
    assert captured.out == ""
    assert captured.err == (
        f"{source}:0:0: error: pipeline 'b' set pipeline.jump_target = \"nowhere\", "
        "which is not one of its jump targets (a)\n"
    )


def test_pass_prints_the_numbered_schedule_for_dumps() -> None:
    graph = PipelineGraph("dumped")
    graph.register_pipeline("a", [], [], ["a"], populate=record("a"))
    graph.register_subgraph(
        "sub", ["a"], populate=lambda sub: sub.register_pipeline("inner")
    )
    runner = graph.create_schedule(max_jumps_per_edge=4).as_pass("my-compiler")
    assert str(runner) == "my-compiler"
    assert runner.pretty(2) == (
        "  my-compiler: pipeline schedule, at most 4 jumps per edge {\n"
        "    1. a: builtin.module(record) [jumps: a]\n"
        "    2. sub: subgraph {\n"
        "      2.1. inner: builtin.module()\n"
        "    }\n"
        "  }"
    )
    assert (
        str(runner.schedule)
        == runner.schedule.pretty()
        == (runner.pretty().replace("my-compiler:", "dumped:", 1))
    )


# --- export ---------------------------------------------------------------------


def export_members(sub: PipelineGraph) -> None:
    sub.register_pipeline("x")
    sub.register_pipeline("y", ["x"], [], ["x"])


def export_graph() -> PipelineSchedule:
    graph = PipelineGraph("export")
    graph.register_pipeline("start", populate=record("start"))
    graph.register_subgraph("sub", ["start"], [], ["start"], populate=export_members)
    graph.register_pipeline("end", ["sub"], populate=record("end"))
    return graph.create_schedule()


def test_dot_has_clusters_dependencies_and_jumps() -> None:
    assert export_graph().to_dot() == (
        'digraph "export" {\n'
        "  compound=true;\n"
        "  node [shape=box];\n"
        '  "start" [label="1. start", tooltip="builtin.module(record)"];\n'
        '  subgraph "cluster_sub" {\n'
        '    label="2. sub";\n'
        '    "sub/x" [label="2.1. x", tooltip="builtin.module()", style=dashed];\n'
        '    "sub/y" [label="2.2. y", tooltip="builtin.module()", style=dashed];\n'
        '    "sub/x" -> "sub/y";\n'
        '    "sub/y" -> "sub/x" [style=dashed, color=blue, fontcolor=blue, '
        'constraint=false, label="jump"];\n'
        "  }\n"
        '  "end" [label="3. end", tooltip="builtin.module(record)"];\n'
        '  "start" -> "sub/x" [lhead="cluster_sub"];\n'
        '  "sub/y" -> "end" [ltail="cluster_sub"];\n'
        '  "sub/y" -> "start" [style=dashed, color=blue, fontcolor=blue, '
        'constraint=false, label="jump", ltail="cluster_sub"];\n'
        "}\n"
    )


def test_json_lists_pipelines_in_order_with_every_edge() -> None:
    data = json.loads(export_graph().to_json())
    assert data == {
        "name": "export",
        "anchor": "builtin.module",
        "max_jumps_per_edge": DEFAULT_MAX_JUMPS_PER_EDGE,
        "pipelines": [
            {
                "name": "start",
                "position": 1,
                "kind": "pipeline",
                "passes": "builtin.module(record)",
            },
            {
                "name": "sub",
                "position": 2,
                "kind": "subgraph",
                "pipelines": [
                    {
                        "name": "x",
                        "position": 1,
                        "kind": "pipeline",
                        "passes": "builtin.module()",
                    },
                    {
                        "name": "y",
                        "position": 2,
                        "kind": "pipeline",
                        "passes": "builtin.module()",
                    },
                ],
                "edges": [
                    {"kind": "dependency", "from": "x", "to": "y"},
                    {"kind": "jump", "from": "y", "to": "x"},
                ],
            },
            {
                "name": "end",
                "position": 3,
                "kind": "pipeline",
                "passes": "builtin.module(record)",
            },
        ],
        "edges": [
            {"kind": "dependency", "from": "start", "to": "sub"},
            {"kind": "dependency", "from": "sub", "to": "end"},
            {"kind": "jump", "from": "sub", "to": "start"},
        ],
    }


def test_export_does_not_depend_on_registration_order_of_edges() -> None:
    one = table([("a", [], ["b"], []), ("b", [], [], ["a"]), ("c", ["a", "b"], [], [])])
    two = table([("a", [], [], []), ("b", ["a"], ["c"], ["a"]), ("c", ["a"], [], [])])
    assert one.create_schedule().to_json() == two.create_schedule().to_json()
    assert one.create_schedule().to_dot() == two.create_schedule().to_dot()


def test_dump_pipeline_graphs_finds_nested_schedules() -> None:
    pm = OpPassManager("builtin.module")
    pm.add(export_graph().as_pass())
    pm.nest("builtin.module").add(table(TPP).create_schedule().as_pass())
    graphs = json.loads(dump_pipeline_graphs(pm, "json"))
    assert [g["name"] for g in graphs] == ["export", "table"]
    dot = dump_pipeline_graphs(pm, "dot")
    assert dot == export_graph().to_dot() + table(TPP).create_schedule().to_dot()
    assert dump_pipeline_graphs(OpPassManager(), "json") == "[]\n"


# --- the examples ---------------------------------------------------------------


def run_example(name: str) -> str:
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def example_trace(out: str, title: str) -> list[str]:
    return (
        out.split(f"== executed sequence for {title}\n")[1]
        .split("\n\n")[0]
        .splitlines()
    )


def test_numba_example_loops_back_once_and_offloads_only_gpu_modules() -> None:
    out = run_example("graph_numba.py")
    assert (
        "  4. numpy-to-linalg: builtin.module(numba-numpy-to-linalg) [jumps: cfg-to-scf]"
        in out
    )
    assert "  7. gpu-offload: choice builtin.module(), select=offload_target {" in out
    loop = [
        "run  frontend",
        "run  cfg-to-scf",
        "run  python-to-std",
        "run  numpy-to-linalg",
        "jump numpy-to-linalg -> cfg-to-scf",
        "run  cfg-to-scf",
        "run  python-to-std",
        "run  numpy-to-linalg",
        "run  bufferization",
        "run  optimization",
        "run  gpu-offload",
    ]
    assert example_trace(out, "numba.target = 'cpu'") == [
        *loop,
        "pick gpu-offload -> host-only",
        "run  host-only",
        "run  lower-to-llvm",
    ]
    assert example_trace(out, "numba.target = 'gpu'") == [
        *loop,
        "pick gpu-offload -> lower-to-gpu",
        "run  lower-to-gpu",
        "run  lower-to-llvm",
    ]
    assert "func.func @linalg_body() attributes {numba.lowered}" in out
    assert "    cse on @linalg_body" in out  # the stage given as pipeline text


def test_tpp_example_takes_one_branch_per_target() -> None:
    out = run_example("graph_tpp.py")
    tail = ["run  bufferization", "run  linalg-lowering", "run  lower-to-llvm"]
    assert example_trace(out, "tpp.target = 'gpu'") == [
        "run  frontend",
        "run  device",
        "pick device -> gpu-pipeline",
        "run  gpu-pipeline",
        *tail,
    ]
    assert example_trace(out, "tpp.target = 'cpu'") == [
        "run  frontend",
        "run  device",
        "pick device -> default-pipeline",
        "run  default-pipeline",
        *tail,
    ]


def numba_graph(order: Sequence[int]) -> PipelineGraph:
    """The RFC's numba-mlir table, `lower-to-gpu` optional, registered in `order`
    (indices into the rows, the choice and `host-only` last)."""
    rows: list[Row] = [*NUMBA, ("host-only", [], [], [])]
    graph = PipelineGraph("numba-mlir")
    for i in order:
        if i == len(rows):
            graph.register_choice(
                "gpu-offload",
                ["lower-to-gpu", "host-only"],
                select=lambda op: (
                    "lower-to-gpu" if "gpu" in op.attributes else "host-only"
                ),
            )
            continue
        name, predecessors, successors, jumps = rows[i]
        populate = (
            record_then_jump(name, "cfg-to-scf")
            if name == "numpy-to-linalg"
            else record(name)
        )
        graph.register_pipeline(name, predecessors, successors, jumps, populate)
    return graph


def test_numba_graph_runs_the_same_in_every_registration_order(parse: Parse) -> None:
    count = len(NUMBA) + 2
    rotations = [[(i + k) % count for i in range(count)] for k in range(count)]
    orders = [*rotations, *(list(reversed(r)) for r in rotations)]
    runs: set[tuple[str, str]] = set()
    for order in orders:
        schedule = numba_graph(order).create_schedule()
        cpu = str(schedule.run(parse(MODULE)))
        gpu = str(schedule.run(parse("builtin.module attributes {gpu} {\n}")))
        runs.add((cpu, gpu))
    assert len(runs) == 1
    cpu, gpu = runs.pop()
    assert "jump numpy-to-linalg -> cfg-to-scf" in cpu
    assert "pick gpu-offload -> host-only" in cpu and "lower-to-gpu" not in cpu
    assert "pick gpu-offload -> lower-to-gpu\nrun  lower-to-gpu" in gpu


# --- visibility: stages by name in timing and statistics ----------------------------


def stage_report_graph() -> PipelineSchedule:
    def members(sub: PipelineGraph) -> None:
        sub.register_pipeline("inner", populate=record("inner"))

    graph = PipelineGraph("stages")
    graph.register_pipeline("a", [], [], ["a"], populate=record_then_jump("a", "a"))
    graph.register_subgraph("sub", ["a"], populate=members)
    graph.register_pipeline("b", ["sub"], populate=record("b"))
    return graph.create_schedule()


def test_timing_names_each_stage(module: ir.ModuleOp) -> None:
    out = io.StringIO()
    pm = PassManager()
    pm.enable_timing(stream=out)
    stage_report_graph().run(module, pm)
    names = [
        line.split(")  ", 1)[1] for line in out.getvalue().splitlines() if ")  " in line
    ]
    assert names[:9] == [
        "PipelineSchedule",
        "  'a' Stage",  # both runs of `a` in one line
        "    Record",
        "    RequestJump",
        "  'sub/inner' Stage",
        "    Record",
        "  'b' Stage",
        "    Record",
        "Rest",
    ]


def test_statistics_name_each_stage(module: ir.ModuleOp) -> None:
    out = io.StringIO()
    pm = PassManager()
    pm.enable_statistics(stream=out)
    stage_report_graph().run(module, pm)
    report = out.getvalue().split("===\n", 2)[2]
    assert report.splitlines() == [
        "PipelineSchedule",
        "  (S) 1 jumps-taken   - Number of jumps taken",
        "  (S) 4 pipelines-run - Number of pipelines run",
        "  'a' Stage",
        "    Record",
        "    RequestJump",
        "  'sub/inner' Stage",
        "    Record",
        "  'b' Stage",
        "    Record",
        "",
    ]
