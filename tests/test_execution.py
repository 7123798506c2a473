"""Executors: every one gives a serial run's IR and diagnostics (reference §11).

The corpus runs through serial, threads, forked processes, a wrapped
`ThreadPoolExecutor`, a wrapped `ProcessPoolExecutor` and a local Dask cluster,
and must come out byte-identical, failures included. The rest checks MLIR's
threading semantics (clones, statistics, parent info, analysis managers) and
that a worker which raises, dies or hangs costs its child and nothing else.
"""

from __future__ import annotations

import os
import pathlib
import signal
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from typing import ClassVar, cast

import pytest

from passflow import (
    OperationPass,
    Pass,
    PassInstrumentation,
    PassManager,
    PassPipelineError,
    PipelineParentInfo,
    ir,
)
from passflow.analysis import AnalysisManager
from passflow.diagnostics import PassflowError
from passflow.execution import ChildExecutor
from passflow.executors import (
    SerialExecutor,
    ThreadExecutor,
    as_child_executor,
    make_executor,
    threading_disabled,
)
from passflow.executors.forking import ProcessExecutor
from passflow.executors.shipping import ShippingExecutor
from passflow.executors.transfer import Decoder, Encoder
from passflow.instruments.ir_printing import IRPrinterConfig
from passflow.pass_base import walk_passes
from passflow.pipeline_text import parse_pass_pipeline
from passflow.statistics import statistic_values
from passflow.testing import TestStatisticPass

# --- passes used by the corpus -----------------------------------------------------


class FailNamed(OperationPass):
    """Fails (with an error) on the functions named in `names`."""

    argument = "fail-named"
    op_name = "func.func"

    def __init__(self, *names: str) -> None:
        super().__init__()
        self.names = names

    def run_on_operation(self) -> None:
        op = self.get_operation()
        if ir.symbol_name(op) in self.names:
            self.emit_op_error(op, "refused by fail-named")
            self.signal_pass_failure()
        else:
            self.emit_remark(op, "accepted by fail-named")


class TagWithCount(OperationPass):
    """Adds an attribute counting the ops in the function (changes every child)."""

    argument = "tag-with-count"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        from xdsl.dialects.builtin import IntegerAttr, i64

        op = self.get_operation()
        op.attributes["op_count"] = IntegerAttr(sum(1 for _ in op.walk()), i64)


class KillNamed(OperationPass):
    """Kills its own process on the named function (only ever run in workers)."""

    argument = "kill-named"
    op_name = "func.func"

    def __init__(self, name: str, how: str) -> None:
        super().__init__()
        self.name_ = name
        self.how = how

    def run_on_operation(self) -> None:
        op = self.get_operation()
        if ir.symbol_name(op) != self.name_:
            return
        if self.how == "exit":
            os._exit(3)
        if self.how == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.how == "hang":
            time.sleep(60)
        if self.how == "unpicklable":
            from xdsl.dialects.builtin import UnitAttr

            op.attributes["touched"] = UnitAttr()
            terminator = op.regions[0].blocks.first.last_op  # type: ignore[union-attr]
            vars(terminator)["_cache"] = lambda: None  # fine here, cannot travel


def _arith_functions(count: int) -> str:
    out: list[str] = []
    for i in range(count):
        out.append(
            f"func.func @f{i}(%a: i32, %b: i32) -> i32 {{\n"
            f"  %c = arith.constant {i} : i32\n"
            "  %0 = arith.addi %a, %c : i32\n"
            "  %1 = arith.addi %a, %c : i32\n"
            "  %2 = arith.muli %0, %1 : i32\n"
            "  %3 = arith.subi %2, %2 : i32\n"
            "  %4 = arith.addi %3, %b : i32\n"
            "  func.return %4 : i32\n"
            "}\n"
        )
    return "".join(out)


def _line_of(function: int) -> int:
    """The line `@f<function>` starts on in `_arith_functions`' text."""
    return 9 * function + 1


