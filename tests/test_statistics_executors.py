"""Statistics and stderr do not depend on the executor (issue 15, item 8).

A statistic's figure, and where a pass's own output falls between the
diagnostics, must be those of a serial run (mlir-opt --mlir-disable-threading)
whatever ran the children: threads, forked processes, a process pool, Dask.
CSE *assigns* its statistics (the last function's counts, as mlir-opt's CSE),
which summing per-clone counts got wrong: num-cse'd/num-dce'd read 4/2 serially,
14/3 on two threads and 12/3 to 22/4 on two processes for the input below.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import pytest

from passflow import OperationPass, OpPassManager, PassManager, Statistic, ir
from passflow.diagnostics import Diagnostic
from passflow.execution import ChildExecutor
from passflow.executors import SerialExecutor, ThreadExecutor, as_child_executor
from passflow.executors.forking import ProcessExecutor
from passflow.executors.shipping import ShippingExecutor
from passflow.graph import PipelineGraph
from passflow.statistics import (
    Relative,
    apply_statistic_effects,
    arm_statistics,
    statistic_values,
    take_statistic_effects,
)
from passflow.statistics_report import statistics_report
from passflow.testing import (
    TestInterfacePass,
    TestLivenessPass,
    TestStatisticPass,
)
from passflow.transforms.canonicalize import Canonicalizer
from passflow.transforms.cse import CSE

# (duplicates of one pure op, dead ops) per function; the last is (2, 2).
SHAPES = [(3, 1), (1, 0), (4, 1), (0, 3), (5, 1), (2, 2)]


def _function(index: int, duplicates: int, dead: int) -> str:
    values = [f"%v{k}" for k in range(duplicates + 1)]
    lines = [f"func.func @f{index}(%a: i32) -> ({', '.join(['i32'] * len(values))}) {{"]
    lines += [f"  {v} = arith.addi %a, %a : i32" for v in values]
    lines += [f"  %d{k} = arith.muli %a, %a : i32" for k in range(dead)]
    lines.append(
        f"  func.return {', '.join(values)} : {', '.join(['i32'] * len(values))}"
    )
    lines.append("}")
    return "\n".join(lines) + "\n"


INPUT = "".join(_function(i, dup, dead) for i, (dup, dead) in enumerate(SHAPES))

HEADER = (
    "===-------------------------------------------------------------------------===\n"
    "                         ... Pass statistics report ...\n"
    "===-------------------------------------------------------------------------===\n"
)


class MixedCounter(OperationPass):
    """Counts up on most functions, but assigns on @f3 (and counts on from there),
    so that only child order gives a serial run's figure."""

    argument = "mixed-counter"
    op_name = "func.func"
    seen = Statistic("seen", "Functions seen (assigned 100 on @f3)")
    doubled = Statistic("doubled", "Twice the functions seen, minus one each")

    def run_on_operation(self) -> None:
        if ir.symbol_name(self.get_operation()) == "f3":
            self.seen = 100
        else:
            self.seen += 1
        self.doubled += 2
        self.doubled -= 1


class MixedModuleCounter(MixedCounter):
    """The same counts on modules: `builtin.module(mixed-counter)`."""

    op_name = "builtin.module"


def _add_all(pm: OpPassManager, *passes: type[OperationPass]) -> None:
    for pass_class in passes:
        pm.add(pass_class())


def _build() -> PassManager:
    """`builtin.module(func.func(cse,canonicalize,test-stats-pass,mixed-counter))`"""
    pm = PassManager("builtin.module")
    _add_all(pm.nest("func.func"), CSE, Canonicalizer, TestStatisticPass, MixedCounter)
    return pm


# After one run. CSE: the counts of @f5, the last function, as mlir-opt's CSE
# assigns them: 2 merges of a pure op, each counted twice by MLIR, and 2 dead
# ops. test-stats-pass: 3 ops per function once CSE is done (func.func, one
# addi, func.return). mixed-counter: 100 on @f3, then +1 for @f4 and @f5.
EXPECTED_ONE_RUN = HEADER + (
    "'func.func' Pipeline\n"
    "  CSE\n"
    "    (S) 4 num-cse'd - Number of operations CSE'd\n"
    "    (S) 2 num-dce'd - Number of operations DCE'd\n"
    "  Canonicalizer\n"
    "  TestStatisticPass\n"
    "    (S) 18 num-ops  - Number of operations counted\n"
    "    (S) 18 num-ops2 - Number of operations counted one more time\n"
    "  MixedCounter\n"
    "    (S)   6 doubled - Twice the functions seen, minus one each\n"
    "    (S) 102 seen    - Functions seen (assigned 100 on @f3)\n"
    "\n"
)

