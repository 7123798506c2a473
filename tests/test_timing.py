"""Pass timing (reference §8): the timer tree, the text and JSON layouts of
mlir-opt 22.1.8, the merge of work done on other threads, and the Chrome trace
(slices nest like the execution, one track per thread).

Exact reports come from a fake clock that passes advance explicitly; layouts
are also compared with real mlir-opt output, times masked.
"""

from __future__ import annotations

import io
import json
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from passflow import (
    OperationPass,
    OpPassManager,
    OpToOpPassAdaptor,
    PassManager,
    PassPipelineError,
    PipelineParentInfo,
    ir,
)
from passflow.instruments import (
    ChromeTrace,
    PassTiming,
    TimingDisplay,
    TimingFormat,
    TimingManager,
)

Parse = Callable[[str], ir.ModuleOp]

BANNER = (
    "===-------------------------------------------------------------------------===\n"
    "                         ... Execution time report ...\n"
    "===-------------------------------------------------------------------------===\n"
)

TWO_FUNCTIONS = """\
func.func @foo(%a: i32) -> i32 {
  func.return %a : i32
}
func.func @bar(%a: i32) -> i32 {
  func.return %a : i32
}
"""


class FakeClock:
    """Wall time shared by all threads, CPU time per thread; `work` spends both."""

    def __init__(self) -> None:
        self.now = 0.0
        self.cpu: dict[int, float] = {}

    def wall(self) -> float:
        return self.now

    def user(self) -> float:
        return self.cpu.get(threading.get_ident(), 0.0)

    def work(self, seconds: float) -> None:
        self.now += seconds
        self.cpu[threading.get_ident()] = self.user() + seconds


class Working(OperationPass):
    """A pass that spends `cost` fake seconds, after computing `analyses`."""

    name = "Working"
    argument = "working"

    def __init__(
        self, clock: FakeClock, cost: float, analyses: tuple[type, ...] = ()
    ) -> None:
        super().__init__()
        self.clock = clock
        self.cost = cost
        self.analyses = analyses

    def run_on_operation(self) -> None:
        for analysis in self.analyses:
            self.get_analysis(analysis)
        self.clock.work(self.cost)


class CSE(Working):
    name = "CSE"
    argument = "cse"


class Canonicalizer(Working):
    name = "Canonicalizer"
    argument = "canonicalize"


class SymbolDCE(Working):
    name = "SymbolDCE"
    argument = "symbol-dce"


Job = Callable[[], None]


def run_on_worker_threads(jobs: list[Job]) -> None:
    """Run each job on its own thread `worker-<i>`, one after the other, with
    every thread alive until all are done (so that no thread id is reused)."""
    turns = [threading.Event() for _ in range(len(jobs) + 1)]
    errors: list[BaseException] = []

    def body(index: int) -> None:
        turns[index].wait()
        try:
            jobs[index]()
        except BaseException as err:
            errors.append(err)
        turns[index + 1].set()
        turns[-1].wait()

    threads = [
        threading.Thread(target=body, args=(i,), name=f"worker-{i}")
        for i in range(len(jobs))
    ]
    for thread in threads:
        thread.start()
    turns[0].set()
    for thread in threads:
        thread.join()
    assert not errors, errors


class ThreadedRun:
    """A module of two functions, `func.func(<passes>)` on it, and the timing
    of a run whose workers run clones of that pipeline on their own threads
    (`job`), as a parallel executor does: the hooks come from the workers'
    threads, with the spawning thread in `PipelineParentInfo`."""

    def __init__(
        self, parse: Parse, display: TimingDisplay, *passes: type[Working]
    ) -> None:
        self.clock = FakeClock()
        self.tm = manager(self.clock, display)
        self.timing = PassTiming(self.tm)
        self.module = parse(TWO_FUNCTIONS)
        self.pm = PassManager()
        self.functions = self.pm.nest("func.func")
        for kind in passes:
            self.functions.add(kind(self.clock, 0.0))
        adaptor = self.pm.passes[0]
        assert isinstance(adaptor, OpToOpPassAdaptor)
        self.adaptor = adaptor
        self.parent = PipelineParentInfo(threading.get_ident(), adaptor)

    def job(self, start: float, op: ir.Operation, costs: tuple[float, ...]) -> Job:
        """A job for `run_on_worker_threads`: a clone of the pipeline on `op`
        from fake time `start` (the workers overlap in wall time), pass i
        spending `costs[i]`."""

        def job() -> None:
            self.clock.now = start
            clone = self.functions.clone()
            self.timing.run_before_pipeline("func.func", self.parent)
            for pass_, cost in zip(clone.passes, costs, strict=True):
                self.timing.run_before_pass(pass_, op)
                self.clock.work(cost)
                self.timing.run_after_pass(pass_, op)
            self.timing.run_after_pipeline("func.func", self.parent)

        return job