CFG = """\
func.func @cfg(%c: i1, %v: i32) -> i32 {
  cf.cond_br %c, ^bb1(%v : i32), ^bb2
^bb1(%p: i32):
  %y = arith.addi %p, %v : i32
  func.return %y : i32
^bb2:
  %x = arith.constant 4 : i32
  cf.br ^bb1(%x : i32)
}
func.func @loc() -> i32 {
  %a = arith.constant 1 : i32 loc("elsewhere.mlir":7:3)
  %b = arith.addi %a, %a : i32
  "test.opaque"(%b) {tag = [1, "x"]} : (i32) -> ()
  func.return %b : i32
}
func.func @decl(%x: f32) -> f32
"""

NESTED = """\
builtin.module @m1 {
  func.func @a() {
    %0 = arith.constant 1 : i32
    %1 = arith.constant 1 : i32
    func.return
  }
  func.func @b() {
    func.return
  }
}
builtin.module @m2 {
  func.func @c() {
    %0 = arith.constant 2 : i32
    %1 = arith.addi %0, %0 : i32
    func.return
  }
}
func.func @top() {
  %0 = arith.constant 3 : i32
  %1 = arith.constant 3 : i32
  func.return
}
"""

# Calls between children: a worker verifies a call with its callee beside it
# (a sibling, the caller itself; a nested module that an attribute names goes along), and one whose
# callee exists nowhere fails there as it does here.
CALLS = (
    """\
func.func @callee(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  func.return %0 : i32
}
builtin.module @lib {
  func.func @inner(%a: i32) -> i32 {
    func.return %a : i32
  }
}
func.func @caller(%a: i32) -> i32 {
  %c = arith.constant 0 : i32
  %0 = arith.addi %a, %c : i32
  %1 = func.call @callee(%0) : (i32) -> i32
  "test.uses"() {of = [@lib::@inner]} : () -> ()
  %3 = func.call @caller(%1) : (i32) -> i32
  func.return %3 : i32
}
"""
    + _arith_functions(4)
    + """\
func.func @late(%a: i32) -> i32 {
  %0 = func.call @f3(%a, %a) : (i32, i32) -> i32
  %1 = func.call @callee(%0) : (i32) -> i32
  func.return %1 : i32
}
"""
)
CALL_TO_NOWHERE = (
    _arith_functions(3)
    + """\
func.func @missing(%a: i32) -> i32 {
  %c = arith.constant 0 : i32
  %0 = arith.addi %a, %c : i32
  %1 = func.call @nowhere(%0) : (i32) -> i32
  func.return %1 : i32
}
"""
)


def _text(pipeline: str) -> Callable[[], PassManager]:
    def build() -> PassManager:
        pm = PassManager("builtin.module")
        pm.assign(parse_pass_pipeline(pipeline))
        return pm

    return build


def _fail_pipeline() -> PassManager:
    pm = PassManager("builtin.module")
    fpm = pm.nest("func.func")
    fpm.add(FailNamed("f2", "f5"))
    fpm.add(TagWithCount())
    return pm


def _tag_pipeline() -> PassManager:
    pm = PassManager("builtin.module")
    pm.nest("func.func").add(TagWithCount())
    return pm


# (name, input, pipeline): outputs and diagnostics must not depend on the executor.
CORPUS: list[tuple[str, str, Callable[[], PassManager]]] = [
    (
        "canonicalize-cse",
        _arith_functions(12),
        _text("builtin.module(func.func(canonicalize,cse))"),
    ),
    ("fails-on-two", _arith_functions(8), _fail_pipeline),
    ("crash", _arith_functions(4), _text("builtin.module(func.func(test-pass-crash))")),
    (
        "failure-diagnostics",
        _arith_functions(5),
        _text("builtin.module(func.func(test-pass-failure{gen-diagnostics=true}))"),
    ),
    (
        "invalid-ir",
        _arith_functions(3),
        _text("builtin.module(func.func(test-pass-create-invalid-ir))"),
    ),
    (
        "remarks-and-stats",
        _arith_functions(6),
        _text("builtin.module(func.func(test-interface-pass,test-stats-pass,cse))"),
    ),
    (
        "cfg-locations-unregistered",
        CFG,
        _text("builtin.module(func.func(cse,canonicalize))"),
    ),
    ("tags", CFG + _arith_functions(3), _tag_pipeline),
    (
        "nested-modules",
        NESTED,
        _text("builtin.module(builtin.module(func.func(cse)),func.func(cse))"),
    ),
    (
        "collection-and-failure",
        NESTED,
        _text(
            "builtin.module(builtin.module(test-stats-pass,func.func(cse)),"
            "func.func(test-pass-failure))"
        ),
    ),
    ("calls", CALLS, _text("builtin.module(func.func(canonicalize,cse))")),
    (
        "call-to-nowhere",
        CALL_TO_NOWHERE,
        _text("builtin.module(func.func(canonicalize,cse))"),
    ),
]


