"""Structured choice in a PipelineGraph: exactly one alternative runs, then the join.

The TPP graph of the "PipelineGraph" RFC (a GPU or a default branch between
`frontend` and `bufferization`) must run the same way whatever order its
pipelines are registered in, which plain forward jumps could not guarantee.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import pytest
from xdsl.dialects.builtin import StringAttr

from passflow import OperationPass, OpPassManager, ir
from passflow.graph import (
    JUMP_TARGET_ATTRIBUTE,
    AlternativeChosen,
    ChoiceError,
    ChoiceSelectionError,
    JumpTaken,
    PipelineGraph,
    PipelineGraphError,
    SkippedPredecessorError,
    UndeclaredJumpError,
)

Parse = Callable[[str], ir.ModuleOp]

TEMPLATE = """\
builtin.module attributes {{tpp.target = "{target}"}} {{
  func.func @matmul() {{
    func.return
  }}
}}
"""


class Record(OperationPass):
    """Appends `label` to `log` each time it runs."""

    argument = "record"
    log: ClassVar[list[str]] = []

    def __init__(self, label: str) -> None:
        super().__init__()
        self.label = label

    def run_on_operation(self) -> None:
        Record.log.append(self.label)


class PickByTarget(OperationPass):
    """Sets `pipeline.jump_target` to the branch for the module's `tpp.target`."""

    argument = "pick-by-target"

    def run_on_operation(self) -> None:
        module = self.get_operation()
        gpu = module.attributes.get("tpp.target") == StringAttr("gpu")
        module.attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr(
            "gpu-pipeline" if gpu else "default-pipeline"
        )


class SetJumpTarget(OperationPass):
    """Sets `pipeline.jump_target` to `target` the first `times` times it runs."""

    argument = "set-jump-target"

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


def record(label: str) -> Callable[[OpPassManager], None]:
    return lambda pm: pm.add(Record(label))


def target_of(op: ir.Operation) -> str:
    """The `select` of the TPP choice: the branch for the module's `tpp.target`."""
    gpu = op.attributes.get("tpp.target") == StringAttr("gpu")
    return "gpu-pipeline" if gpu else "default-pipeline"


Register = Callable[[PipelineGraph], None]


def tpp_registrations(by: str) -> dict[str, Register]:
    """The RFC's TPP table, one registration per name, with the two branches
    declared as alternatives of `device` (picked by a pass, or by `select`)."""

    def pipeline(
        name: str, predecessors: Sequence[str] = (), successors: Sequence[str] = ()
    ) -> Register:
        return lambda g: g.register_pipeline(
            name, predecessors, successors, populate=record(name)
        )

    def choice(g: PipelineGraph) -> None:
        if by == "pass":
            g.register_choice(
                "device",
                ["gpu-pipeline", "default-pipeline"],
                populate=lambda pm: pm.add(PickByTarget()),
            )
        else:
            g.register_choice(
                "device", ["gpu-pipeline", "default-pipeline"], select=target_of
            )

    return {
        "frontend": pipeline("frontend"),
        "device": choice,
        "gpu-pipeline": pipeline("gpu-pipeline", ["frontend"], ["bufferization"]),
        "default-pipeline": pipeline(
            "default-pipeline", ["frontend"], ["bufferization"]
        ),
        "bufferization": pipeline("bufferization", [], ["linalg-lowering"]),
        "linalg-lowering": pipeline("linalg-lowering", [], ["lower-to-llvm"]),
        "lower-to-llvm": pipeline("lower-to-llvm"),
    }


def tpp_graph(order: Sequence[str], by: str) -> PipelineGraph:
    graph = PipelineGraph("tpp-mlir")
    registrations = tpp_registrations(by)
    for name in order:
        registrations[name](graph)
    return graph


TPP_NAMES = list(tpp_registrations("pass"))
BRANCH_ORDERS = [
    TPP_NAMES,
    # The branches swapped, the choice registered after both of them.
    [
        "frontend",
        "default-pipeline",
        "gpu-pipeline",
        "device",
        "bufferization",
        "linalg-lowering",
        "lower-to-llvm",
    ],
    list(reversed(TPP_NAMES)),
]


@pytest.mark.parametrize("by", ["pass", "select"])
@pytest.mark.parametrize(
    ("target", "branch"), [("gpu", "gpu-pipeline"), ("cpu", "default-pipeline")]
)
@pytest.mark.parametrize("order", BRANCH_ORDERS, ids=["rfc", "swapped", "reversed"])
def test_exactly_one_branch_runs_whatever_the_registration_order(
    parse: Parse, order: list[str], by: str, target: str, branch: str
) -> None:
    schedule = tpp_graph(order, by).create_schedule()
    assert schedule.order == (
        "frontend",
        "device",
        "bufferization",
        "linalg-lowering",
        "lower-to-llvm",
    )
    module = parse(TEMPLATE.format(target=target))
    trace = schedule.run(module)
    assert Record.log == [
        "frontend",
        branch,
        "bufferization",
        "linalg-lowering",
        "lower-to-llvm",
    ]
    assert trace.choices == (AlternativeChosen("device", branch),)
    assert trace.executed == (
        "frontend",
        "device",
        branch,
        "bufferization",
        "linalg-lowering",
        "lower-to-llvm",
    )
    assert trace.jumps == ()
    assert JUMP_TARGET_ATTRIBUTE not in module.attributes