def dominance_info(clock: FakeClock, cost: float) -> type:
    """An analysis called DominanceInfo that costs `cost` fake seconds."""

    class DominanceInfo:
        def __init__(self, op: ir.Operation) -> None:
            clock.work(cost)

    return DominanceInfo


def mask(report: str) -> str:
    """Times and percentages replaced, so layouts of different runs compare."""
    report = re.sub(r"\(\s*-?\d+\.\d%\)", "(P)", report)
    return re.sub(r"-?\d+\.\d{4}", "T", report)


def manager(
    clock: FakeClock, display: str = "tree", fmt: str = "text"
) -> TimingManager:
    return TimingManager(
        display,  # type: ignore[arg-type]
        fmt,  # type: ignore[arg-type]
        wall_clock=clock.wall,
        user_clock=clock.user,
    )


def timed_cse_canonicalize(
    parse: Parse, display: TimingDisplay = "tree", fmt: TimingFormat = "text"
) -> str:
    """Parser 1, per function CSE 1.5 (of which DominanceInfo 0.5) and
    Canonicalizer 2, Output 0.5, untimed 1.5: total 10 fake seconds."""
    clock = FakeClock()
    tm = manager(clock, display, fmt)
    with tm.start_timer("Parser"):
        clock.work(1.0)
        module = parse(TWO_FUNCTIONS)
    pm = PassManager()
    functions = pm.nest("func.func")
    functions.add(CSE(clock, 1.0, (dominance_info(clock, 0.5),)))
    functions.add(Canonicalizer(clock, 2.0))
    pm.add_instrumentation(PassTiming(tm))
    pm.run(module)
    scope = tm.start_timer("Output")
    clock.work(0.5)
    scope.stop()
    clock.work(1.5)
    return tm.report()


def test_tree_report_exact(parse: Parse) -> None:
    assert timed_cse_canonicalize(parse) == BANNER + (
        "  Total Execution Time: 10.0000 seconds\n"
        "\n"
        "  ----Wall Time----  ----Name----\n"
        "    1.0000 ( 10.0%)  Parser\n"
        "    7.0000 ( 70.0%)  'func.func' Pipeline\n"
        "    3.0000 ( 30.0%)    CSE\n"
        "    1.0000 ( 10.0%)      (A) DominanceInfo\n"
        "    4.0000 ( 40.0%)    Canonicalizer\n"
        "    0.5000 (  5.0%)  Output\n"
        "    1.5000 ( 15.0%)  Rest\n"
        "   10.0000 (100.0%)  Total\n"
    )


# mlir-opt f.mlir -p 'builtin.module(func.func(cse,canonicalize))'
#   --mlir-timing --mlir-disable-threading  (two functions)
MLIR_OPT_TREE = (
    BANNER
    + """\
  Total Execution Time: 0.0011 seconds

  ----Wall Time----  ----Name----
    0.0006 ( 55.2%)  Parser
    0.0002 ( 18.2%)  'func.func' Pipeline
    0.0001 (  6.5%)    CSE
    0.0000 (  0.4%)      (A) DominanceInfo
    0.0001 ( 11.4%)    Canonicalizer
    0.0001 (  8.6%)  Output
    0.0002 ( 17.0%)  Rest
    0.0011 (100.0%)  Total
"""
)