def _run(
    text: str,
    build: Callable[[], PassManager],
    executor: ChildExecutor | None,
) -> tuple[str, list[str], bool, list[tuple[str, list[int]]]]:
    """Printed IR, diagnostics, success and statistics of one run."""

    ctx = ir.default_context(allow_unregistered=True)
    module = ir.parse_module(text, ctx, "corpus.mlir")
    pm = build()
    pm.context = ctx
    pm.executor = executor
    seen: list[str] = []
    pm.add_diagnostic_handler(lambda d: seen.append(str(d)))
    try:
        pm.run(module)
        ok = True
    except PassPipelineError:
        ok = False
    # Every statistic reads as after a serial run, counted or assigned
    # (tests/test_statistics_executors.py).
    stats = [
        (p.name, [v for _, v in statistic_values(p)])
        for p in walk_passes([pm])
        if isinstance(p, TestStatisticPass)
    ]
    return ir.print_op(module), seen, ok, stats


EXECUTORS = ["thread", "process", "thread-pool", "process-pool", "dask"]


@pytest.fixture(params=EXECUTORS)
def executor(
    request: pytest.FixtureRequest, process_pool: ProcessPoolExecutor
) -> Iterator[ChildExecutor]:
    kind: str = request.param
    made: ChildExecutor
    if kind == "thread":
        made = ThreadExecutor(2)
    elif kind == "process":
        made = ProcessExecutor(2, serial_budget=0, timeout=60)
    elif kind == "thread-pool":
        made = as_child_executor(ThreadPoolExecutor(2)) or SerialExecutor()
    elif kind == "process-pool":
        made = ShippingExecutor(process_pool, jobs=2)
    else:
        from passflow.executors.dask import DaskExecutor

        made = DaskExecutor(request.getfixturevalue("dask_client"))
    yield made
    made.close()


@pytest.mark.parametrize(("name", "text", "build"), CORPUS, ids=[c[0] for c in CORPUS])
def test_every_executor_matches_a_serial_run(
    executor: ChildExecutor,
    name: str,
    text: str,
    build: Callable[[], PassManager],
) -> None:
    expected = _run(text, build, None)
    assert _run(text, build, executor) == expected
    # A second run with the same executor (clones and pools reused) too.
    assert _run(text, build, executor) == expected


def test_the_corpus_covers_failures_crashes_and_remarks() -> None:
    outcomes = {name: _run(text, build, None) for name, text, build in CORPUS}
    failed = {name for name, (_, _, ok, _) in outcomes.items() if not ok}
    assert failed == {
        "fails-on-two",
        "crash",
        "failure-diagnostics",
        "invalid-ir",
        "collection-and-failure",
        "call-to-nowhere",
    }
    assert any(
        "'@nowhere' could not be found" in d for d in outcomes["call-to-nowhere"][1]
    )
    assert any("crashed" in d for d in outcomes["crash"][1])
    assert sum("remark:" in d for d in outcomes["remarks-and-stats"][1]) == 6


def test_failures_are_reported_for_every_child_in_order() -> None:
    ir_text, diagnostics, ok, _ = _run(
        _arith_functions(8), _fail_pipeline, ProcessExecutor(2, serial_budget=0)
    )
    assert not ok
    errors = [d for d in diagnostics if ": error: " in d]
    assert [e.split(":")[1] for e in errors] == [str(_line_of(2)), str(_line_of(5))]
    assert sum("remark: accepted" in d for d in diagnostics) == 6
    # the tagging pass ran on the six other functions only
    assert ir_text.count("op_count") == 6
    original = ir.direct_children(ir.parse_module(_arith_functions(8)))
    for index, function in enumerate(original):
        printed = textwrap.indent(ir.print_op(function), "  ")
        assert (printed in ir_text) == (index in (2, 5))