def test_every_registration_order_of_the_tpp_graph_gives_the_same_runs(
    parse: Parse,
) -> None:
    runs: set[tuple[str, str]] = set()
    moved = ["device", "gpu-pipeline", "default-pipeline", "bufferization"]
    for middle in itertools.permutations(moved):
        order = ["lower-to-llvm", *middle, "frontend", "linalg-lowering"]
        schedule = tpp_graph(order, "pass").create_schedule()
        gpu = str(schedule.run(parse(TEMPLATE.format(target="gpu"))))
        cpu = str(schedule.run(parse(TEMPLATE.format(target="cpu"))))
        runs.add((gpu, cpu))
    assert len(runs) == 1
    gpu, cpu = runs.pop()
    assert "pick device -> gpu-pipeline" in gpu and "default-pipeline" not in gpu
    assert "pick device -> default-pipeline" in cpu and "gpu-pipeline" not in cpu


def test_the_old_jump_over_a_branch_is_refused_naming_the_edge() -> None:
    # The first round's TPP: `gpu-pipeline` jumped over `default-pipeline`, so
    # with `default-pipeline` registered first, both branches ran on a CPU module.
    # Refused in that order too, where this schedule's jump skips nothing.
    graph = PipelineGraph("tpp-mlir")
    graph.register_pipeline("frontend", jump_targets=["default-pipeline"])
    graph.register_pipeline("default-pipeline", ["frontend"], ["bufferization"])
    graph.register_pipeline(
        "gpu-pipeline", ["frontend"], ["bufferization"], ["bufferization"]
    )
    graph.register_pipeline("bufferization")
    with pytest.raises(SkippedPredecessorError) as info:
        graph.create_schedule()
    assert str(info.value) == (
        "jump 'gpu-pipeline' -> 'bufferization' of graph 'tpp-mlir' may skip "
        "'default-pipeline', which is declared to run before 'bufferization' but "
        "not before 'gpu-pipeline'; to run one of several pipelines, declare them "
        "as alternatives with register_choice"
    )


def test_edges_naming_an_alternative_order_its_choice() -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("late", ["gpu"])  # "after gpu": after the join
    graph.register_choice("device", ["gpu", "cpu"], select=lambda op: "cpu")
    graph.register_pipeline("gpu", ["early"])
    graph.register_pipeline("cpu")
    graph.register_pipeline("early")
    schedule = graph.create_schedule()
    assert schedule.order == ("early", "device", "late")
    assert schedule.index("gpu") == schedule.index("device") == 1


# --- declaration errors -----------------------------------------------------------


def test_an_edge_between_two_alternatives_is_refused_naming_it() -> None:
    graph = PipelineGraph("g")
    graph.register_choice("device", ["gpu", "cpu"], select=lambda op: "cpu")
    graph.register_pipeline("gpu", successors=["cpu"])
    graph.register_pipeline("cpu")
    with pytest.raises(ChoiceError) as info:
        graph.create_schedule()
    assert str(info.value) == (
        "pipeline 'gpu' of graph 'g' lists 'cpu' in its successors, but both are "
        "alternatives of choice 'device', of which exactly one runs; order them "
        "against the choice 'device' instead"
    )


def test_an_edge_between_a_choice_and_its_alternative_is_refused() -> None:
    graph = PipelineGraph("g")
    graph.register_choice("device", ["gpu", "cpu"], select=lambda op: "cpu")
    graph.register_pipeline("gpu", ["device"])
    graph.register_pipeline("cpu")
    with pytest.raises(
        ChoiceError,
        match="pipeline 'gpu' of graph 'g' lists 'device' in its predecessors, but "
        "'gpu' is an alternative of choice 'device' and runs inside it",
    ):
        graph.create_schedule()


def test_a_jump_from_one_alternative_to_another_is_refused() -> None:
    graph = PipelineGraph("g")
    graph.register_choice("device", ["gpu", "cpu"], select=lambda op: "cpu")
    graph.register_pipeline("gpu")
    graph.register_pipeline("cpu", jump_targets=["gpu"])
    with pytest.raises(ChoiceError) as info:
        graph.create_schedule()
    assert str(info.value) == (
        "jump 'cpu' -> 'gpu' of graph 'g' would run both 'cpu' and 'gpu', "
        "alternatives of choice 'device' of which exactly one runs"
    )