# After a second run of the same pass manager: statistics persist, as in MLIR.
EXPECTED_TWO_RUNS = HEADER + (
    "'func.func' Pipeline\n"
    "  CSE\n"
    "    (S) 4 num-cse'd - Number of operations CSE'd\n"
    "    (S) 2 num-dce'd - Number of operations DCE'd\n"
    "  Canonicalizer\n"
    "  TestStatisticPass\n"
    "    (S) 36 num-ops  - Number of operations counted\n"
    "    (S) 36 num-ops2 - Number of operations counted one more time\n"
    "  MixedCounter\n"
    "    (S)  12 doubled - Twice the functions seen, minus one each\n"
    "    (S) 102 seen    - Functions seen (assigned 100 on @f3)\n"
    "\n"
)

EXPECTED_LIST = HEADER + (
    "  CSE\n"
    "    (S) 4 num-cse'd - Number of operations CSE'd\n"
    "    (S) 2 num-dce'd - Number of operations DCE'd\n"
    "  MixedCounter\n"
    "    (S)  12 doubled - Twice the functions seen, minus one each\n"
    "    (S) 102 seen    - Functions seen (assigned 100 on @f3)\n"
    "  TestStatisticPass\n"
    "    (S) 36 num-ops  - Number of operations counted\n"
    "    (S) 36 num-ops2 - Number of operations counted one more time\n"
    "\n"
)


# --- executors -------------------------------------------------------------------


EXECUTORS = ["serial", "thread", "thread-pool", "process", "process-pool", "dask"]


@pytest.fixture(params=EXECUTORS)
def executor(request: pytest.FixtureRequest) -> Iterator[ChildExecutor]:
    kind: str = request.param
    made: ChildExecutor
    if kind == "serial":
        made = SerialExecutor()
    elif kind == "thread":
        made = ThreadExecutor(2)
    elif kind == "thread-pool":
        made = as_child_executor(ThreadPoolExecutor(2)) or SerialExecutor()
    elif kind == "process":
        # No serial budget: the parent forks at once, then runs children itself
        # between its worker's results, so both kinds of run are mixed.
        made = ProcessExecutor(2, serial_budget=0, timeout=60)
    elif kind == "process-pool":
        pool: ProcessPoolExecutor = request.getfixturevalue("process_pool")
        made = ShippingExecutor(pool, jobs=2, chunks_per_job=2)
    else:
        from passflow.executors.dask import DaskExecutor

        made = DaskExecutor(request.getfixturevalue("dask_client"))
    yield made
    made.close()


def _run(pm: PassManager, text: str = INPUT) -> str:
    ctx = ir.default_context(allow_unregistered=True)
    pm.context = ctx
    module = ir.parse_module(text, ctx, "input.mlir")
    pm.run(module)
    return ir.print_op(module)


def test_statistics_report_is_a_serial_runs_on_every_executor(
    executor: ChildExecutor,
) -> None:
    serial_ir = _run(_build())
    pm = _build()
    pm.executor = executor
    assert _run(pm) == serial_ir
    assert statistics_report(pm) == EXPECTED_ONE_RUN
    # The same executor again (thread clones and worker pipelines reused).
    assert _run(pm) == serial_ir
    assert statistics_report(pm) == EXPECTED_TWO_RUNS
    assert statistics_report(pm, "list") == EXPECTED_LIST


def _build_nested() -> PassManager:
    """`builtin.module(builtin.module(func.func(cse,test-stats-pass),mixed-counter),
    func.func(cse,mixed-counter))`"""
    pm = PassManager("builtin.module")
    module = pm.nest("builtin.module")
    _add_all(module.nest("func.func"), CSE, TestStatisticPass)
    module.add(MixedModuleCounter())
    _add_all(pm.nest("func.func"), CSE, MixedCounter)
    return pm