def test_tree_layout_matches_mlir_opt(parse: Parse) -> None:
    assert mask(timed_cse_canonicalize(parse)) == mask(MLIR_OPT_TREE).replace(
        "    T (P)  Total",
        "   T (P)  Total",  # 10 s needs one more digit
    )


def test_list_report_drops_hidden_timers_and_sorts_by_wall(parse: Parse) -> None:
    # mlir-opt would add `root` and `Pipeline Collection : ['func.func']` lines.
    # Parser and (A) DominanceInfo tie at 1.0 s: tree order is kept.
    assert timed_cse_canonicalize(parse, "list") == BANNER + (
        "  Total Execution Time: 10.0000 seconds\n"
        "\n"
        "  ----Wall Time----  ----Name----\n"
        "    7.0000 ( 70.0%)  'func.func' Pipeline\n"
        "    4.0000 ( 40.0%)  Canonicalizer\n"
        "    3.0000 ( 30.0%)  CSE\n"
        "    1.0000 ( 10.0%)  Parser\n"
        "    1.0000 ( 10.0%)  (A) DominanceInfo\n"
        "    0.5000 (  5.0%)  Output\n"
        "    1.5000 ( 15.0%)  Rest\n"
        "   10.0000 (100.0%)  Total\n"
    )


def test_json_tree_is_mlir_opts_layout_and_valid(parse: Parse) -> None:
    text = timed_cse_canonicalize(parse, "tree", "json")
    assert text.startswith("[\n") and text.endswith("\n]\n")
    # mlir-opt's number layout, and every "passes" list closed by `{}`.
    assert (
        '{"wall": {"duration":   1.0000, "percentage":  10.0}, "name": "Parser", '
        '"passes": [\n{}]},\n'
    ) in text
    assert (
        '    {"wall": {"duration":   1.0000, "percentage":  10.0}, '
        '"name": "(A) DominanceInfo", "passes": [\n    {}]},\n  {}]},\n'
    ) in text
    entries = json.loads(text)
    assert [e["name"] for e in entries] == [
        "Parser",
        "'func.func' Pipeline",
        "Output",
        "Rest",
        "Total",
    ]
    assert list(entries[1]) == ["wall", "name", "passes"]
    assert list(entries[-1]) == ["wall", "name"]
    cse, canonicalizer, end = entries[1]["passes"]
    assert (cse["name"], cse["wall"]) == ("CSE", {"duration": 3.0, "percentage": 30.0})
    assert cse["passes"][0]["name"] == "(A) DominanceInfo"
    assert canonicalizer["passes"] == [{}]
    assert end == {}


def test_json_list_is_valid(parse: Parse) -> None:
    entries = json.loads(timed_cse_canonicalize(parse, "list", "json"))
    assert [(e["name"], e["wall"]["duration"]) for e in entries] == [
        ("'func.func' Pipeline", 7.0),
        ("Canonicalizer", 4.0),
        ("CSE", 3.0),
        ("Parser", 1.0),
        ("(A) DominanceInfo", 1.0),
        ("Output", 0.5),
        ("Rest", 1.5),
        ("Total", 10.0),
    ]


NESTED_INPUT = """\
func.func @foo() {
  func.return
}
builtin.module @inner {
  func.func @bar() {
    func.return
  }
}
"""

# mlir-opt g.mlir --mlir-timing --mlir-disable-threading -p
#   'builtin.module(func.func(cse,canonicalize),builtin.module(cse,func.func(cse)),symbol-dce)'
MLIR_OPT_NESTED_TREE = (
    BANNER
    + """\
  Total Execution Time: 0.0058 seconds

  ----Wall Time----  ----Name----
    0.0049 ( 85.4%)  Parser
    0.0004 (  6.2%)  Pipeline Collection : ['builtin.module', 'func.func']
    0.0003 (  5.4%)    'func.func' Pipeline
    0.0001 (  2.1%)      CSE
    0.0000 (  0.1%)        (A) DominanceInfo
    0.0002 (  3.2%)      Canonicalizer
    0.0000 (  0.6%)    'builtin.module' Pipeline
    0.0000 (  0.2%)      CSE
    0.0000 (  0.0%)        (A) DominanceInfo
    0.0000 (  0.1%)      'func.func' Pipeline
    0.0000 (  0.1%)        CSE
    0.0000 (  0.1%)          (A) DominanceInfo
    0.0001 (  0.9%)  SymbolDCE
    0.0001 (  2.5%)  Output
    0.0003 (  5.0%)  Rest
    0.0058 (100.0%)  Total
"""
)