# --- MLIR's threading semantics ----------------------------------------------------


class WhoRan(OperationPass):
    """Records which instance ran on which function."""

    argument = "who-ran"
    op_name = "func.func"
    seen: ClassVar[list[tuple[int, str | None]]] = []

    def run_on_operation(self) -> None:
        WhoRan.seen.append((id(self), ir.symbol_name(self.get_operation())))


def test_threads_run_clones_reused_until_the_pipeline_changes(
    parse: Callable[[str], ir.ModuleOp],
) -> None:
    WhoRan.seen.clear()
    pm = PassManager()
    original = WhoRan()
    pm.nest("func.func").add(original)
    executor = ThreadExecutor(2)
    pm.executor = executor
    pm.run(parse(_arith_functions(6)))
    first = {who for who, _ in WhoRan.seen}
    assert id(original) not in first
    assert 1 <= len(first) <= 2
    assert sorted(name or "" for _, name in WhoRan.seen) == sorted(
        f"f{i}" for i in range(6)
    )
    WhoRan.seen.clear()
    pm.run(parse(_arith_functions(6)))
    assert {who for who, _ in WhoRan.seen} <= first
    pm.passes[0].managers[0].add(WhoRan())  # type: ignore[attr-defined]
    WhoRan.seen.clear()
    pm.run(parse(_arith_functions(6)))
    assert not ({who for who, _ in WhoRan.seen} & first)
    executor.close()


@pytest.mark.parametrize("kind", ["thread", "process"])
def test_statistics_of_clones_are_summed_into_the_originals(kind: str) -> None:
    executor = (
        ThreadExecutor(2) if kind == "thread" else ProcessExecutor(2, serial_budget=0)
    )
    pm = PassManager()
    stats = TestStatisticPass()
    pm.nest("func.func").add(stats)
    pm.executor = executor
    ran = PassRecorder()
    if kind == "thread":  # instrumented runs stay in the process: threads only
        pm.add_instrumentation(ran)
    text = _arith_functions(5)
    pm.run(ir.parse_module(text))
    ops_per_function = 8
    assert stats.num_ops == 5 * ops_per_function
    pm.run(ir.parse_module(text))  # statistics persist across runs, as in MLIR
    assert stats.num_ops == stats.num_ops2 == 10 * ops_per_function
    if kind == "thread":
        clones = [p for p in ran.passes if p is not stats]
        assert clones  # the workers ran clones, whose counts went to `stats`
        assert all(isinstance(p, TestStatisticPass) and p.num_ops == 0 for p in clones)
    executor.close()


class PassRecorder(PassInstrumentation):
    """Every pass object that ran, once each."""

    def __init__(self) -> None:
        self.passes: list[Pass] = []

    def run_after_pass(self, pass_: Pass, op: ir.Operation) -> None:
        if not pass_.is_adaptor and all(p is not pass_ for p in self.passes):
            self.passes.append(pass_)


class ParentRecorder(PassInstrumentation):
    def __init__(self) -> None:
        self.parents: list[tuple[PipelineParentInfo, int]] = []
        self.ops: list[ir.Operation] = []

    def run_before_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        self.parents.append((parent, threading.get_ident()))

    def run_before_pass(self, pass_: Pass, op: ir.Operation) -> None:
        self.ops.append(op)


@pytest.mark.parametrize("kind", ["thread", "process", "process-pool"])
def test_hooks_get_the_spawning_thread_and_the_original_adaptor(
    kind: str, process_pool: ProcessPoolExecutor
) -> None:
    executor: ChildExecutor = {
        "thread": lambda: ThreadExecutor(2),
        "process": lambda: ProcessExecutor(2, serial_budget=0),
        "process-pool": lambda: ShippingExecutor(process_pool),
    }[kind]()
    pm = PassManager()
    pm.nest("func.func").add(WhoRan())
    recorder = ParentRecorder()
    pm.add_instrumentation(recorder)
    pm.executor = executor
    module = ir.parse_module(_arith_functions(6))
    pm.run(module)
    adaptor = pm.passes[0]
    assert len(recorder.parents) == 6
    me = threading.get_ident()
    assert all(
        info.parent_thread_id == me and info.parent_pass is adaptor
        for info, _ in recorder.parents
    )
    # Instrumented runs of the out-of-process executors stay in this process:
    # the hooks saw this module's own function ops.
    functions = ir.direct_children(module)
    assert [
        op for op in recorder.ops if op is not module
    ] == functions or kind == "thread"
    assert {op for op in recorder.ops if op is not module} == set(functions)
    executor.close()