def _nested_input() -> str:
    inner = "".join(
        f"builtin.module @m{m} {{\n"
        + "".join(
            _function(10 * m + i, dup, dead) for i, (dup, dead) in enumerate(SHAPES)
        )
        + "}\n"
        for m in range(3)
    )
    return inner + _function(90, 1, 1) + _function(91, 3, 0)


def test_nested_adaptors_give_a_serial_runs_statistics(executor: ChildExecutor) -> None:
    expected_pm = _build_nested()
    serial_ir = _run(expected_pm, _nested_input())
    expected = statistics_report(expected_pm)
    pm = _build_nested()
    pm.executor = executor
    assert _run(pm, _nested_input()) == serial_ir
    assert statistics_report(pm) == expected
    # MixedCounter on the inner modules (never @f3: counts 3) and on the two
    # outer functions; CSE over the outer functions: @f91, 3 merges counted twice;
    # CSE in the inner modules: the last function of the last module, @f25.
    assert expected == HEADER + (
        "Pipeline Collection : ['builtin.module', 'func.func']\n"
        "  'builtin.module' Pipeline\n"
        "    'func.func' Pipeline\n"
        "      CSE\n"
        "        (S) 4 num-cse'd - Number of operations CSE'd\n"
        "        (S) 2 num-dce'd - Number of operations DCE'd\n"
        "      TestStatisticPass\n"
        "        (S) 54 num-ops  - Number of operations counted\n"
        "        (S) 54 num-ops2 - Number of operations counted one more time\n"
        "    MixedModuleCounter\n"
        "      (S) 3 doubled - Twice the functions seen, minus one each\n"
        "      (S) 3 seen    - Functions seen (assigned 100 on @f3)\n"
        "  'func.func' Pipeline\n"
        "    CSE\n"
        "      (S) 6 num-cse'd - Number of operations CSE'd\n"
        "      (S) 0 num-dce'd - Number of operations DCE'd\n"
        "    MixedCounter\n"
        "      (S) 2 doubled - Twice the functions seen, minus one each\n"
        "      (S) 2 seen    - Functions seen (assigned 100 on @f3)\n"
        "\n"
    )


def _stage(pm: OpPassManager) -> None:
    _add_all(pm, CSE, TestStatisticPass)


def test_statistics_of_a_schedules_stages_on_every_executor(
    executor: ChildExecutor,
) -> None:
    # A schedule nested on functions runs its stages' passes itself: a worker
    # runs the stages of its clone of the schedule.
    graph = PipelineGraph("per-func", anchor="func.func")
    graph.register_pipeline("stage", populate=_stage)
    schedule = graph.create_schedule().as_pass()
    pm = PassManager("builtin.module")
    pm.nest("func.func").add(schedule)
    pm.executor = executor
    _run(pm)
    [stage] = schedule.nested_pipelines()
    cse, counter = stage.passes
    # @f5's CSE counts; 3 ops per function once CSE is done.
    assert [value for _, value in statistic_values(cse)] == [4, 2]
    assert [value for _, value in statistic_values(counter)] == [18, 18]
    assert [value for _, value in statistic_values(schedule)] == [len(SHAPES), 0]


# --- a pass's own output between the diagnostics -----------------------------------


class Shouter(OperationPass):
    """Writes to stdout and stderr, around a warning."""

    argument = "shouter"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        name = ir.symbol_name(self.get_operation())
        print(f"out: {name}")
        sys.stderr.write(f"before warning on {name}\n")
        self.emit_warning(self.get_operation(), f"warning on {name}")
        print(f"after warning on {name}", file=sys.stderr, flush=True)


