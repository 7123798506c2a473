"""Crash and failure reproducers through the Python API (reference §10)."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest

from passflow import OperationPass, PassflowError, PassManager, PassPipelineError, ir
from passflow.instruments.reproducer import escape_string, read_reproducer
from passflow.testing import TestFailurePass, TestFunctionPass

Parse = Callable[[str], ir.ModuleOp]

TWO = "func.func @a() {\n  func.return\n}\nfunc.func @b() {\n  func.return\n}\n"


class Capture:
    """A stream factory keeping what was written."""

    def __init__(self) -> None:
        self.stream = io.StringIO()
        self.opened = 0

    def __call__(self) -> io.StringIO:
        self.opened += 1
        return self.stream


class Mutate(OperationPass):
    """Renames functions, so the IR before and after differs."""

    argument = "mutate"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        from xdsl.dialects.builtin import StringAttr

        op = self.get_operation()
        op.properties["sym_name"] = StringAttr(f"renamed_{ir.symbol_name(op)}")


class Interrupt(OperationPass):
    argument = "interrupt"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        raise KeyboardInterrupt


def test_global_reproducer_holds_the_ir_before_the_run(parse: Parse) -> None:
    module = parse(TWO)
    capture = Capture()
    pm = PassManager()
    pm.enable_crash_reproducer(capture)
    fpm = pm.nest("func.func")
    fpm.add(Mutate())
    fpm.add(TestFailurePass())
    with pytest.raises(PassPipelineError) as info:
        pm.run(module)
    text = capture.stream.getvalue()
    assert capture.opened == 1  # one reproducer per run, not one per failure
    assert "@a()" in text and "renamed" not in text
    assert (
        'pipeline: "builtin.module(func.func(mutate,test-pass-failure{gen-diagnostics=false}))"'
        in text
    )
    reproducer = read_reproducer(ir.parse_module(text))
    assert reproducer is not None
    assert reproducer.disable_threading and reproducer.verify_each
    (error,) = info.value.errors
    assert (
        error.message
        == "Failures have been detected while processing an MLIR pass pipeline"
    )
    assert error.notes[0].message == (
        "Pipeline failed while executing [`TestFailurePass` on 'func.func' operation: "
        "@renamed_a]: reproducer generated at `<stream>`"
    )


def test_local_reproducer_holds_the_ir_before_the_failing_pass(parse: Parse) -> None:
    module = parse(TWO)
    capture = Capture()
    pm = PassManager()
    pm.enable_crash_reproducer(capture, local=True)
    fpm = pm.nest("func.func")
    fpm.add(Mutate())
    fpm.add(TestFailurePass())
    with pytest.raises(PassPipelineError):
        pm.run(module)
    text = capture.stream.getvalue()
    assert "@renamed_a" in text  # the earlier pass's effect is included
    assert (
        'pipeline: "builtin.module(func.func(test-pass-failure{gen-diagnostics=false}))"'
        in text
    )


def test_no_reproducer_when_the_run_succeeds(parse: Parse) -> None:
    capture = Capture()
    pm = PassManager()
    pm.enable_crash_reproducer(capture)
    pm.nest("func.func").add(TestFunctionPass())
    pm.run(parse(TWO))
    assert capture.opened == 0


def test_an_interrupt_writes_a_reproducer_that_says_so(parse: Parse) -> None:
    capture = Capture()
    pm = PassManager()
    pm.enable_crash_reproducer(capture)
    seen: list[str] = []
    pm.add_diagnostic_handler(lambda d: seen.append(f"{d.severity.value}: {d.message}"))
    pm.nest("func.func").add(Interrupt())
    with pytest.raises(KeyboardInterrupt):
        pm.run(parse(TWO))
    text = capture.stream.getvalue()
    assert "mlir_reproducer" in text
    # No failure is reported: the note only says where the file is.
    assert seen == [
        "note: interrupted while executing [`Interrupt` on 'func.func' operation: "
        "@a]: reproducer generated at `<stream>`"
    ]
    assert text.startswith(
        "// This reproducer was written because the run was interrupted (Ctrl-C), "
        "not\n// because a pass failed: it was executing [`Interrupt` on "
        "'func.func' operation: @a].\n"
    )


def test_local_mode_needs_a_serial_run() -> None:
    from passflow.execution import ChildExecutor, ChildWork

    class Parallel(ChildExecutor):
        def run(self, work: ChildWork) -> bool:
            return work.run_serially()

    pm = PassManager(executor=Parallel())
    with pytest.raises(PassflowError, match="without disabling multi-threading first"):
        pm.enable_crash_reproducer(Capture(), local=True)


def test_pipeline_strings_use_mlir_escaping() -> None:
    assert escape_string('a"b\\c\n') == "a\\22b\\\\c\\0A"
    module = ir.parse_module(
        "builtin.module {\n}\n{-#\n  external_resources: {\n    mlir_reproducer: {\n"
        '      pipeline: "builtin.module(x{s=\\22q\\22})",\n'
        "      disable_threading: true,\n      verify_each: false\n    }\n  }\n#-}\n"
    )
    reproducer = read_reproducer(module)
    assert reproducer is not None
    assert reproducer.pipeline == 'builtin.module(x{s="q"})'
    assert (reproducer.disable_threading, reproducer.verify_each) == (True, False)


THREE = TWO + "func.func @c() {\n  func.return\n}\n"


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_the_reproducer_message_comes_after_the_errors_it_is_about(
    parse: Parse, executor: str
) -> None:
    from passflow.executors import make_executor

    pm = PassManager(executor=make_executor(executor, 2, None))
    pm.enable_crash_reproducer(Capture())
    failing = TestFailurePass()
    failing.gen_diagnostics = True
    pm.nest("func.func").add(failing)
    seen: list[str] = []
    pm.add_diagnostic_handler(lambda d: seen.append(f"{d.location}: {d.message}"))
    try:
        with pytest.raises(PassPipelineError):
            pm.run(parse(THREE))
    finally:
        pm.close()
    assert seen == [
        "input.mlir:1:1: illegal operation",
        "input.mlir:4:1: illegal operation",
        "input.mlir:7:1: illegal operation",
        "input.mlir:1:1: Failures have been detected while processing an MLIR pass "
        "pipeline",
    ]