def test_visible_collection_and_nested_pipelines_match_mlir_opt(parse: Parse) -> None:
    clock = FakeClock()
    tm = manager(clock)
    dominance = dominance_info(clock, 0.0)
    with tm.start_timer("Parser"):
        module = parse(NESTED_INPUT)
    pm = PassManager()
    functions = pm.nest("func.func")
    functions.add(CSE(clock, 0.0, (dominance,)))
    functions.add(Canonicalizer(clock, 0.0))
    inner = pm.nest("builtin.module")
    inner.add(CSE(clock, 0.0, (dominance,)))
    inner.nest("func.func").add(CSE(clock, 0.0, (dominance,)))
    pm.add(SymbolDCE(clock, 0.0))
    pm.add_instrumentation(PassTiming(tm))
    pm.run(module)
    with tm.start_timer("Output"):
        pass
    assert mask(tm.report()) == mask(MLIR_OPT_NESTED_TREE)
    # The list view keeps the visible collection (only hidden timers go).
    tm.display = "list"
    assert "  Pipeline Collection : ['builtin.module', 'func.func']\n" in tm.report()


def test_same_pass_twice_in_a_pipeline_gives_two_lines(parse: Parse) -> None:
    clock = FakeClock()
    tm = manager(clock)
    pm = PassManager()
    functions = pm.nest("func.func")
    functions.add(CSE(clock, 1.0))
    functions.add(Canonicalizer(clock, 0.0))
    functions.add(CSE(clock, 2.0))
    pm.add_instrumentation(PassTiming(tm))
    pm.run(parse(TWO_FUNCTIONS))
    lines = tm.report().splitlines()
    assert lines[6:10] == [
        "    6.0000 (100.0%)  'func.func' Pipeline",
        "    2.0000 ( 33.3%)    CSE",
        "    0.0000 (  0.0%)    Canonicalizer",
        "    4.0000 ( 66.7%)    CSE",
    ]


class Failing(Working):
    """Works `cost`, then fails on @foo."""

    name = "Failing"
    argument = "failing"

    def run_on_operation(self) -> None:
        super().run_on_operation()
        if ir.symbol_name(self.get_operation()) == "foo":
            self.signal_pass_failure()


def test_failed_nested_pipeline_closes_its_timer(parse: Parse) -> None:
    # @foo fails in Failing (1 s), so its pipeline stops without a
    # run_after_pipeline; @bar still runs both passes (1 s + 2 s).
    clock = FakeClock()
    tm = manager(clock)
    pm = PassManager()
    functions = pm.nest("func.func")
    functions.add(Failing(clock, 1.0))
    functions.add(Canonicalizer(clock, 2.0))
    pm.add(SymbolDCE(clock, 5.0))  # never runs: the pipeline stopped
    pm.add_instrumentation(PassTiming(tm))
    with pytest.raises(PassPipelineError):
        pm.run(parse(TWO_FUNCTIONS))
    clock.work(1.0)
    assert tm.report().splitlines()[5:] == [
        "  ----Wall Time----  ----Name----",
        "    4.0000 ( 80.0%)  'func.func' Pipeline",
        "    2.0000 ( 40.0%)    Failing",
        "    2.0000 ( 40.0%)    Canonicalizer",
        "    1.0000 ( 20.0%)  Rest",
        "    5.0000 (100.0%)  Total",
    ]


class Dynamic(Working):
    """Runs a `func.func(canonicalize)` pipeline on each function it is given."""

    name = "Dynamic"
    argument = "dynamic"

    def run_on_operation(self) -> None:
        super().run_on_operation()
        pipeline = OpPassManager("func.func")
        pipeline.add(Canonicalizer(self.clock, 2.0))
        assert self.run_pipeline(pipeline, self.get_operation())


