"""The run-wide bound never stops a run that every per-edge cap allows, whatever
the loops' shape, and each loop's `on_cap` policy (error, warn, silent) decides
what reaching its cap does, as MLIR's composite fixed-point pass does."""

from __future__ import annotations

import json
import random
from collections.abc import Callable

import pytest
from xdsl.dialects.builtin import StringAttr

from passflow import OperationPass, OpPassManager, PassManager, ir
from passflow.diagnostics import Severity
from passflow.graph import (
    JUMP_TARGET_ATTRIBUTE,
    JumpLimitError,
    LoopStopped,
    PipelineGraph,
    PipelineGraphError,
    PipelineSchedule,
    PopulatePipeline,
    ScheduleTrace,
)

MODULE = "func.func @f() {\n  func.return\n}\n"

Decide = Callable[[str, tuple[str, ...]], str | None]


def never(name: str, targets: tuple[str, ...]) -> str | None:
    return None


DECIDER: list[Decide] = [never]
"""What the passes of the graph under test ask: jump, and where?"""


class Decided(OperationPass):
    """Asks `DECIDER` whether to jump, and where, each time it runs."""

    argument = "test-bounds-decided"

    def __init__(self, label: str, targets: tuple[str, ...]) -> None:
        super().__init__()
        self.label = label
        self.targets = targets

    def run_on_operation(self) -> None:
        target = DECIDER[0](self.label, self.targets)
        if target is not None:
            attributes = self.get_operation().attributes
            attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr(target)


def decided(label: str, targets: tuple[str, ...]) -> PopulatePipeline:
    def populate(pm: OpPassManager) -> None:
        pm.add(Decided(label, targets))

    return populate


def random_graph(chooser: random.Random) -> PipelineGraph:
    """A chain of 2 to 6 pipelines with random loops back (nested, overlapping,
    sharing ends, self-loops); sometimes one is a subgraph with a loop inside."""
    size = chooser.randint(2, 6)
    names = [f"p{i}" for i in range(size)]
    targets: dict[str, list[str]] = {name: [] for name in names}
    for _ in range(chooser.randint(1, 4)):
        last = chooser.randrange(size)
        first = chooser.randint(0, last)
        if names[first] not in targets[names[last]]:
            targets[names[last]].append(names[first])
    sub = chooser.randrange(size) if chooser.random() < 0.3 else None
    graph = PipelineGraph("bounds")
    for i, name in enumerate(names):
        jumps = tuple(targets[name])
        before = [names[i - 1]] if i else []
        if i == sub:

            def members(inner: PipelineGraph, name: str = name) -> None:
                inner.register_pipeline("m0", populate=decided(f"{name}/m0", ()))
                inner.register_pipeline(
                    "m1", ["m0"], [], ["m0"], populate=decided(f"{name}/m1", ("m0",))
                )

            graph.register_subgraph(name, before, [], jumps, populate=members)
        else:
            graph.register_pipeline(name, before, [], jumps, decided(name, jumps))
    return graph


def run(schedule: PipelineSchedule, decide: Decide) -> tuple[str, str]:
    """The run's trace, or the error it stopped with."""
    DECIDER[0] = decide
    try:
        return "ok", str(schedule.run(ir.parse_module(MODULE)))
    except JumpLimitError as err:
        return "limit", err.errors[0].message


def test_the_derived_bound_never_stops_a_run_the_caps_allow() -> None:
    # Each graph runs twice with the same jump decisions: with the derived bound
    # and with a bound no run reaches. The outcomes must be the same: a run the
    # caps allow ends normally, and a runaway one stops at a per-edge cap.
    chooser = random.Random(45)
    finished = stopped = 0
    for case in range(200):
        graph = random_graph(chooser)
        cap = chooser.randint(1, 3)
        schedule = graph.create_schedule(max_jumps_per_edge=cap)
        unbounded = graph.create_schedule(
            max_jumps_per_edge=cap, max_pipeline_runs=10**9
        )
        odds = chooser.choice((0.3, 0.6, 1.0))  # 1.0: the IR never converges

        def decide(
            name: str,
            targets: tuple[str, ...],
            stream: random.Random,
            odds: float = odds,
        ) -> str | None:
            if targets and stream.random() < odds:
                return stream.choice(targets)
            return None

        outcomes: list[tuple[str, str]] = []
        for made in (schedule, unbounded):
            stream = random.Random(case)
            outcomes.append(run(made, lambda n, t, s=stream: decide(n, t, s)))
        assert outcomes[0] == outcomes[1], (case, str(schedule))
        kind, text = outcomes[0]
        if kind == "ok":
            finished += 1
            assert text.count("run  ") <= schedule.pipeline_run_limit
        else:
            stopped += 1
            assert " per edge of schedule " in text and "run-wide bound" not in text
    assert finished > 50 and stopped > 50