def _transcript(
    executor: ChildExecutor | None, capsys: pytest.CaptureFixture[str]
) -> tuple[str, str]:
    """stdout and stderr of a run whose diagnostics are printed to stderr as they
    are delivered, as passflow-opt prints them."""
    pm = PassManager("builtin.module")
    _add_all(pm.nest("func.func"), TestLivenessPass, TestInterfacePass, Shouter)
    pm.executor = executor

    def show(diagnostic: Diagnostic) -> None:
        sys.stderr.write(f"{diagnostic}\n")

    pm.add_diagnostic_handler(show)
    capsys.readouterr()
    _run(pm)
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_output_falls_between_the_diagnostics_as_in_a_serial_run(
    executor: ChildExecutor, capsys: pytest.CaptureFixture[str]
) -> None:
    out, err = _transcript(executor, capsys)
    assert (out, err) == _transcript(None, capsys)
    assert out == "".join(f"out: f{i}\n" for i in range(len(SHAPES)))
    # Per function, in program order: the liveness dump, the remark, the text
    # before the warning, the warning, the text after it.
    markers = [
        line
        for line in err.splitlines()
        if line.startswith(("Testing :", "input.mlir", "before", "after"))
    ]
    lines = [_line_of(i) for i in range(len(SHAPES))]
    assert markers == [
        text
        for i, line in enumerate(lines)
        for text in (
            f"Testing : f{i}",
            f"input.mlir:{line}:1: remark: Executing interface pass on operation",
            f"before warning on f{i}",
            f"input.mlir:{line}:1: warning: warning on f{i}",
            f"after warning on f{i}",
        )
    ]


def _line_of(function: int) -> int:
    """The line `@f<function>` starts on in INPUT."""
    return 1 + sum(dup + dead + 4 for dup, dead in SHAPES[:function])


# --- passflow-opt --------------------------------------------------------------------


def test_passflow_opt_prints_the_same_report_and_stderr_whatever_the_executor(
    tmp_path: Path,
) -> None:
    source = tmp_path / "in.mlir"
    # Enough functions that the process executor may fork past its serial budget;
    # the outcome must not depend on whether it did.
    source.write_text(
        "".join(_function(i, *SHAPES[i % len(SHAPES)]) for i in range(20 * len(SHAPES)))
    )
    pipeline = (
        "builtin.module(func.func(cse,canonicalize,test-stats-pass,"
        "test-print-liveness,test-interface-pass))"
    )
    results: dict[str, tuple[int, str, str]] = {}
    for kind in ("serial", "thread", "process"):
        out = tmp_path / f"{kind}.mlir"
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "passflow.tools.opt",
                str(source),
                "-p",
                pipeline,
                "--mlir-pass-statistics",
                f"--executor={kind}",
                "--jobs=2",
                "-o",
                str(out),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        results[kind] = (done.returncode, done.stderr, out.read_text())
    assert results["thread"] == results["serial"]
    assert results["process"] == results["serial"]
    status, err, _ = results["serial"]
    assert status == 0
    assert err.endswith(
        HEADER + "'func.func' Pipeline\n"
        "  CSE\n"
        "    (S) 4 num-cse'd - Number of operations CSE'd\n"
        "    (S) 2 num-dce'd - Number of operations DCE'd\n"
        "  Canonicalizer\n"
        "  TestStatisticPass\n"
        "    (S) 360 num-ops  - Number of operations counted\n"
        "    (S) 360 num-ops2 - Number of operations counted one more time\n"
        "  TestLivenessPass\n"
        "  TestInterfacePass\n"
        "\n"
    )


# --- the mechanism -------------------------------------------------------------------


class _Counted(OperationPass):
    added = Statistic("added")
    assigned = Statistic("assigned")
    untouched = Statistic("untouched")

    def run_on_operation(self) -> None:
        self.added += 3
        self.added = 2 + self.added - 1
        self.assigned += 5
        self.assigned = 7  # what came before is forgotten
        self.assigned += 1

    def set_all(self, value: int) -> None:
        self.added = self.assigned = self.untouched = value

    def values(self) -> tuple[int, int, int]:
        return (self.added, self.assigned, self.untouched)


def test_effects_tell_counting_from_assigning() -> None:
    pass_ = _Counted()
    arm_statistics(pass_)
    pass_.run_on_operation()
    added, assigned, _ = pass_.values()
    assert isinstance(added, Relative)
    assert not isinstance(assigned, Relative)
    effects = take_statistic_effects(pass_)
    assert effects == ({"added": 4}, {"assigned": 8})
    assert pass_.values() == (0, 0, 0)

    into = _Counted()
    into.set_all(10)
    apply_statistic_effects(into, effects)
    assert into.values() == (14, 8, 10)
    # Applied to an armed pass (a nested run), additions stay relative.
    arm_statistics(into)
    apply_statistic_effects(into, effects)
    assert take_statistic_effects(into) == ({"added": 4}, {"assigned": 8})
