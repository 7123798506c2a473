"""Instrumentation hooks: order, firing rules, vetoes and blame (reference §7)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from passflow import (
    InstrumentationError,
    OperationPass,
    OpToOpPassAdaptor,
    Pass,
    PassInstrumentation,
    PassManager,
    PassPipelineError,
    PipelineParentInfo,
    ir,
)

Parse = Callable[[str], ir.ModuleOp]

ONE_FUNC = "func.func @f() {\n  func.return\n}\n"


def label(pass_: Pass) -> str:
    return "adaptor" if isinstance(pass_, OpToOpPassAdaptor) else pass_.argument


class Recorder(PassInstrumentation):
    def __init__(self, tag: str = "", events: list[str] | None = None) -> None:
        self.tag = tag
        self.events: list[str] = events if events is not None else []
        self.parents: list[PipelineParentInfo] = []

    def _add(self, text: str) -> None:
        self.events.append(self.tag + text)

    def run_before_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        self.parents.append(parent)
        self._add(f"BeforePipeline({op_name})")

    def run_after_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        self._add(f"AfterPipeline({op_name})")

    def run_before_pass(self, pass_: Pass, op: ir.Operation) -> None:
        self._add(f"BeforePass({label(pass_)},{ir.operation_name(op).name})")

    def run_after_pass(self, pass_: Pass, op: ir.Operation) -> None:
        self._add(f"AfterPass({label(pass_)},{ir.operation_name(op).name})")

    def run_after_pass_failed(self, pass_: Pass, op: ir.Operation) -> None:
        self._add(f"AfterPassFailed({label(pass_)},{ir.operation_name(op).name})")


def Named(argument: str, fail: bool = False, ran: list[str] | None = None) -> Pass:
    """A pass called `argument` that records itself in `ran` and may fail."""

    class _Named(OperationPass):
        def run_on_operation(self) -> None:
            if ran is not None:
                ran.append(argument)
            if fail:
                self.signal_pass_failure()

    _Named.argument = argument
    return _Named()


def build(fail_c: bool = False) -> PassManager:
    pm = PassManager()
    pm.add(Named("A"))
    fpm = pm.nest("func.func")
    fpm.add(Named("B"))
    fpm.add(Named("C", fail=fail_c))
    return pm


def test_event_order_of_a_nested_pipeline(parse: Parse) -> None:
    pm = build()
    rec = Recorder()
    pm.add_instrumentation(rec)
    pm.run(parse(ONE_FUNC))
    assert rec.events == [
        "BeforePass(A,builtin.module)",
        "AfterPass(A,builtin.module)",
        "BeforePass(adaptor,builtin.module)",
        "BeforePipeline(func.func)",
        "BeforePass(B,func.func)",
        "AfterPass(B,func.func)",
        "BeforePass(C,func.func)",
        "AfterPass(C,func.func)",
        "AfterPipeline(func.func)",
        "AfterPass(adaptor,builtin.module)",
    ]
    (parent,) = rec.parents
    assert isinstance(parent.parent_pass, OpToOpPassAdaptor)
    import threading

    assert parent.parent_thread_id == threading.get_ident()


def test_failure_skips_after_pipeline_and_fails_the_adaptor(parse: Parse) -> None:
    pm = build(fail_c=True)
    rec = Recorder()
    pm.add_instrumentation(rec)
    with pytest.raises(PassPipelineError):
        pm.run(parse(ONE_FUNC))
    assert rec.events[-4:] == [
        "AfterPass(B,func.func)",
        "BeforePass(C,func.func)",
        "AfterPassFailed(C,func.func)",
        "AfterPassFailed(adaptor,builtin.module)",
    ]


def test_before_hooks_in_order_after_hooks_reversed(parse: Parse) -> None:
    events: list[str] = []
    pm = PassManager()
    pm.add(Named("A"))
    pm.add_instrumentation(Recorder("1:", events))
    pm.add_instrumentation(Recorder("2:", events))
    pm.run(parse(ONE_FUNC))
    assert events == [
        "1:BeforePass(A,builtin.module)",
        "2:BeforePass(A,builtin.module)",
        "2:AfterPass(A,builtin.module)",
        "1:AfterPass(A,builtin.module)",
    ]


class Veto(PassInstrumentation):
    def __init__(self, when: str) -> None:
        self.when = when

    def run_before_pass(self, pass_: Pass, op: ir.Operation) -> None:
        if self.when == "before" and pass_.argument == "A":
            pass_.signal_pass_failure()

    def run_after_pass(self, pass_: Pass, op: ir.Operation) -> None:
        if self.when == "after" and pass_.argument == "A":
            pass_.signal_pass_failure()


@pytest.mark.parametrize("when", ["before", "after"])
def test_an_instrumentation_may_fail_a_pass(parse: Parse, when: str) -> None:
    ran: list[str] = []
    pm = PassManager()
    pm.add(Named("A", ran=ran))
    pm.add(Named("next"))
    rec = Recorder()
    pm.add_instrumentation(Veto(when))
    pm.add_instrumentation(rec)
    with pytest.raises(PassPipelineError):
        pm.run(parse(ONE_FUNC))
    if when == "before":
        assert ran == []
        assert rec.events == [
            "BeforePass(A,builtin.module)",
            "AfterPassFailed(A,builtin.module)",
        ]
    else:
        assert ran == ["A"]
        # failed in run_after_pass: run_after_pass_failed is not called
        assert rec.events == [
            "BeforePass(A,builtin.module)",
            "AfterPass(A,builtin.module)",
        ]


def test_exception_in_a_hook_blames_the_instrumentation(parse: Parse) -> None:
    class Broken(PassInstrumentation):
        def run_before_pass(self, pass_: Pass, op: ir.Operation) -> None:
            raise KeyError("oops")

    pm = PassManager()
    pm.add(Named("A"))
    pm.add_instrumentation(Broken())
    with pytest.raises(
        InstrumentationError, match=r"Broken\.run_before_pass raised KeyError"
    ):
        pm.run(parse(ONE_FUNC))


def test_dynamic_pipeline_fires_pipeline_hooks_with_the_calling_pass(
    parse: Parse,
) -> None:
    class Spawner(OperationPass):
        argument = "spawner"

        def run_on_operation(self) -> None:
            from passflow import OpPassManager

            inner = OpPassManager("builtin.module")
            inner.add(Named("dyn"))
            if not self.run_pipeline(inner, self.get_operation()):
                self.signal_pass_failure()

    pm = PassManager()
    spawner = Spawner()
    pm.add(spawner)
    rec = Recorder()
    pm.add_instrumentation(rec)
    pm.run(parse(ONE_FUNC))
    assert rec.events == [
        "BeforePass(spawner,builtin.module)",
        "BeforePipeline(builtin.module)",
        "BeforePass(dyn,builtin.module)",
        "AfterPass(dyn,builtin.module)",
        "AfterPipeline(builtin.module)",
        "AfterPass(spawner,builtin.module)",
    ]
    assert rec.parents[0].parent_pass is spawner