def test_a_jump_into_an_alternative_is_refused() -> None:
    graph = PipelineGraph("g")
    graph.register_choice("device", ["gpu", "cpu"], ["start"], select=lambda op: "cpu")
    graph.register_pipeline("gpu")
    graph.register_pipeline("cpu")
    graph.register_pipeline("end", ["device"], jump_targets=["gpu"])
    graph.register_pipeline("start")
    with pytest.raises(ChoiceError) as info:
        graph.create_schedule()
    assert str(info.value) == (
        "jump 'end' -> 'gpu' of graph 'g' enters 'gpu', an alternative of choice "
        "'device', without the choice picking it; jump to 'device' instead"
    )


@pytest.mark.parametrize(
    ("alternatives", "message"),
    [
        (
            ["gpu"],
            "choice 'device' of graph 'g' needs at least two alternatives, got 1",
        ),
        (["gpu", "device"], "choice 'device' of graph 'g' lists itself among"),
        ("gpu", r"alternatives must be a sequence of names, not the string 'gpu'"),
    ],
)
def test_malformed_choices_are_refused_when_registered(
    alternatives: list[str], message: str
) -> None:
    graph = PipelineGraph("g")
    with pytest.raises(PipelineGraphError, match=message):
        graph.register_choice("device", alternatives, select=lambda op: "gpu")
    assert graph.names == ()


def test_a_choice_needs_a_way_to_pick() -> None:
    with pytest.raises(
        ChoiceError,
        match="choice 'device' of graph 'g' has no way to pick an alternative; give "
        "it populate",
    ):
        PipelineGraph("g").register_choice("device", ["gpu", "cpu"])


def test_an_alternative_belongs_to_one_choice_only() -> None:
    graph = PipelineGraph("g")
    graph.register_choice("one", ["a", "b"], select=lambda op: "a")
    graph.register_choice("two", ["b", "c"], select=lambda op: "b")
    for name in "abc":
        graph.register_pipeline(name)
    with pytest.raises(
        ChoiceError,
        match="choice 'two' of graph 'g' lists 'b', which is already an alternative "
        "of choice 'one'",
    ):
        graph.create_schedule()


def test_an_unknown_alternative_is_named() -> None:
    graph = PipelineGraph("g")
    graph.register_choice("device", ["gpu", "cpux"], select=lambda op: "gpu")
    graph.register_pipeline("gpu")
    graph.register_pipeline("cpu")
    with pytest.raises(
        PipelineGraphError,
        match="pipeline 'device' of graph 'g' lists 'cpux' in its alternatives, but "
        "no such pipeline exists; did you mean 'cpu'",
    ):
        graph.create_schedule()


# --- run-time errors --------------------------------------------------------------


Pick = Callable[[ir.Operation], str]


def choice_graph(
    populate: Callable[[OpPassManager], None] | None = None,
    select: Pick | None = None,
) -> PipelineGraph:
    graph = PipelineGraph("g")
    graph.register_choice("device", ["gpu", "cpu"], populate=populate, select=select)
    graph.register_pipeline("gpu", populate=record("gpu"))
    graph.register_pipeline("cpu", populate=record("cpu"))
    graph.register_pipeline("end", ["device"], populate=record("end"))
    return graph


def picks(value: str) -> Callable[[OpPassManager], None]:
    return lambda pm: pm.add(SetJumpTarget(value))


def returns(value: str) -> Pick:
    return lambda op: value


def raises(op: ir.Operation) -> str:
    raise KeyError("x")


@pytest.mark.parametrize(
    ("choice", "message"),
    [
        (
            {"populate": picks("npu")},
            "choice 'device' set pipeline.jump_target = \"npu\", which is not one of "
            "its alternatives (gpu, cpu)",
        ),
        (
            {"select": returns("npu")},
            "choice 'device' select returned 'npu', which is not one of its "
            "alternatives (gpu, cpu)",
        ),
        (
            {"populate": record("pick")},
            "choice 'device' picked nothing (its passes did not set "
            "pipeline.jump_target), which is not one of its alternatives (gpu, cpu)",
        ),
        (
            {"select": raises},
            "select of choice 'device' raised KeyError: 'x'",
        ),
    ],
)
def test_a_choice_that_picks_no_alternative_aborts_the_run(
    parse: Parse, choice: dict[str, Any], message: str
) -> None:
    with pytest.raises(ChoiceSelectionError) as info:
        choice_graph(**choice).create_schedule().run(parse(TEMPLATE.format(target="x")))
    assert [d.message for d in info.value.errors] == [message]
    assert info.value.pipeline == "device"
    assert (
        "gpu" not in Record.log and "cpu" not in Record.log and "end" not in Record.log
    )


