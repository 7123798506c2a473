"""Dynamic pipelines: `Pass.run_pipeline` targets, errors and analysis sharing (§4)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import pytest

from passflow import OperationPass, OpPassManager, PassManager, PassPipelineError, ir

Parse = Callable[[str], ir.ModuleOp]

TEXT = """\
func.func @a() {
  func.return
}
module @inner {
  func.func @deep() {
    func.return
  }
}
"""


class Visit(OperationPass):
    argument = "visit"
    seen: ClassVar[list[str | None]] = []

    def run_on_operation(self) -> None:
        Visit.seen.append(ir.symbol_name(self.get_operation()))


class Spawn(OperationPass):
    """Runs `pipeline` on the op chosen by `target(current_op)`."""

    argument = "spawn"

    def __init__(
        self,
        pipeline: OpPassManager,
        target: Callable[[ir.Operation], ir.Operation],
    ) -> None:
        super().__init__()
        self.pipeline = pipeline
        self.target = target
        self.result: bool | None = None

    def run_on_operation(self) -> None:
        self.result = self.run_pipeline(
            self.pipeline, self.target(self.get_operation())
        )
        if not self.result:
            self.signal_pass_failure()


@pytest.fixture(autouse=True)
def _clear() -> None:
    Visit.seen.clear()


def funcs_pipeline() -> OpPassManager:
    pm = OpPassManager("builtin.module")
    pm.nest("func.func").add(Visit())
    return pm


def test_dynamic_pipeline_on_the_current_op(parse: Parse) -> None:
    module = parse(TEXT)
    pm = PassManager()
    spawn = Spawn(funcs_pipeline(), lambda op: op)
    pm.add(spawn)
    pm.run(module)
    assert spawn.result is True
    assert Visit.seen == ["a"]


def test_dynamic_pipeline_on_a_nested_op(parse: Parse) -> None:
    module = parse(TEXT)
    inner = ir.direct_children(module)[1]
    pm = PassManager()
    pm.add(Spawn(funcs_pipeline(), lambda op: inner))
    pm.run(module)
    assert Visit.seen == ["deep"]


def test_dynamic_pipeline_on_the_parent_is_refused(parse: Parse) -> None:
    module = parse(TEXT)
    pm = PassManager()
    nested = pm.nest("builtin.module")
    spawn = Spawn(funcs_pipeline(), lambda op: op.parent_op() or op)
    nested.add(spawn)
    with pytest.raises(PassPipelineError) as info:
        pm.run(module)
    assert [str(d) for d in info.value.diagnostics] == [
        "input.mlir:0:0: error: 'builtin.module' op Trying to schedule a dynamic "
        "pipeline on an operation that isn't nested under the current operation "
        "the pass is processing"
    ]
    assert spawn.result is False


def test_dynamic_pipeline_anchor_must_match_its_target(parse: Parse) -> None:
    module = parse(TEXT)
    wrong = OpPassManager("func.func")
    wrong.add(Visit())
    pm = PassManager()
    pm.add(Spawn(wrong, lambda op: op))
    with pytest.raises(PassPipelineError) as info:
        pm.run(module)
    assert "can't run 'func.func' pass manager on 'builtin.module' op" in str(
        info.value.diagnostics[0]
    )


def test_dynamic_pipeline_failure_is_the_callers_to_signal(parse: Parse) -> None:
    class Failing(OperationPass):
        argument = "failing"

        def run_on_operation(self) -> None:
            self.signal_pass_failure()

    class Tolerant(OperationPass):
        argument = "tolerant"
        outcome: ClassVar[list[bool]] = []

        def run_on_operation(self) -> None:
            inner = OpPassManager("builtin.module")
            inner.add(Failing())
            Tolerant.outcome.append(self.run_pipeline(inner, self.get_operation()))

    pm = PassManager()
    pm.add(Tolerant())
    pm.run(parse(TEXT))  # the caller ignored the failure: the run succeeds
    assert Tolerant.outcome == [False]


def test_dynamic_pipeline_on_same_op_clears_the_callers_analyses(parse: Parse) -> None:
    class Marker:
        def __init__(self, op: ir.Operation) -> None:
            self.op = op

    observed: list[object] = []

    class UsesAnalysis(OperationPass):
        argument = "uses-analysis"

        def run_on_operation(self) -> None:
            self.get_analysis(Marker)
            inner = OpPassManager("builtin.module")
            inner.add(Visit())
            self.run_pipeline(inner, self.get_operation())
            observed.append(self.get_cached_analysis(Marker))

    pm = PassManager()
    pm.add(UsesAnalysis())
    pm.run(parse(TEXT))
    assert observed == [None]


class Reentrant(OperationPass):
    """Runs a dynamic pipeline holding itself on the first function, where it
    fails; its outer run must get its own op and outcome back."""

    argument = "reentrant"

    def __init__(self) -> None:
        super().__init__()
        self.inner = False
        self.log: list[tuple[str, str | None]] = []

    def run_on_operation(self) -> None:
        op = self.get_operation()
        if self.inner:
            self.log.append(("inner", ir.symbol_name(op)))
            self.signal_pass_failure()
            return
        self.inner = True
        nested = OpPassManager("func.func")
        nested.add(self)
        ok = self.run_pipeline(nested, next(iter(ir.direct_children(op))))
        self.inner = False
        self.log.append(("outer", ir.operation_name(self.get_operation()).name))
        assert not ok
        assert not self.failed  # the inner run's failure is not the outer's
        self.mark_all_analyses_preserved()


def test_a_pass_that_runs_itself_gets_its_outer_state_back(parse: Parse) -> None:
    module = parse(TEXT)
    reentrant = Reentrant()
    pm = PassManager()
    pm.add(reentrant)
    pm.run(module)
    assert reentrant.log == [("inner", "a"), ("outer", "builtin.module")]
    assert reentrant.execution_state is None
