"""Actions: pass executions through a handler, observers, the debug counter,
location filters and `failed to run pass` errors (MLIR's `mlir/lib/Debug`)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from xdsl.dialects import arith, builtin

from passflow import (
    OperationPass,
    Pass,
    PassInstrumentation,
    PassManager,
    PassPipelineError,
    actions,
    ir,
)
from passflow.actions import (
    Action,
    ActionActiveStack,
    Breakpoint,
    DebugCounter,
    DebugCounterError,
    ExecutionContext,
    ExecutionObserver,
    LocationBreakpointManager,
    LocationFilterError,
    PassExecutionAction,
    describe_ir_unit,
    parse_location_filter,
)
from passflow.execution import ChildExecutor
from passflow.executors import ThreadExecutor
from passflow.executors.forking import ProcessExecutor
from passflow.instruments.action_logging import ActionLogger
from passflow.instruments.action_profiler import ActionProfiler
from passflow.pipeline_text import parse_pass_pipeline
from passflow.testing import TestFailurePass
from passflow.tools import opt

Parse = Callable[[str], ir.ModuleOp]

TWO = "func.func @a() {\n  func.return\n}\nfunc.func @b() {\n  func.return\n}\n"


def functions(count: int) -> str:
    return "".join(f"func.func @f{i}() {{\n  func.return\n}}\n" for i in range(count))


class Touch(OperationPass):
    """Records, on the class, the functions it ran on."""

    argument = "touch"
    op_name = "func.func"
    ran: list[str] = []

    def run_on_operation(self) -> None:
        type(self).ran.append(ir.symbol_name(self.get_operation()) or "?")
        self.mark_all_analyses_preserved()


class Other(Touch):
    argument = "other"
    ran: list[str] = []


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    Touch.ran = []
    Other.ran = []
    yield


def pipeline(*passes: Pass) -> PassManager:
    pm = PassManager()
    nested = pm.nest("func.func")
    for pass_ in passes:
        nested.add(pass_)
    return pm


class Recorder(ExecutionObserver):
    def __init__(self) -> None:
        self.events: list[tuple[str, str, int, bool]] = []

    def before_execute(
        self,
        stack: ActionActiveStack,
        breakpoint: Breakpoint | None,
        will_execute: bool,
    ) -> None:
        self.events.append(("before", label(stack.action), stack.depth, will_execute))

    def after_execute(self, stack: ActionActiveStack) -> None:
        self.events.append(("after", label(stack.action), stack.depth, True))


def label(action: Action) -> str:
    assert isinstance(action, PassExecutionAction)
    symbol = ir.symbol_name(action.op)
    return f"{action.pass_name}@{symbol}" if symbol else action.pass_name


ADAPTOR = "mlir::detail::OpToOpPassAdaptor"


# --- the action ----------------------------------------------------------------


def test_pass_execution_action_prints_as_mlir(parse: Parse) -> None:
    module = parse(TWO)
    func = ir.direct_children(module)[0]
    action = PassExecutionAction(Touch(), func)
    assert action.tag == "pass-execution"
    assert str(action) == "`pass-execution` running `Touch` on Operation `func.func`"
    assert list(action.ir_units) == [func]
    adaptor = PassExecutionAction(Touch(), module, is_adaptor=True)
    assert str(adaptor) == (
        f"`pass-execution` running `{ADAPTOR}` on Operation `builtin.module`"
    )


def test_base_action_prints_its_tag() -> None:
    class Custom(Action):
        tag = "custom"

    assert str(Custom()) == 'Action "custom"'
    assert list(Custom().ir_units) == []


def test_ir_units_print_with_regions_elided(parse: Parse) -> None:
    module = parse("func.func @f(%x: i32) -> i32 {\n  func.return %x : i32\n}\n")
    assert describe_ir_unit(module) == "module {...}"
    assert describe_ir_unit(ir.direct_children(module)[0]) == (
        "func.func @f(%x: i32) -> i32 {...}"
    )
    assert describe_ir_unit(parse("")) == "module {...}"


# --- running passes as actions -------------------------------------------------


def test_every_pass_execution_is_an_action_nested_in_its_adaptor(parse: Parse) -> None:
    recorder = Recorder()
    pm = pipeline(Touch(), Other())
    pm.register_action_handler(ExecutionContext(observers=[recorder]))
    pm.run(parse(TWO))
    assert recorder.events == [
        ("before", ADAPTOR, 0, True),
        ("before", "Touch@a", 1, True),
        ("after", "Touch@a", 1, True),
        ("before", "Other@a", 1, True),
        ("after", "Other@a", 1, True),
        ("before", "Touch@b", 1, True),
        ("after", "Touch@b", 1, True),
        ("before", "Other@b", 1, True),
        ("after", "Other@b", 1, True),
        ("after", ADAPTOR, 0, True),
    ]


def test_without_a_handler_no_action_is_built(
    parse: Parse, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("an action was built with no handler installed")

    monkeypatch.setattr(actions, "PassExecutionAction", refuse)
    pipeline(Touch()).run(parse(TWO))
    assert Touch.ran == ["a", "b"]


def test_a_plain_function_is_a_handler(parse: Parse) -> None:
    seen: list[str] = []

    def handler(transform: Callable[[], None], action: Action) -> None:
        seen.append(label(action))
        if label(action) != "Touch@b":
            transform()

    pm = pipeline(Touch())
    pm.register_action_handler(handler)
    pm.run(parse(TWO))
    assert seen == [ADAPTOR, "Touch@a", "Touch@b"]
    assert Touch.ran == ["a"]
    pm.register_action_handler(None)
    pm.run(parse(TWO))
    assert Touch.ran == ["a", "a", "b"]


class Hooks(PassInstrumentation):
    def __init__(self) -> None:
        self.events: list[str] = []

    def run_before_pass(self, pass_: Pass, op: ir.Operation) -> None:
        self.events.append(f"before {pass_.name}@{ir.symbol_name(op)}")

    def run_after_pass(self, pass_: Pass, op: ir.Operation) -> None:
        self.events.append(f"after {pass_.name}@{ir.symbol_name(op)}")

    def run_after_pass_failed(self, pass_: Pass, op: ir.Operation) -> None:
        self.events.append(f"failed {pass_.name}@{ir.symbol_name(op)}")


def skip_pass(kind: type[Pass]) -> Callable[[Callable[[], None], Action], None]:
    def handler(transform: Callable[[], None], action: Action) -> None:
        if not (isinstance(action, PassExecutionAction) and type(action.pass_) is kind):
            transform()

    return handler


def test_a_skipped_pass_still_fires_its_hooks_and_succeeds(parse: Parse) -> None:
    hooks = Hooks()
    pm = pipeline(Other())
    pm.add_instrumentation(hooks)
    pm.register_action_handler(skip_pass(Other))
    pm.run(parse(TWO))
    assert Other.ran == []
    assert "before Other@a" in hooks.events
    assert "after Other@a" in hooks.events
    assert not any(e.startswith("failed") for e in hooks.events)


class Count:
    """An analysis: built once per op until invalidated."""

    built = 0

    def __init__(self, op: ir.Operation) -> None:
        type(self).built += 1


class Compute(OperationPass):
    argument = "compute"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        self.get_analysis(Count)
        self.mark_all_analyses_preserved()


class Check(OperationPass):
    argument = "check"
    op_name = "func.func"
    cached: list[bool] = []

    def run_on_operation(self) -> None:
        type(self).cached.append(self.get_cached_analysis(Count) is not None)
        self.mark_all_analyses_preserved()


def test_a_skipped_pass_preserves_no_analysis(parse: Parse) -> None:
    Check.cached = []
    pm = pipeline(Compute(), Other(), Check())
    pm.run(parse(TWO))
    assert Check.cached == [True, True]  # Other ran and preserved everything
    Check.cached = []
    pm.register_action_handler(skip_pass(Other))
    pm.run(parse(TWO))
    assert Check.cached == [False, False]  # skipped: nothing was preserved


class BreakIR(OperationPass):
    """Makes the function invalid and claims to have changed nothing (so the
    verifier does not run after it)."""

    argument = "break-ir"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        block = self.get_operation().regions[0].blocks.first
        assert block is not None and block.first_op is not None
        block.insert_op_before(
            arith.ConstantOp.create(result_types=[builtin.i32]), block.first_op
        )
        self.mark_all_analyses_preserved()


def test_a_skipped_pass_is_verified(parse: Parse) -> None:
    pm = pipeline(BreakIR(), Other())
    pm.run(parse(TWO))  # Other preserved everything: nobody verified
    pm.register_action_handler(skip_pass(Other))
    with pytest.raises(PassPipelineError) as failure:
        pm.run(parse(TWO))
    assert "arith.constant" in str(failure.value)


class Crash(OperationPass):
    argument = "crash"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        raise RuntimeError("boom")


def test_a_crash_inside_an_action_is_the_pass_crashing(parse: Parse) -> None:
    recorder = Recorder()
    pm = pipeline(Crash())
    pm.register_action_handler(ExecutionContext(observers=[recorder]))
    with pytest.raises(PassPipelineError) as failure:
        pm.run(parse(TWO))
    crash = failure.value.diagnostics[0]
    assert "pass 'Crash' crashed on 'func.func' op: RuntimeError: boom" in str(crash)
    trace = crash.notes[0].message
    assert "_run_body" not in trace and "run_on_operation" in trace
    # The action completed (the crash was turned into a failure inside it).
    assert ("after", "Crash@a", 1, True) in recorder.events


@pytest.fixture(params=["thread", "process"])
def parallel(request: pytest.FixtureRequest) -> Iterator[ChildExecutor]:
    made: ChildExecutor = (
        ThreadExecutor(2)
        if request.param == "thread"
        else ProcessExecutor(2, serial_budget=0, timeout=60)
    )
    yield made
    made.close()


def test_actions_run_serially_in_program_order_whatever_the_executor(
    parse: Parse, parallel: ChildExecutor
) -> None:
    seen: list[tuple[str, int]] = []

    def handler(transform: Callable[[], None], action: Action) -> None:
        seen.append((label(action), threading.get_ident()))
        transform()

    pm = PassManager(executor=parallel)
    pm.nest("func.func").add(Touch())
    pm.register_action_handler(handler)
    pm.run(parse(functions(12)))
    assert [name for name, _ in seen] == [ADAPTOR] + [f"Touch@f{i}" for i in range(12)]
    assert {ident for _, ident in seen} == {threading.get_ident()}
    assert Touch.ran == [f"f{i}" for i in range(12)]


def test_a_counter_skips_the_same_functions_under_every_executor(
    parse: Parse, parallel: ChildExecutor
) -> None:
    counter = DebugCounter()
    counter.add_counter("pass-execution", count=5)
    pm = PassManager(executor=parallel)
    pm.nest("func.func").add(Touch())
    pm.register_action_handler(counter)
    pm.run(parse(functions(12)))
    # Action 1 is the adaptor, 2.. are f0, f1, ...: the first five run.
    assert Touch.ran == ["f0", "f1", "f2", "f3"]
    assert counter.counters["pass-execution"].count == 13


def test_skipping_an_adaptor_skips_its_whole_pipeline(parse: Parse) -> None:
    counter = DebugCounter()
    counter.add_counter("pass-execution", skip=1)
    pm = pipeline(Touch())
    pm.register_action_handler(counter)
    pm.run(parse(functions(4)))
    assert Touch.ran == []
    assert counter.counters["pass-execution"].count == 1


# --- the debug counter ---------------------------------------------------------


@pytest.mark.parametrize(
    ("skip", "count", "expected"),
    [
        (2, 3, "nnyyynn"),
        (0, -1, "yyyyyyy"),
        (0, 0, "nnnnnnn"),
        (3, -1, "nnnyyyy"),
        (-1, 0, "yyyyyyy"),  # a negative skip disables the counter
        (0, 2, "yynnnnn"),
    ],
)
def test_counter_window(skip: int, count: int, expected: str) -> None:
    counter = DebugCounter()
    counter.add_counter("x", skip, count)
    got = "".join("y" if counter.should_execute("x") else "n" for _ in expected)
    assert got == expected
    assert counter.should_execute("other-tag")  # no counter: always runs
    assert counter.counters["x"].count == len(expected)


def test_counter_from_arguments_and_report() -> None:
    counter = DebugCounter.from_arguments(
        ["pass-execution-skip=0x2,pass-execution-count=3", "", "zz-count=-1,,a-skip=1"]
    )
    assert counter.should_execute("pass-execution") is False
    assert counter.report() == (
        "DebugCounter counters:\n"
        "a                               : {0,1,-1}\n"
        "pass-execution                  : {1,2,3}\n"
        "zz                              : {0,0,-1}\n"
    )
    assert DebugCounter().report() == "DebugCounter counters:\n"
    with pytest.raises(ValueError, match="already registered"):
        counter.add_counter("a")


@pytest.mark.parametrize(
    ("argument", "message"),
    [
        (
            "pass-execution",
            "error: expected DebugCounter argument to have an `=` separating the "
            "counter name and value, but the provided argument was: `pass-execution`",
        ),
        (
            "pass-execution-skip=",
            "error: expected DebugCounter argument to have an `=` separating the "
            "counter name and value, but the provided argument was: "
            "`pass-execution-skip=`",
        ),
        (
            "pass-execution-skip=x",
            "error: expected DebugCounter counter value to be numeric, but got `x`",
        ),
        (
            "pass-execution-foo=1",
            "error: expected DebugCounter counter name to end with either `-skip` "
            "or `-count`, but got`pass-execution-foo`",
        ),
    ],
)
def test_counter_errors_are_mlirs(argument: str, message: str) -> None:
    with pytest.raises(DebugCounterError) as error:
        DebugCounter.from_arguments([argument])
    assert str(error.value) == message


def test_counter_as_a_gate_logs_skipped_actions(parse: Parse) -> None:
    counter = DebugCounter()
    counter.add_counter("pass-execution", count=1)
    stream = io.StringIO()
    context = ExecutionContext(gate=counter.allows)
    context.register_observer(ActionLogger(stream, print_ir_units=False))
    pm = pipeline(Touch())
    pm.register_action_handler(context)
    pm.run(parse(TWO))
    lines = [line.split("] ", 1)[1] for line in stream.getvalue().splitlines()]
    assert lines == [
        f"begins (no breakpoint) Action `pass-execution` running `{ADAPTOR}` on "
        "Operation `builtin.module``",
        "skipping (no breakpoint) Action `pass-execution` running `Touch` on "
        "Operation `func.func``",
        "skipping (no breakpoint) Action `pass-execution` running `Touch` on "
        "Operation `func.func``",
        "completed `pass-execution`",
    ]
    assert Touch.ran == []


# --- location filters ------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a.mlir", ("a.mlir", -1, -1)),
        ("a.mlir:3", ("a.mlir", 3, -1)),
        ("a.mlir:3:5", ("a.mlir", 3, 5)),
        ("a.mlir:x", ("a.mlir:x", -1, -1)),
        ("a.mlir:3:x", ("a.mlir:3:x", -1, -1)),
        ("a.mlir:x:4", ("a.mlir:x", 4, -1)),
        ("dir:a.mlir:2:1", ("dir:a.mlir", 2, 1)),
        ("C:\\a.mlir", ("C:\\a.mlir", -1, -1)),
    ],
)
def test_location_filters_parse_as_mlir(
    text: str, expected: tuple[str, int, int]
) -> None:
    assert parse_location_filter(text) == expected


def test_an_empty_location_filter_is_an_error() -> None:
    with pytest.raises(LocationFilterError, match="empty file name"):
        parse_location_filter("")


def test_location_breakpoints_match_file_line_and_column(parse: Parse) -> None:
    module = parse(TWO)  # @a at input.mlir:1:1, @b at 4:1, the module at 0:0
    a, b = ir.direct_children(module)

    def hits(*filters: str) -> list[str]:
        manager = LocationBreakpointManager()
        for text in filters:
            manager.add_filter(text)
        return [
            ir.symbol_name(op) or "module"
            for op in (module, a, b)
            if manager.match(PassExecutionAction(Touch(), op)) is not None
        ]

    assert hits("input.mlir") == ["module", "a", "b"]
    assert hits("input.mlir:4") == ["b"]
    assert hits("input.mlir:4:1") == ["b"]
    assert hits("input.mlir:4:2") == []
    assert hits("input.mlir:0") == ["module"]
    assert hits("input.mlir:1", "input.mlir:4") == ["a", "b"]
    assert hits("other.mlir") == []
    manager = LocationBreakpointManager()
    manager.add_filter("input.mlir").enabled = False
    assert manager.match(PassExecutionAction(Touch(), a)) is None


# --- observers ---------------------------------------------------------------------


def test_logger_format_and_filter(parse: Parse) -> None:
    stream = io.StringIO()
    logger = ActionLogger(stream)
    filters = LocationBreakpointManager()
    filters.add_filter("input.mlir:4")
    logger.add_breakpoint_manager(filters)
    pm = pipeline(Touch())
    pm.register_action_handler(ExecutionContext(observers=[logger]))
    pm.run(parse(TWO))
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith("[thread ")
    assert lines[0].endswith(
        "] begins (no breakpoint) Action `pass-execution` running `Touch` on "
        "Operation `func.func` (func.func @b() {...})`"
    )
    assert lines[1].endswith("] completed `pass-execution`")


def test_logger_names_a_breakpoint_the_context_hit(parse: Parse) -> None:
    stream = io.StringIO()
    breakpoints = LocationBreakpointManager()
    breakpoints.add_filter("input.mlir:1:1")
    decided: list[int] = []

    def on_breakpoint(stack: ActionActiveStack) -> bool:
        decided.append(stack.depth)
        return False  # skip what the breakpoint stops at

    context = ExecutionContext(on_breakpoint=on_breakpoint)
    context.add_breakpoint_manager(breakpoints)
    context.register_observer(ActionLogger(stream, print_ir_units=False))
    pm = pipeline(Touch())
    pm.register_action_handler(context)
    pm.run(parse(TWO))
    assert decided == [1]
    assert Touch.ran == ["b"]
    assert (
        "skipping (on breakpoint: Location: input.mlir:1:1) Action `pass-execution`"
        in stream.getvalue()
    )


def test_profiler_writes_balanced_chrome_events(parse: Parse) -> None:
    stream = io.StringIO()
    ticks = iter(range(0, 10**9, 1000))
    profiler = ActionProfiler(stream, clock=lambda: next(ticks))
    pm = pipeline(Touch())
    pm.register_action_handler(ExecutionContext(observers=[profiler]))
    pm.run(parse(TWO))
    profiler.close()
    profiler.close()  # once only
    text = stream.getvalue()
    events = json.loads(text)
    assert [e["ph"] for e in events] == ["B", "B", "E", "B", "E", "E"]
    assert [e["ts"] for e in events] == [1, 2, 3, 4, 5, 6]
    assert {e["pid"] for e in events} == {0}
    assert {e["tid"] for e in events} == {threading.get_native_id()}
    assert events[1] == {
        "name": "pass-execution",
        "cat": "PERF",
        "ph": "B",
        "pid": 0,
        "tid": threading.get_native_id(),
        "ts": 2,
        "args": {"desc": "`pass-execution` running `Touch` on Operation `func.func`"},
    }
    assert text.count("\n") == 5 and text.startswith("[{") and text.endswith("}]")


def test_profiler_leaves_skipped_actions_out(parse: Parse) -> None:
    stream = io.StringIO()
    profiler = ActionProfiler(stream)
    context = ExecutionContext(
        observers=[profiler], gate=lambda a: label(a) != "Touch@a"
    )
    pm = pipeline(Touch())
    pm.register_action_handler(context)
    pm.run(parse(TWO))
    profiler.close()
    assert [e["ph"] for e in json.loads(stream.getvalue())] == ["B", "B", "E", "E"]


# --- failed to run pass ----------------------------------------------------------


def test_emit_pass_error_on_failure_names_the_failed_pass(parse: Parse) -> None:
    pm = pipeline(TestFailurePass(gen_diagnostics=True))
    with pytest.raises(PassPipelineError) as plain:
        pm.run(parse(TWO))
    assert [str(d) for d in plain.value.diagnostics] == [
        "input.mlir:1:1: error: illegal operation",
        "input.mlir:4:1: error: illegal operation",
    ]
    pm.enable_emit_pass_error_on_failure()
    with pytest.raises(PassPipelineError) as named:
        pm.run(parse(TWO))
    assert [str(d) for d in named.value.diagnostics] == [
        "input.mlir:1:1: error: illegal operation",
        "input.mlir:1:1: error: failed to run pass 'TestFailurePass'",
        "input.mlir:4:1: error: illegal operation",
        "input.mlir:4:1: error: failed to run pass 'TestFailurePass'",
    ]


def test_emit_pass_error_on_failure_covers_crashes_and_verifier(parse: Parse) -> None:
    pm = PassManager()
    pm.add(parse_pass_pipeline("any(test-pass-crash)").passes[0])
    pm.enable_emit_pass_error_on_failure()
    with pytest.raises(PassPipelineError) as crash:
        pm.run(parse(TWO))
    assert str(crash.value.diagnostics[-1]) == (
        "input.mlir:0:0: error: failed to run pass 'TestPassCrash'"
    )
    broken = pipeline(BreakIR(), Other())
    broken.register_action_handler(skip_pass(Other))
    broken.enable_emit_pass_error_on_failure()
    with pytest.raises(PassPipelineError) as verify:
        broken.run(parse(TWO))
    assert [str(d) for d in verify.value.diagnostics if "failed to run" in str(d)] == [
        "input.mlir:1:1: error: failed to run pass 'Other'",
        "input.mlir:4:1: error: failed to run pass 'Other'",
    ]


# --- passflow-opt ------------------------------------------------------------------


def run_opt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    source = tmp_path / "in.mlir"
    source.write_text(TWO)
    status = opt.main([str(source), *args])
    out, err = capsys.readouterr()
    return status, out, err.replace(str(source), "in.mlir")


PIPELINE = "--pass-pipeline=builtin.module(func.func(cse,canonicalize))"


def test_opt_debug_counter_and_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run_opt(
        tmp_path,
        capsys,
        PIPELINE,
        "--mlir-debug-counter=pass-execution-skip=1,pass-execution-count=2",
        "--mlir-print-debug-counter",
        "-o",
        str(tmp_path / "out.mlir"),
    )
    assert status == 0
    # The adaptor was skipped: nothing else ran or was counted.
    assert err == (
        "DebugCounter counters:\npass-execution                  : {1,1,2}\n"
    )


def test_opt_counter_with_process_executor_counts_every_function(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.mlir"
    source.write_text(functions(20))
    status = opt.main(
        [
            str(source),
            PIPELINE,
            "--executor=process",
            "--jobs=2",
            "--mlir-debug-counter=pass-execution-count=1000",
            "--mlir-print-debug-counter",
            "-o",
            str(tmp_path / "out.mlir"),
        ]
    )
    assert status == 0
    assert "pass-execution                  : {41,0,1000}" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("counter", "first_line"),
    [
        ("pass-execution", "error: expected DebugCounter argument to have an `=`"),
        ("x-skip=y", "error: expected DebugCounter counter value to be numeric"),
    ],
)
def test_opt_malformed_counter_exits_with_mlirs_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], counter: str, first_line: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        run_opt(tmp_path, capsys, "-cse", f"--mlir-debug-counter={counter}")
    assert exit_.value.code == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(first_line)
    assert err[1] == "LLVM ERROR: Invalid DebugCounter command-line configuration"


def test_opt_empty_filter_exits(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        run_opt(tmp_path, capsys, "-cse", "--log-mlir-actions-filter=a.mlir,")
    assert capsys.readouterr().err == (
        "error: initializing FileLineColLocBreakpoint with empty file name\n"
        "Invalid location filter: \n"
    )


def test_opt_counter_is_refused_with_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run_opt(
        tmp_path,
        capsys,
        "-cse",
        "--log-actions-to=-",
        "--mlir-debug-counter=pass-execution-skip=1",
        "-o",
        str(tmp_path / "out.mlir"),
    )
    assert status == 0
    assert err == (
        "ExecutionContext registered on the contexterror: Debug counters are "
        "incompatible with --log-actions-to and --mlir-enable-debugger-hook options "
        "and are disabled\n\n"
    )
    assert out.splitlines()[0].endswith(
        "] begins (no breakpoint) Action `pass-execution` running `CSE` on "
        "Operation `builtin.module` (module {...})`"
    )


def test_opt_log_and_profile_files_are_written_after_a_failure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log, profile = tmp_path / "actions.log", tmp_path / "actions.json"
    status, _, err = run_opt(
        tmp_path,
        capsys,
        "--pass-pipeline=builtin.module(func.func(test-pass-failure))",
        f"--log-actions-to={log}",
        f"--profile-actions-to={profile}",
        "-emit-pass-error-on-failure",
    )
    assert status == 1
    assert err.startswith("ExecutionContext registered on the context\n")
    assert "in.mlir:1:1: error: failed to run pass 'TestFailurePass'" in err
    assert log.read_text().count("begins (no breakpoint)") == 3
    assert len(json.loads(profile.read_text())) == 6


def test_opt_unopenable_log_is_reported_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "x.log"
    status, out, err = run_opt(tmp_path, capsys, "-cse", f"--log-actions-to={target}")
    assert status == 0
    assert "func.func @a" in out
    assert err == (
        "ExecutionContext registered on the contexterror: Opening file for "
        f"--log-actions-to failed: cannot open output file '{target}': "
        "No such file or directory\n\n"
    )


def test_passflow_opt_logs_its_work_as_the_program_s_thread(tmp_path: Path) -> None:
    # The work runs in a deep-stack thread; the log names it as mlir-opt names
    # its main thread: after the program.
    source = tmp_path / "in.mlir"
    source.write_text("func.func @f() {\n  func.return\n}\n")
    opt = Path(sys.executable).parent / "passflow-opt"
    done = subprocess.run(
        [opt, source, "-p", "builtin.module(func.func(cse))", "--log-actions-to=-"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "[thread passflow-opt] begins (no breakpoint) Action" in done.stdout
    assert "passflow-deep-stack" not in done.stdout