def test_dynamic_pipeline_nests_under_the_pass_that_ran_it(parse: Parse) -> None:
    clock = FakeClock()
    tm = manager(clock)
    pm = PassManager()
    pm.nest("func.func").add(Dynamic(clock, 1.0))
    pm.add_instrumentation(PassTiming(tm))
    pm.run(parse(TWO_FUNCTIONS))
    assert tm.report().splitlines()[6:11] == [
        "    6.0000 (100.0%)  'func.func' Pipeline",
        "    6.0000 (100.0%)    Dynamic",
        "    4.0000 ( 66.7%)      'func.func' Pipeline",
        "    4.0000 ( 66.7%)        Canonicalizer",
        "    0.0000 (  0.0%)  Rest",
    ]


def test_threaded_work_is_merged_with_a_user_column(parse: Parse) -> None:
    """Two workers run clones of `func.func(cse,canonicalize)` on one function
    each, after `symbol-dce` on the module."""
    run = ThreadedRun(parse, "tree", CSE, Canonicalizer)
    clock, tm, timing, module = run.clock, run.tm, run.timing, run.module
    foo, bar = ir.direct_children(module)
    top = SymbolDCE(clock, 0.0)
    timing.run_before_pass(top, module)
    clock.work(1.0)
    timing.run_after_pass(top, module)
    timing.run_before_pass(run.adaptor, module)
    run_on_worker_threads(
        [run.job(1.0, foo, (2.0, 1.0)), run.job(1.5, bar, (1.0, 3.0))]
    )  # 1 -> 4, 1.5 -> 5.5
    timing.run_after_pass(run.adaptor, module)
    clock.work(0.5)
    # Pipelines: wall max(3, 4), user 3 + 4; CSE max(2, 1), 2 + 1; Canonicalizer
    # max(1, 3), 1 + 3. Root user: main thread 1.5 plus the workers' 7. Rest
    # includes the hidden adaptor's own time: wall 4.5 (1 -> 5.5) minus 4.
    assert tm.report() == BANNER + (
        "  Total Execution Time: 6.0000 seconds\n"
        "\n"
        "  ----User Time----  ----Wall Time----  ----Name----\n"
        "    1.0000 ( 11.8%)    1.0000 ( 16.7%)  SymbolDCE\n"
        "    7.0000 ( 82.4%)    4.0000 ( 66.7%)  'func.func' Pipeline\n"
        "    3.0000 ( 35.3%)    2.0000 ( 33.3%)    CSE\n"
        "    4.0000 ( 47.1%)    3.0000 ( 50.0%)    Canonicalizer\n"
        "    0.5000 (  5.9%)    1.0000 ( 16.7%)  Rest\n"
        "    8.5000 (100.0%)    6.0000 (100.0%)  Total\n"
    )
    tm.output_format = "json"
    entries = json.loads(tm.report())
    assert list(entries[0]) == ["user", "wall", "name", "passes"]
    assert entries[1]["user"] == {"duration": 7.0, "percentage": 82.4}


def test_report_can_be_repeated_and_print_report_clears(parse: Parse) -> None:
    clock = FakeClock()
    tm = manager(clock)
    with tm.start_timer("Parser"):
        clock.work(1.0)
    first = tm.report()
    assert tm.report() == first  # reporting does not consume async merges
    out = io.StringIO()
    tm.print_report(out)
    assert out.getvalue() == first
    assert "Parser" not in tm.report()


