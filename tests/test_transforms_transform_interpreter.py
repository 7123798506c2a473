"""`transform-interpreter` runs a transform script with xDSL's interpreter, and
its `transform.apply_registered_pass` through passflow's pass manager: passflow's
registered passes (and pipelines, graphs, xDSL's passes), with the op's options,
seen by instrumentation and IR printing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import pytest
from transforms_support import Recorder, run_pipeline

from passflow import OperationPass, ir, registry
from passflow.all_passes import register_all_passes
from passflow.diagnostics import PassPipelineError
from passflow.graph import PipelineGraph, register_graph
from passflow.options import ListOption, Option
from passflow.pass_manager import PassManager
from passflow.pipeline_text import parse_pass_pipeline
from passflow.trust import UnsafePassError, untrusted


class Configured(OperationPass):
    """A passflow-only pass (xDSL's lookup has no such name) recording its options."""

    argument = "test-transform-configured"
    op_name = "builtin.module"
    seen: ClassVar[list[tuple[int, bool, str, list[str]]]] = []

    level = Option(0, help="an int")
    fast = Option(False, help="a bool")
    label = Option("", help="a string")
    names = ListOption(str, help="a list")

    def run_on_operation(self) -> None:
        Configured.seen.append((self.level, self.fast, self.label, list(self.names)))
        self.mark_all_analyses_preserved()


class Fails(OperationPass):
    argument = "test-transform-fails"
    op_name = "builtin.module"

    def run_on_operation(self) -> None:
        self.emit_error(self.get_operation(), "this pass always fails")
        self.signal_pass_failure()


@pytest.fixture(autouse=True)
def _registered() -> Iterator[None]:
    register_all_passes()
    registry.register_pass(Configured)
    registry.register_pass(Fails)
    graph = PipelineGraph("test-transform-graph")
    graph.register_pipeline("first", populate="cse")
    graph.register_pipeline("second", ["first"], populate="test-transform-configured")
    register_graph(graph)
    Configured.seen.clear()
    yield
    for name in ("test-transform-configured", "test-transform-fails"):
        registry.unregister(name)
    registry.unregister("test-transform-graph")


def script(*applies: str) -> str:
    steps = "\n".join(
        f"    %h{i + 1} = transform.apply_registered_pass {apply} to %h{i} : "
        "(!transform.any_op) -> !transform.any_op"
        for i, apply in enumerate(applies)
    )
    return f"""builtin.module attributes {{transform.with_named_sequence}} {{
  func.func @f(%a: i32) -> i32 {{
    %0 = arith.addi %a, %a : i32
    %1 = arith.addi %a, %a : i32
    %2 = arith.muli %0, %1 : i32
    func.return %2 : i32
  }}
  transform.named_sequence @__transform_main(%h0: !transform.any_op) {{
{steps}
    transform.yield
  }}
}}
"""


def test_applied_passes_run_in_passflows_pass_manager_with_their_options() -> None:
    recorder = Recorder()
    module = run_pipeline(
        script(
            '"cse"',
            '"test-transform-configured" with options = {"level" = 3 : i64, '
            '"fast" = true, "label" = "two words", "names" = ["a", "b"]}',
        ),
        "builtin.module(transform-interpreter)",
        instrumentations=[recorder],
    )
    assert [name for name, _, _ in recorder.passes] == [
        "TransformInterpreter",
        "CSE",
        "Configured",
    ]
    assert recorder.pipeline_parents == ["TransformInterpreter"] * 2
    assert Configured.seen == [(3, True, "two words", ["a", "b"])]
    assert ir.print_op(module).count("arith.addi") == 1  # cse ran


def test_ir_printing_sees_each_applied_pass(capsys: pytest.CaptureFixture[str]) -> None:
    module = ir.parse_module(script('"cse"', '"test-transform-configured"'))
    pm = PassManager()
    pm.assign(parse_pass_pipeline("builtin.module(transform-interpreter)"))
    pm.enable_ir_printing(print_after_all=True)
    pm.run(module)
    headers = [
        line for line in capsys.readouterr().err.splitlines() if "IR Dump" in line
    ]
    assert headers == [
        "// -----// IR Dump After CSE (cse) //----- //",
        "// -----// IR Dump After Configured (test-transform-configured) //----- //",
        "// -----// IR Dump After TransformInterpreter (transform-interpreter) //----- //",
    ]


def test_a_registered_graph_runs_as_its_schedule() -> None:
    recorder = Recorder()
    run_pipeline(
        script('"test-transform-graph"'),
        "builtin.module(transform-interpreter)",
        instrumentations=[recorder],
    )
    assert [name for name, _, _ in recorder.passes] == [
        "TransformInterpreter",
        "PipelineSchedule",
        "CSE",
        "Configured",
    ]


def test_a_failing_pass_fails_the_interpreter_with_its_own_error() -> None:
    with pytest.raises(PassPipelineError) as info:
        run_pipeline(
            script('"test-transform-fails"', '"test-transform-configured"'),
            "builtin.module(transform-interpreter)",
        )
    assert [e.message for e in info.value.errors] == ["this pass always fails"]
    assert Configured.seen == []  # the script stopped there


def test_an_unknown_pass_is_a_located_error_with_a_fix() -> None:
    with pytest.raises(PassPipelineError) as info:
        run_pipeline(script('"no-such-pass"'), "builtin.module(transform-interpreter)")
    (error,) = info.value.errors
    assert error.message.startswith("transform.apply_registered_pass 'no-such-pass': ")
    assert error.notes[0].message.startswith("fix: name a pass or pipeline")
    assert error.location is not None and ":9:" in str(error.location)


def test_a_missing_entry_point_is_an_error() -> None:
    with pytest.raises(PassPipelineError, match="named sequence with name: main"):
        run_pipeline(
            script('"cse"'), "builtin.module(transform-interpreter{entry-point=main})"
        )


def test_a_script_may_not_apply_a_pass_that_starts_a_program() -> None:
    # The script is part of the input: `mlir-opt` (xDSL's pass that runs the
    # mlir-opt program) is refused unless the pipeline allows unsafe passes.
    with pytest.raises(PassPipelineError) as info:
        run_pipeline(script('"mlir-opt"'), "builtin.module(transform-interpreter)")
    (error,) = info.value.errors
    assert error.message.startswith(
        "transform.apply_registered_pass 'mlir-opt': refusing to run pass 'mlir-opt' "
        "from a transform script: it starts the program"
    )
    assert error.notes[0].message == (
        "fix: if you trust this script, run "
        "transform-interpreter{allow-unsafe-passes=true}"
    )


def test_allowing_unsafe_passes_is_itself_unsafe_in_an_untrusted_pipeline() -> None:
    with untrusted("a reproducer"), pytest.raises(UnsafePassError):
        parse_pass_pipeline(
            "builtin.module(transform-interpreter{allow-unsafe-passes=true})"
        )
    trusted = parse_pass_pipeline(
        "builtin.module(transform-interpreter{allow-unsafe-passes=true})"
    )
    assert "allow-unsafe-passes=true" in str(trusted)