def test_analysis_managers_are_made_on_the_spawning_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threads: list[int] = []
    nest = AnalysisManager.nest

    def recording_nest(self: AnalysisManager, op: ir.Operation) -> AnalysisManager:
        threads.append(threading.get_ident())
        return nest(self, op)

    monkeypatch.setattr(AnalysisManager, "nest", recording_nest)
    pm = PassManager()
    pm.nest("func.func").add(WhoRan())
    executor = ThreadExecutor(2)
    pm.executor = executor
    pm.run(ir.parse_module(_arith_functions(6)))
    assert threads and set(threads) == {threading.get_ident()}
    executor.close()


# --- workers that raise, die or hang -------------------------------------------


@pytest.mark.parametrize(
    ("how", "reason"),
    [
        ("exit", "died (exit code 3)"),
        ("kill", "died (killed by signal SIGKILL)"),
        ("hang", "died (timed out after 2 s)"),
        ("unpicklable", "raised AttributeError: Can't pickle"),
    ],
)
def test_a_broken_worker_costs_one_child(how: str, reason: str) -> None:
    text = _arith_functions(6)

    def build(victim: bool) -> Callable[[], PassManager]:
        def make() -> PassManager:
            pm = PassManager()
            fpm = pm.nest("func.func")
            if victim:
                fpm.add(KillNamed("f3", how))
            fpm.add(parse_pass_pipeline("func.func(canonicalize)").passes[0])
            return pm

        return make

    # Every child on a worker: @f3 must not kill or hang this process.
    executor = ProcessExecutor(
        2, serial_budget=0, timeout=2, parent_runs_children=False
    )
    printed, diagnostics, ok, _ = _run(text, build(True), executor)
    assert not ok
    assert len(diagnostics) == 1
    assert diagnostics[0].startswith(
        f"corpus.mlir:{_line_of(3)}:1: error: worker process "
    )
    assert reason in diagnostics[0]
    assert "'func.func(kill-named,canonicalize" in diagnostics[0]
    # Every other function was canonicalized exactly as serially; @f3 was not.
    serial, _, _, _ = _run(text, build(False), None)
    assert printed.split("func.func @f3")[0] == serial.split("func.func @f3")[0]
    assert printed.split("func.func @f4")[1] == serial.split("func.func @f4")[1]
    assert "arith.subi" in printed.split("func.func @f3")[1].split("func.func @f4")[0]


class KillFirstInWorker(OperationPass):
    """SIGKILLs the first worker process that runs it, once per token file."""

    argument = "kill-first-in-worker"
    op_name = "func.func"

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token
        self.home = os.getpid()

    def run_on_operation(self) -> None:
        if os.getpid() == self.home:
            return
        try:
            os.close(os.open(self.token, os.O_CREAT | os.O_EXCL))
        except FileExistsError:
            return
        os.kill(os.getpid(), signal.SIGKILL)


def test_a_dying_worker_costs_one_child_while_the_parent_runs_children(
    tmp_path: pathlib.Path,
) -> None:
    token = str(tmp_path / "killed")

    def build(victim: bool) -> Callable[[], PassManager]:
        def make() -> PassManager:
            pm = PassManager()
            fpm = pm.nest("func.func")
            if victim:
                fpm.add(KillFirstInWorker(token))
            fpm.add(parse_pass_pipeline("func.func(canonicalize)").passes[0])
            return pm

        return make

    text = _arith_functions(12)
    executor = ProcessExecutor(2, serial_budget=0, timeout=30)
    printed, diagnostics, ok, _ = _run(text, build(True), executor)
    assert os.path.exists(token)
    assert not ok
    assert len(diagnostics) == 1
    assert "died (killed by signal SIGKILL)" in diagnostics[0]
    victim = next(
        i for i in range(12) if diagnostics[0].startswith(f"corpus.mlir:{_line_of(i)}:")
    )
    serial, _, _, _ = _run(text, build(False), None)

    def functions(printed: str) -> list[str]:
        return printed.split("func.func @")[1:]

    got, want = functions(printed), functions(serial)
    assert [g for i, g in enumerate(got) if i != victim] == [
        w for i, w in enumerate(want) if i != victim
    ]
    assert "arith.subi" in got[victim]
    # The parent ran children itself, and at least the victim went to a worker.
    assert 0 < executor.profile.in_parent < 12