def test_the_choices_pass_wins_over_select(parse: Parse) -> None:
    graph = choice_graph(populate=picks("gpu"), select=returns("cpu"))
    trace = graph.create_schedule().run(parse(TEMPLATE.format(target="x")))
    assert trace.choices == (AlternativeChosen("device", "gpu"),)
    assert Record.log == ["gpu", "end"]


def test_an_alternative_may_jump_back_and_the_choice_picks_again(parse: Parse) -> None:
    def cpu(pm: OpPassManager) -> None:
        pm.add(Record("cpu"))
        pm.add(SetJumpTarget("start"))

    graph = PipelineGraph("g")
    graph.register_pipeline("start", populate=record("start"))
    graph.register_choice("device", ["gpu", "cpu"], ["start"], select=lambda op: "cpu")
    graph.register_pipeline("gpu", populate=record("gpu"))
    graph.register_pipeline("cpu", jump_targets=["start"], populate=cpu)
    graph.register_pipeline("end", ["device"], populate=record("end"))
    trace = graph.create_schedule().run(parse(TEMPLATE.format(target="x")))
    assert Record.log == ["start", "cpu", "start", "cpu", "end"]
    assert trace.jumps == (JumpTaken("cpu", "start"),)
    assert str(trace).splitlines()[:5] == [
        "run  start",
        "run  device",
        "pick device -> cpu",
        "run  cpu",
        "jump cpu -> start",
    ]


def test_an_alternative_may_be_a_subgraph(parse: Parse) -> None:
    def members(sub: PipelineGraph) -> None:
        sub.register_pipeline("outline", populate=record("outline"))
        sub.register_pipeline("to-nvvm", ["outline"], populate=record("to-nvvm"))

    graph = PipelineGraph("g")
    graph.register_choice("device", ["gpu", "cpu"], select=lambda op: "gpu")
    graph.register_subgraph("gpu", populate=members)
    graph.register_pipeline("cpu", populate=record("cpu"))
    trace = graph.create_schedule().run(parse(TEMPLATE.format(target="x")))
    assert trace.executed == ("device", "gpu/outline", "gpu/to-nvvm")
    assert Record.log == ["outline", "to-nvvm"]


# --- printing and export ------------------------------------------------------------


def test_a_choice_prints_and_exports_with_its_alternatives() -> None:
    graph = tpp_graph(TPP_NAMES[:4], "pass")
    graph.register_pipeline("bufferization", populate=record("bufferization"))
    schedule = graph.create_schedule()
    assert str(schedule) == (
        "tpp-mlir: pipeline schedule, at most 10 jumps per edge {\n"
        "  1. frontend: builtin.module(record)\n"
        "  2. device: choice builtin.module(pick-by-target) {\n"
        "    2.1. gpu-pipeline: builtin.module(record)\n"
        "    2.2. default-pipeline: builtin.module(record)\n"
        "  }\n"
        "  3. bufferization: builtin.module(record)\n"
        "}"
    )
    data = json.loads(schedule.to_json())
    assert data["pipelines"][1] == {
        "name": "device",
        "position": 2,
        "kind": "choice",
        "passes": "builtin.module(pick-by-target)",
        "select": None,
        "alternatives": [
            {
                "name": "gpu-pipeline",
                "kind": "pipeline",
                "passes": "builtin.module(record)",
            },
            {
                "name": "default-pipeline",
                "kind": "pipeline",
                "passes": "builtin.module(record)",
            },
        ],
    }
    assert data["edges"] == [
        {"kind": "dependency", "from": "frontend", "to": "device"},
        {"kind": "dependency", "from": "device", "to": "bufferization"},
    ]
    dot = schedule.to_dot()
    assert '  subgraph "cluster_device" {\n    label="2. device";\n' in dot
    assert '"device" -> "gpu-pipeline" [style=dotted, label="pick"];' in dot
    assert '"frontend" -> "device" [lhead="cluster_device"];' in dot
    select = tpp_graph(TPP_NAMES[:4], "select")
    select.register_pipeline("bufferization")
    assert "2. device: choice builtin.module(), select=target_of {" in str(
        select.create_schedule()
    )


def test_asking_for_an_alternative_before_the_choice_says_how_to_pick_it(
    parse: Parse,
) -> None:
    graph = choice_graph(select=returns("cpu"))
    graph.register_pipeline("start", successors=["device"], populate=picks("gpu"))
    with pytest.raises(UndeclaredJumpError) as info:
        graph.create_schedule().run(parse(TEMPLATE.format(target="x")))
    [error] = info.value.errors
    assert error.message == (
        "pipeline 'start' set pipeline.jump_target = \"gpu\", which is not one of its "
        "jump targets (none)"
    )
    assert [note.message for note in error.notes] == [
        "'gpu' is an alternative of choice 'device': a pass of the choice's own "
        "pipeline picks it, or its select"
    ]