def overlapping(policy: str = "error") -> PipelineGraph:
    """`b` loops back to `a` on every second visit, `c` back to `b` always."""
    visits: dict[str, int] = {}

    def decide(name: str, targets: tuple[str, ...]) -> str | None:
        visits[name] = visits.get(name, 0) + 1
        if name == "b":
            return "a" if visits[name] % 2 == 0 else None
        return "b" if name == "c" else None

    DECIDER[0] = decide
    graph = PipelineGraph("overlap")
    graph.register_pipeline("a", populate=decided("a", ()))
    graph.register_pipeline("b", ["a"], [], ["a"], decided("b", ("a",)))
    graph.register_pipeline(
        "c",
        ["b"],
        [],
        ["b"],
        decided("c", ("b",)),
        on_cap=policy,  # pyright: ignore[reportArgumentType]
    )
    return graph


def test_overlapping_loops_within_their_caps_run_to_their_end() -> None:
    # The review's case: b -> a and c -> b, cap 3. The longest run with no edge
    # past its cap takes b -> a three times per visit to c's loop and c -> b
    # three times: 33 pipeline runs, which the derived bound allows exactly
    # (the bound before the fourth round stopped it after 24).
    in_a_row = {"b": 0, "c": 0}

    def decide(name: str, targets: tuple[str, ...]) -> str | None:
        if name == "b":
            in_a_row["b"] = (in_a_row["b"] + 1) % 4
            return "a" if in_a_row["b"] else None
        if name == "c":
            in_a_row["c"] += 1
            return "b" if in_a_row["c"] <= 3 else None
        return None

    graph = PipelineGraph("overlap")
    graph.register_pipeline("a", populate=decided("a", ()))
    graph.register_pipeline("b", ["a"], [], ["a"], decided("b", ("a",)))
    graph.register_pipeline("c", ["b"], [], ["b"], decided("c", ("b",)))
    schedule = graph.create_schedule(max_jumps_per_edge=3)
    assert schedule.pipeline_run_limit == 33
    DECIDER[0] = decide
    trace = schedule.run(ir.parse_module(MODULE))
    assert len(trace.executed) == 33
    assert trace.executed.count("c") == 4 and trace.executed.count("a") == 13
    assert not trace.stops


def test_a_runaway_overlapping_loop_stops_at_its_per_edge_cap() -> None:
    schedule = overlapping().create_schedule(max_jumps_per_edge=3)
    with pytest.raises(JumpLimitError) as info:
        schedule.run(ir.parse_module(MODULE))
    message = info.value.errors[0].message
    assert "the jump c -> b reached the cap of 3 jumps per edge" in message
    assert "run-wide" not in message


def test_a_bound_set_below_what_the_caps_allow_says_which_bound_stopped() -> None:
    schedule = overlapping().create_schedule(max_jumps_per_edge=3, max_pipeline_runs=7)
    with pytest.raises(JumpLimitError) as info:
        schedule.run(ir.parse_module(MODULE))
    message = info.value.errors[0].message
    assert message.startswith(
        "schedule 'overlap' reached its run-wide bound of 7 pipeline runs "
        "(max_pipeline_runs) before"
    )
    assert "every jump still within the cap of 3 per edge" in message
    assert "does not converge" not in message and "do not converge" not in message


@pytest.mark.parametrize("policy", ["warn", "silent"])
def test_warn_and_silent_stop_the_loop_and_go_on(policy: str) -> None:
    schedule = overlapping(policy).create_schedule(max_jumps_per_edge=3)
    assert "[jumps: b; on_cap=" + policy + "]" in str(schedule)
    pm = PassManager()
    seen: list[tuple[Severity, str]] = []
    pm.diagnostics.handlers.append(lambda d: seen.append((d.severity, d.message)))
    trace: ScheduleTrace = schedule.run(ir.parse_module(MODULE), pm)
    assert trace.stops == (LoopStopped("c", "b", 3, policy),)
    assert str(trace).splitlines()[-1] == (
        f"stop c -> b: max-jumps (3), on_cap={policy}"
    )
    assert trace.executed[-1] == "c"
    warnings = [m for s, m in seen if s is Severity.WARNING]
    if policy == "warn":
        assert warnings == [
            "the loop from 'b' to 'c' of schedule 'overlap' did not converge in 3 "
            "jumps: pipeline 'c' requested the jump to 'b' again; going on after "
            "'c' (on_cap='warn')"
        ]
    else:
        assert warnings == []


def test_an_unknown_policy_is_refused_at_registration() -> None:
    graph = PipelineGraph("g")
    with pytest.raises(PipelineGraphError, match="on_cap of pipeline 'a' in graph"):
        graph.register_pipeline("a", on_cap="loud")  # pyright: ignore[reportArgumentType]


def test_the_json_export_shows_a_policy_other_than_error() -> None:
    schedule = overlapping("silent").create_schedule()
    pipelines = json.loads(schedule.to_json())["pipelines"]
    assert [p.get("on_cap") for p in pipelines] == [None, None, "silent"]