def test_unchanged_children_are_not_sent_back() -> None:
    executor = ProcessExecutor(2, serial_budget=0, parent_runs_children=False)
    pm = PassManager()
    pm.nest("func.func").add(WhoRan())
    pm.executor = executor
    pm.run(ir.parse_module(_arith_functions(6)))
    assert executor.profile.children == 6
    assert executor.profile.shipped == 0
    pm.nest("func.func").add(TagWithCount())
    pm.run(ir.parse_module(_arith_functions(6)))
    assert executor.profile.shipped == 6


def test_small_runs_stay_serial() -> None:
    executor = ProcessExecutor(2)  # the default serial budget
    pm = PassManager()
    pm.nest("func.func").add(WhoRan())
    pm.executor = executor
    pm.run(ir.parse_module(_arith_functions(3)))
    assert executor.profile.runs == 0


class SlowFirst(OperationPass):
    """Takes `seconds` on @f0 only; the rest are instant."""

    argument = "slow-first"
    op_name = "func.func"

    def __init__(self, seconds: float = 0.3) -> None:
        super().__init__()
        self.seconds = seconds

    def run_on_operation(self) -> None:
        if ir.symbol_name(self.get_operation()) == "f0":
            time.sleep(self.seconds)


def test_children_past_the_serial_budget_are_forked() -> None:
    def build() -> PassManager:
        pm = PassManager()
        fpm = pm.nest("func.func")
        fpm.add(SlowFirst())
        fpm.add(TagWithCount())
        return pm

    executor = ProcessExecutor(2, serial_budget=0.1)
    assert _run(_arith_functions(6), build, executor) == _run(
        _arith_functions(6), build, None
    )
    assert executor.profile.runs == 1
    assert executor.profile.children == 5  # @f0 ran before forking
    # Each of the five ran here or came back changed from a worker.
    assert executor.profile.in_parent + executor.profile.shipped == 5


def test_a_remainder_cheaper_than_a_fork_is_run_here() -> None:
    # After @f0 (0.25 s) the budget is spent, but one more child at that pace is
    # estimated at 0.25 s, less than twice the budget: forking would not pay.
    def build() -> PassManager:
        pm = PassManager()
        pm.nest("func.func").add(SlowFirst(0.25))
        return pm

    executor = ProcessExecutor(2, serial_budget=0.2)
    assert _run(_arith_functions(2), build, executor) == _run(
        _arith_functions(2), build, None
    )
    assert executor.profile.runs == 0
    # With more children at that pace, the rest is worth forking for.
    executor = ProcessExecutor(2, serial_budget=0.2)
    _run(_arith_functions(4), build, executor)
    assert executor.profile.runs == 1


# --- the codec ---------------------------------------------------------------------


def test_transfer_round_trip_keeps_text_locations_and_forward_uses(
    ctx: ir.Context,
) -> None:
    module = ir.parse_module(CFG, ctx, "cfg.mlir")
    copy = ir.parse_module(CFG, ctx, "cfg.mlir")
    sources = [ir.direct_children(module)[0]]
    from passflow.executors.transfer import shared_candidates

    shared = shared_candidates(sources)
    encoder = Encoder(shared)
    decoder = Decoder(ctx, shared)
    for original, target in zip(
        ir.direct_children(module), ir.direct_children(copy), strict=True
    ):
        original.attributes["marked"] = original.properties["sym_name"]
        _send(encoder, decoder, original, target)
        assert target is not original
    assert ir.print_op(copy) == ir.print_op(module)
    assert [ir.location(op) for op in copy.walk()] == [
        ir.location(op) for op in module.walk()
    ]
    assert ir.verify(copy) is None