def test_list_display_merges_same_named_passes_user_time_too(parse: Parse) -> None:
    """`func.func(cse,canonicalize,cse)` on two worker threads: the list display
    adds both CSE lines' wall and user times (MLIR merges timers by name)."""
    run = ThreadedRun(parse, "list", CSE, Canonicalizer, CSE)
    foo, bar = ir.direct_children(run.module)
    run.timing.run_before_pass(run.adaptor, run.module)
    run_on_worker_threads(
        [run.job(0.0, foo, (1.0, 1.0, 2.0)), run.job(0.5, bar, (2.0, 0.5, 1.0))]
    )  # 0 -> 4 and 0.5 -> 4
    run.timing.run_after_pass(run.adaptor, run.module)
    # First CSE: wall max(1, 2), user 1 + 2; second CSE: max(2, 1), 2 + 1; in
    # the list, one CSE line: wall 2 + 2, user 3 + 3. Canonicalizer: max(1,
    # 0.5), 1 + 0.5. The pipeline: wall max(4, 3.5), user 4 + 3.5.
    assert run.tm.report() == BANNER + (
        "  Total Execution Time: 4.0000 seconds\n"
        "\n"
        "  ----User Time----  ----Wall Time----  ----Name----\n"
        "    7.5000 (100.0%)    4.0000 (100.0%)  'func.func' Pipeline\n"
        "    6.0000 ( 80.0%)    4.0000 (100.0%)  CSE\n"
        "    1.5000 ( 20.0%)    1.0000 ( 25.0%)  Canonicalizer\n"
        "    0.0000 (  0.0%)    0.0000 (  0.0%)  Rest\n"
        "    7.5000 (100.0%)    4.0000 (100.0%)  Total\n"
    )


def test_a_top_level_timer_adds_up_every_time_it_ran() -> None:
    """passflow-opt starts `Parser` and `Output` once per `--split-input-file`
    chunk: the report shows their sums, not the last chunk's."""
    clock = FakeClock()
    tm = manager(clock)
    for parse_cost, output_cost in ((1.0, 0.25), (2.0, 0.5), (0.5, 0.25)):
        with tm.start_timer("Parser"):
            clock.work(parse_cost)
        scope = tm.start_timer("Output")
        clock.work(output_cost)
        scope.stop()
        scope.stop()  # a second stop adds nothing
        clock.work(0.25)  # the passes, untimed here
    assert tm.report() == BANNER + (
        "  Total Execution Time: 5.2500 seconds\n"
        "\n"
        "  ----Wall Time----  ----Name----\n"
        "    3.5000 ( 66.7%)  Parser\n"
        "    1.0000 ( 19.0%)  Output\n"
        "    0.7500 ( 14.3%)  Rest\n"
        "    5.2500 (100.0%)  Total\n"
    )


def test_unknown_display_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown timing display 'flat'"):
        TimingManager("flat")  # type: ignore[arg-type]


# --- Chrome trace (`--timing-trace`) ----------------------------------------------

TRACE_INPUT = """\
func.func @foo() {
  func.return
}
func.func @bar() {
  func.return
}
builtin.module @inner {
  func.func @baz() {
    func.return
  }
}
"""


def slices(trace: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in trace["traceEvents"] if e["ph"] == "X"]


def assert_properly_nested(events: list[dict[str, Any]]) -> None:
    """On each track, two slices are disjoint or one contains the other."""
    epsilon = 1e-6  # float rounding of ns / 1000
    by_track: dict[int, list[tuple[float, float, str]]] = {}
    for event in events:
        start = float(event["ts"])
        by_track.setdefault(int(event["tid"]), []).append(
            (start, start + float(event["dur"]), str(event["name"]))
        )
    for spans in by_track.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        open_ends: list[float] = []
        for start, end, name in spans:
            while open_ends and open_ends[-1] <= start + epsilon:
                open_ends.pop()
            assert not open_ends or end <= open_ends[-1] + epsilon, name
            open_ends.append(end)


def parent_of(events: list[dict[str, Any]], child: dict[str, Any]) -> str:
    """The name of the innermost other slice containing `child` on its track."""
    candidates = [
        e
        for e in events
        if e is not child
        and e["tid"] == child["tid"]
        and e["ts"] <= child["ts"]
        and e["ts"] + e["dur"] >= child["ts"] + child["dur"]
    ]
    return str(min(candidates, key=lambda e: e["dur"])["name"])


