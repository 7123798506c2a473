"""A graph that `create_schedule` accepts means the same in every registration
order: plain jumps that branch, go either way, or loop over a pipeline declared
nowhere near the loop are refused, and a property test permutes the registration
orders of random graphs with jumps."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import StringAttr

from passflow import OperationPass, OpPassManager, ir
from passflow.graph import (
    JUMP_TARGET_ATTRIBUTE,
    AmbiguousJumpError,
    PipelineGraph,
    PipelineGraphError,
    PopulatePipeline,
    ScheduleRunError,
)

MODULE = "func.func @f() {\n  func.return\n}\n"


class Scripted(OperationPass):
    """Logs `label`, and on its n-th visit (from 0) requests `script[n]`, if any."""

    argument = "test-orders-scripted"
    log: ClassVar[list[str]] = []

    def __init__(self, label: str, script: Sequence[str | None]) -> None:
        super().__init__()
        self.label = label
        self.script = tuple(script)
        self.visits = 0

    def run_on_operation(self) -> None:
        Scripted.log.append(self.label)
        if self.visits < len(self.script):
            target = self.script[self.visits]
            if target is not None:
                attributes = self.get_operation().attributes
                attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr(target)
        self.visits += 1


def scripted(label: str, *script: str | None) -> PopulatePipeline:
    def populate(pm: OpPassManager) -> None:
        pm.add(Scripted(label, script))

    return populate


Row = tuple[str, Sequence[str], Sequence[str], Sequence[str]]
"""`name: [predecessors], [successors], [jumps]`."""


def graph_of(
    rows: Sequence[Row], scripts: dict[str, Sequence[str | None]]
) -> PipelineGraph:
    graph = PipelineGraph("g")
    for name, predecessors, successors, jumps in rows:
        populate = scripted(name, *scripts.get(name, ()))
        graph.register_pipeline(name, predecessors, successors, jumps, populate)
    return graph


# --- the goto-branch form and its cousins are refused in every order ---------------

TPP_GOTO: list[Row] = [
    ("frontend", [], [], ["gpu-pipeline", "default-pipeline"]),
    ("gpu-pipeline", ["frontend"], ["bufferization"], []),
    ("default-pipeline", ["frontend"], ["bufferization"], []),
    ("bufferization", [], ["lower-to-llvm"], []),
    ("lower-to-llvm", [], [], []),
]


@pytest.mark.parametrize("order", list(itertools.permutations(range(5))))
def test_the_rfcs_branch_by_jump_targets_is_refused_in_every_order(
    order: tuple[int, ...],
) -> None:
    # Accepted before: a GPU module ran both branches in one order, a CPU
    # module in the other.
    rows = [TPP_GOTO[i] for i in order]
    graph = graph_of(rows, {"frontend": ["gpu-pipeline"]})
    with pytest.raises(AmbiguousJumpError) as info:
        graph.create_schedule()
    message = str(info.value)
    assert "of graph 'g' is a branch: '" in message
    assert "register_choice" in message
    assert "'gpu-pipeline'" in message and "'default-pipeline'" in message


EITHER_WAY: list[Row] = [("a", [], [], ["b"]), ("b", [], [], [])]

NUMBA_LOOSE: list[Row] = [
    # numba's graph with `bufferization` free: registered between `cfg-to-scf`
    # and `numpy-to-linalg`, the jump back would rerun it.
    ("cfg-to-scf", [], [], []),
    ("python-to-std", ["cfg-to-scf"], [], []),
    ("numpy-to-linalg", ["python-to-std"], [], ["cfg-to-scf"]),
    ("bufferization", [], [], []),
]


@pytest.mark.parametrize(
    ("rows", "told"),
    [
        (
            TPP_GOTO,
            "jump 'frontend' -> 'gpu-pipeline' of graph 'g' is a branch: "
            "'default-pipeline' is declared to run neither before 'frontend' nor "
            "after 'gpu-pipeline', so whether the jump skips it depends on the "
            "registration order; to run one of several pipelines, declare them as "
            "alternatives with register_choice, e.g. graph.register_choice("
            "'frontend-branch', ['gpu-pipeline', 'default-pipeline', ...], "
            "predecessors=['frontend'], select=...), or declare 'default-pipeline' "
            "before 'frontend' or after 'gpu-pipeline'",
        ),
        (
            EITHER_WAY,
            "jump 'a' -> 'b' of graph 'g' goes back in some registration orders and "
            "ahead in others, since neither 'a' nor 'b' is declared to run before "
            "the other; declare the order: 'b' in the predecessors of 'a' for a loop "
            "back, or 'a' in the predecessors of 'b' for a jump ahead (a branch is a "
            "choice: register_choice)",
        ),
        (
            NUMBA_LOOSE,
            "jump 'numpy-to-linalg' -> 'cfg-to-scf' of graph 'g' loops back over the "
            "pipelines from 'cfg-to-scf' to 'numpy-to-linalg', but 'bufferization' "
            "is declared to run neither before 'cfg-to-scf', nor after "
            "'numpy-to-linalg', nor between them, so whether the loop reruns it "
            "depends on the registration order; declare where 'bufferization' runs: "
            "with predecessors=['numpy-to-linalg'] after the loop, with "
            "successors=['cfg-to-scf'] before it, or with both "
            "predecessors=['cfg-to-scf'] and successors=['numpy-to-linalg'] inside it",
        ),
    ],
    ids=["branch", "either-way", "loose-loop"],
)
def test_an_order_dependent_jump_is_refused_saying_what_to_declare(
    rows: list[Row], told: str
) -> None:
    with pytest.raises(AmbiguousJumpError) as info:
        graph_of(rows, {}).create_schedule()
    assert str(info.value) == told


def test_the_loop_is_accepted_once_the_pipeline_is_placed() -> None:
    placed: Row = ("bufferization", ["numpy-to-linalg"], [], [])
    rows = [*NUMBA_LOOSE[:3], placed]
    assert graph_of(rows, {}).create_schedule().order[-1] == "bufferization"


# --- the property: every accepted graph means the same in every order -----------


@dataclass(frozen=True)
class Shape:
    """A random graph: pipelines p0..pN, edges that run forward in that order,
    jump targets anywhere, and what each pipeline requests on each visit."""

    size: int
    edges: tuple[tuple[int, int, bool], ...]  # (before, after, declared by after)
    jumps: tuple[tuple[int, ...], ...]
    scripts: tuple[tuple[int | None, ...], ...]  # an index into that pipeline's jumps

    def rows(self, order: Sequence[int]) -> list[Row]:
        rows: list[Row] = []
        for i in order:
            predecessors = [
                f"p{a}" for a, b, by_after in self.edges if b == i and by_after
            ]
            successors = [
                f"p{b}" for a, b, by_after in self.edges if a == i and not by_after
            ]
            jumps = [f"p{t}" for t in self.jumps[i]]
            rows.append((f"p{i}", predecessors, successors, jumps))
        return rows

    def script(self, i: int) -> list[str | None]:
        return [None if k is None else f"p{self.jumps[i][k]}" for k in self.scripts[i]]


@st.composite
def shapes(draw: st.DrawFn) -> Shape:
    size = draw(st.integers(2, 5))
    pairs = [(a, b) for a in range(size) for b in range(a + 1, size)]
    edges = tuple(
        (a, b, draw(st.booleans()))
        for a, b in pairs
        if draw(st.integers(0, 3)) > 0  # mostly connected: more graphs pass
    )
    jumps = tuple(
        tuple(  # mostly loops back, sometimes anywhere
            draw(
                st.lists(
                    st.integers(0, i) | st.integers(0, size - 1),
                    max_size=2,
                    unique=True,
                )
            )
        )
        for i in range(size)
    )
    scripts = tuple(
        tuple(
            draw(
                st.lists(
                    st.none() | st.integers(0, len(targets) - 1)
                    if targets
                    else st.none(),
                    max_size=4,
                )
            )
        )
        for targets in jumps
    )
    return Shape(size, edges, jumps, scripts)


Outcome = tuple[object, ...]


def meaning(shape: Shape, order: Sequence[int]) -> Outcome:
    """What the graph registered in `order` does: refused (and why), or its run.

    The RFC leaves the order of pipelines the edges do not order unspecified,
    so a run means the same as another when they differ only by swapping
    neighbouring runs of two such pipelines (a trace, in Mazurkiewicz's sense).
    Two runs are the same trace exactly when, for every two pipelines ordered
    by the edges (and for each pipeline with itself), the runs of those two, each
    with the jump it requested, come in the same sequence. That is what this
    returns, with how the run ended. A run stopped by an error keeps only what
    had to run before the error (what the failing run depends on, through runs
    of ordered pipelines): a pipeline unordered against those may or may not
    have run by then, as in any pipeline that fails.
    """
    names = [f"p{i}" for i in range(shape.size)]
    graph = graph_of(
        shape.rows(order), {n: shape.script(i) for i, n in enumerate(names)}
    )
    try:
        schedule = graph.create_schedule(max_jumps_per_edge=2)
    except PipelineGraphError as err:
        return ("refused", type(err).__name__)
    Scripted.log.clear()
    ended: object = "ok"
    try:
        schedule.run(ir.parse_module(MODULE))
    except ScheduleRunError as err:
        ended = (type(err).__name__, err.pipeline, err.target)
    visits = dict.fromkeys(names, 0)
    runs: list[tuple[str, str | None]] = []
    for name in Scripted.log:
        script = shape.script(int(name[1:]))
        visit = visits[name]
        visits[name] += 1
        runs.append((name, script[visit] if visit < len(script) else None))
    ordered = _ordered_pairs(shape)
    if isinstance(ended, tuple) and Scripted.log[-1:] != [ended[1]]:
        runs.append((str(ended[1]), None))  # the run-wide bound stopped it
    if ended != "ok":
        past = [runs[-1]]
        for run in reversed(runs[:-1]):
            if any(tuple(sorted({run[0], p[0]})) in ordered for p in past):
                past.append(run)
        runs = past[::-1]
    projections = tuple(
        tuple(run for run in runs if run[0] in pair) for pair in sorted(ordered)
    )
    return ("ran", ended, projections)


def _ordered_pairs(shape: Shape) -> set[tuple[str, ...]]:
    """Each pipeline alone, and each two pipelines the edges order."""
    after = {i: {b for a, b, _ in shape.edges if a == i} for i in range(shape.size)}
    for k in range(shape.size):  # transitive closure (Warshall)
        for i in range(shape.size):
            if k in after[i]:
                after[i] |= after[k]
    pairs: set[tuple[str, ...]] = {(f"p{i}",) for i in range(shape.size)}
    pairs.update(
        tuple(sorted((f"p{i}", f"p{j}"))) for i in range(shape.size) for j in after[i]
    )
    return pairs


@settings(max_examples=300, deadline=None)
@given(shapes(), st.lists(st.permutations(range(5)), min_size=3, max_size=6))
def test_an_accepted_graph_means_the_same_in_every_registration_order(
    shape: Shape, orders: list[list[int]]
) -> None:
    registrations = [list(range(shape.size))]
    registrations.extend([i for i in order if i < shape.size] for order in orders)
    outcomes = {meaning(shape, order) for order in registrations}
    assert len(outcomes) == 1, outcomes