def _send(
    encoder: Encoder, decoder: Decoder, source: ir.Operation, target: ir.Operation
) -> None:
    """Encode `source`, decode the message and splice it into `target`."""
    message = encoder.dumps((encoder.header(source), encoder.regions(source)))
    header, regions = cast(
        tuple[tuple[object, ...], tuple[object, ...]], decoder.loads(message)
    )
    decoder.splice(target, header, regions)


def _first_op(function: ir.Operation) -> ir.Operation:
    block = function.regions[0].blocks.first
    assert block is not None and block.first_op is not None
    return block.first_op


def test_a_failed_message_leaves_the_stream_in_step(ctx: ir.Context) -> None:
    module = ir.parse_module(_arith_functions(2), ctx)
    first, second = ir.direct_children(module)
    encoder = Encoder([])
    decoder = Decoder(ctx, [])
    vars(_first_op(first))["_cache"] = lambda: None
    with pytest.raises(Exception, match="pickle"):
        encoder.dumps(encoder.regions(first))
    target = ir.parse_module(_arith_functions(2), ctx)
    _send(encoder, decoder, second, ir.direct_children(target)[1])
    del vars(_first_op(first))["_cache"]
    assert ir.print_op(target) == ir.print_op(module)


# --- choosing ----------------------------------------------------------------------


def test_make_executor() -> None:
    assert isinstance(make_executor("serial"), SerialExecutor)
    assert isinstance(make_executor("thread", 1), SerialExecutor)
    assert isinstance(make_executor("process", 1), SerialExecutor)
    made = make_executor("thread", 3)
    assert isinstance(made, ThreadExecutor) and made.jobs == 3
    process = make_executor("process", 2)
    assert isinstance(process, ProcessExecutor) and process.jobs == 2
    with pytest.raises(PassflowError, match="unknown executor 'gpu'"):
        make_executor("gpu")
    with pytest.raises(PassflowError, match="needs the dask executor"):
        make_executor("thread", 2, "tcp://127.0.0.1:1")
    with pytest.raises(PassflowError, match="at least 1"):
        make_executor("process", 0)


def test_as_child_executor_wraps_futures_executors(
    process_pool: ProcessPoolExecutor,
) -> None:
    serial = SerialExecutor()
    assert as_child_executor(serial) is serial
    assert as_child_executor(None) is None
    with ThreadPoolExecutor(2) as pool:
        assert isinstance(as_child_executor(pool), ThreadExecutor)
    assert isinstance(as_child_executor(process_pool), ShippingExecutor)


def test_dask_honours_the_configurations_encryption_requirement() -> None:
    # The client trusts what the scheduler sends back (it unpickles results), so
    # Dask's own security settings must hold: with encryption required, a plain
    # TCP scheduler is refused, as a passflow error naming it.
    from dask import config

    from passflow.executors.dask import DaskExecutor

    with (
        config.set({"distributed.comm.require-encryption": True}),
        pytest.raises(PassflowError) as info,
    ):
        DaskExecutor("tcp://127.0.0.1:1")
    assert str(info.value) == (
        "cannot connect to the Dask scheduler 'tcp://127.0.0.1:1': encryption "
        "required by Dask configuration, refusing communication from/to "
        "'tcp://127.0.0.1:1'"
    )


@pytest.mark.parametrize(
    ("make", "disabled"),
    [
        (lambda: None, True),
        (SerialExecutor, True),
        (lambda: ThreadExecutor(1), True),
        (lambda: ProcessExecutor(1), True),
        (lambda: make_executor("thread", 1), True),
        (lambda: ThreadExecutor(2), False),
        (lambda: ProcessExecutor(2), False),
    ],
)
def test_one_rule_says_whether_threading_is_disabled(
    make: Callable[[], ChildExecutor | None], disabled: bool
) -> None:
    executor = make()
    assert threading_disabled(executor) is disabled
    pm = PassManager(executor=executor)
    assert pm.threading_disabled is disabled
    config = IRPrinterConfig(after_all=True, module_scope=True)
    if disabled:  # module-scope printing needs every child on this thread
        pm.enable_ir_printing(config)
    else:
        with pytest.raises(PassflowError, match="multi-threading"):
            pm.enable_ir_printing(config)
    pm.close()
