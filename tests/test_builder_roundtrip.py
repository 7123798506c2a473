"""A built pipeline exports as pipeline text and as Python builder source, both
read back to the same pipeline, for every registered pipeline; `diff_pipelines`
says which passes moved, came, went or changed options."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from passflow import OperationPass, OpPassManager, registry
from passflow.all_passes import register_all_passes
from passflow.builder import (
    BuilderError,
    PassChange,
    PipelineBuilder,
    diff_pipelines,
    python_source,
)
from passflow.graph import PipelineGraph, register_graph
from passflow.manager import Nesting
from passflow.pipeline_text import parse_pass_pipeline


class Unregistered(OperationPass):
    """A pass no registry knows: the source imports its class."""

    argument = "test-roundtrip-unregistered"

    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


def _graph() -> PipelineGraph:
    graph = PipelineGraph("test-roundtrip-graph")
    graph.register_pipeline("a", populate="func.func(cse)")
    graph.register_pipeline("b", ["a"], [], ["a"], populate="canonicalize")
    return graph


@pytest.fixture(scope="module", autouse=True)
def _registered() -> Iterator[None]:
    register_all_passes()
    register_graph(_graph())
    yield
    registry.unregister("test-roundtrip-graph")


def registered_pipelines() -> list[str]:
    register_all_passes()
    register_graph(_graph())
    try:
        return [info.argument for info in registry.registered_pipelines()]
    finally:
        registry.unregister("test-roundtrip-graph")


def run_source(source: str) -> PipelineBuilder:
    namespace: dict[str, object] = {}
    exec(compile(source, "<python_source>", "exec"), namespace)
    built = namespace["builder"]
    assert isinstance(built, PipelineBuilder)
    return built


@pytest.mark.parametrize("name", registered_pipelines())
def test_every_registered_pipeline_round_trips_as_text_and_as_source(
    name: str,
) -> None:
    info = registry.lookup_pipeline(name)
    assert info is not None
    pm = OpPassManager("builtin.module", Nesting.IMPLICIT)  # as mlir-opt's flags
    info.add_to(pm)
    builder = PipelineBuilder.from_pass_manager(pm)
    text = builder.to_text()
    assert PipelineBuilder.from_text(text).to_text() == text
    assert str(parse_pass_pipeline(text)) == text
    again = run_source(builder.to_python())
    assert again.to_text() == text
    assert not diff_pipelines(builder, again)


def test_the_source_reads_like_the_pipeline() -> None:
    builder = PipelineBuilder.from_text(
        "builtin.module(func.func(cse,loop-invariant-code-motion),symbol-dce)"
    )
    builder.add(Unregistered())
    assert builder.to_python() == (
        "from passflow.builder import PipelineBuilder\n"
        "from test_builder_roundtrip import Unregistered\n"
        "\n"
        'builder = PipelineBuilder("builtin.module")\n'
        'nested_1 = builder.nest("func.func")\n'
        'nested_1.add("cse")\n'
        'nested_1.add("loop-invariant-code-motion")\n'
        'builder.add("symbol-dce")\n'
        "builder.add(Unregistered())\n"
    )
    assert run_source(builder.to_python()).to_text() == builder.to_text()


def test_a_pass_no_module_exports_is_refused_with_a_fix() -> None:
    class Local(Unregistered):
        argument = "test-roundtrip-local"

    pm = OpPassManager("builtin.module")
    pm.add(Local())
    with pytest.raises(BuilderError, match="fix: register it"):
        python_source(pm)


def test_diff_says_which_passes_moved_came_went_or_changed() -> None:
    old = "builtin.module(canonicalize,func.func(cse,loop-invariant-code-motion),symbol-dce)"
    new = (
        "builtin.module(symbol-dce,func.func(cse,test-function-pass),"
        "canonicalize{max-iterations=3})"
    )
    diff = diff_pipelines(old, new)
    assert [
        (c.change, c.text.split("{")[0], c.where, c.old, c.new) for c in diff.changes
    ] == [
        ("moved", "symbol-dce", "", 4, 1),
        ("came", "test-function-pass", "func.func", None, 3),
        ("changed", "canonicalize", "", 1, 4),
        ("went", "loop-invariant-code-motion", "func.func", 3, None),
    ]
    assert str(diff).splitlines()[0] == "moved   symbol-dce: #4 -> #1"
    assert diff.went == (
        PassChange("went", "loop-invariant-code-motion", "func.func", 3, None),
    )
    assert not diff_pipelines(old, old) and str(diff_pipelines(old, old)) == "no change"