def test_serial_run_trace_loads_back_and_nests(parse: Parse, tmp_path: Path) -> None:
    module = parse(TRACE_INPUT)
    clock = FakeClock()  # for the passes; the trace reads the real clock
    dominance = dominance_info(clock, 0.0)
    pm = PassManager()
    pm.nest("func.func").add(CSE(clock, 0.0, (dominance,)))
    pm.nest("builtin.module").nest("func.func").add(CSE(clock, 0.0, (dominance,)))
    pm.add(SymbolDCE(clock, 0.0))
    trace = ChromeTrace()
    pm.add_instrumentation(trace)
    pm.run(module)
    path = tmp_path / "trace.json"
    trace.write(str(path))
    loaded = json.loads(path.read_text())
    events = slices(loaded)
    assert_properly_nested(events)
    assert {e["tid"] for e in events} == {1}
    assert [e for e in loaded["traceEvents"] if e["ph"] == "M"] == [
        {
            "name": "thread_name",
            "ph": "M",
            "pid": events[0]["pid"],
            "tid": 1,
            "args": {"name": threading.current_thread().name},
        }
    ]
    cse = [e for e in events if e["name"] == "CSE"]
    # One slice per pass per op, with the op in args.
    assert sorted(e["args"]["symbol"] for e in cse) == ["@bar", "@baz", "@foo"]
    assert all(e["args"]["op"] == "func.func" for e in cse)
    assert all(parent_of(events, e) == "'func.func' Pipeline" for e in cse)
    analyses = [e for e in events if e["name"] == "(A) DominanceInfo"]
    assert len(analyses) == 3
    assert all(parent_of(events, e) == "CSE" for e in analyses)
    collection = "Pipeline Collection : ['builtin.module', 'func.func']"
    inner = next(e for e in events if e["name"] == "'builtin.module' Pipeline")
    assert inner["args"] == {
        "anchor": "builtin.module",
        "op": "builtin.module",
        "symbol": "@inner",
    }
    assert parent_of(events, inner) == collection
    dce = next(e for e in events if e["name"] == "SymbolDCE")
    assert dce["args"] == {"op": "builtin.module", "argument": "symbol-dce"}
    assert all(  # top-level: inside no other slice
        not (e["ts"] <= dce["ts"] and e["ts"] + e["dur"] >= dce["ts"] + dce["dur"])
        for e in events
        if e is not dce
    )


def test_workers_get_their_own_tracks(parse: Parse) -> None:
    module = parse(TRACE_INPUT)
    foo, bar, _ = ir.direct_children(module)
    ticks = iter(range(0, 10_000_000, 1000))
    trace = ChromeTrace(clock=lambda: next(ticks))
    pm = PassManager()
    functions = pm.nest("func.func")
    functions.add(CSE(FakeClock(), 0.0))
    adaptor = pm.passes[0]
    assert isinstance(adaptor, OpToOpPassAdaptor)
    parent = PipelineParentInfo(threading.get_ident(), adaptor)
    trace.run_before_pass(adaptor, module)

    def worker(op: ir.Operation) -> None:
        clone = functions.clone()
        trace.run_before_pipeline("func.func", parent)
        trace.run_before_pass(clone.passes[0], op)
        trace.run_after_pass_failed(clone.passes[0], op)  # ends the pipeline too

    run_on_worker_threads([lambda: worker(foo), lambda: worker(bar)])
    trace.run_after_pass_failed(adaptor, module)
    buffer = io.StringIO()
    trace.write(buffer)
    loaded = json.loads(buffer.getvalue())
    names = {
        e["tid"]: e["args"]["name"] for e in loaded["traceEvents"] if e["ph"] == "M"
    }
    assert sorted(names.values()) == sorted(
        [threading.current_thread().name, "worker-0", "worker-1"]
    )
    events = slices(loaded)
    assert_properly_nested(events)
    by_track = {
        names[tid]: sorted(
            (e["name"], e["ts"], e["dur"]) for e in events if e["tid"] == tid
        )
        for tid in names
    }
    # Fake clock: 1 us per reading, the first one (0) being the trace's origin.
    assert by_track["worker-0"] == [
        ("'func.func' Pipeline", 2.0, 2.0),
        ("CSE", 3.0, 1.0),
    ]
    assert by_track["worker-1"] == [
        ("'func.func' Pipeline", 5.0, 2.0),
        ("CSE", 6.0, 1.0),
    ]
    failed = [e for e in events if e["args"].get("failed")]
    assert sorted(e["name"] for e in failed) == [
        "CSE",
        "CSE",
        "Pipeline Collection : ['func.func']",
    ]
