"""Starting a builder from a pipeline you have, and refusing anchored pipelines
where a nested one is meant (never a silent `builtin.module(builtin.module(...))`)."""

from __future__ import annotations

import pytest

from passflow import OperationPass
from passflow.builder import BuilderError, PipelineBuilder
from passflow.diagnostics import PipelineParseError
from passflow.pass_manager import PassManager
from passflow.pipeline_text import parse_pass_pipeline

SHORT = "canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true}"


class Marker(OperationPass):
    argument = "sources-marker"

    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


def _text(builder: PipelineBuilder) -> str:
    return str(builder.build()).replace(SHORT, "canonicalize")


def test_from_text_keeps_the_anchor_and_the_nests() -> None:
    builder = PipelineBuilder.from_text("builtin.module(func.func(cse),canonicalize)")
    assert builder.anchor == "builtin.module"
    builder.insert_after(Marker(), "cse")
    assert (
        _text(builder) == "builtin.module(func.func(cse,sources-marker),canonicalize)"
    )
    assert "placed by framework via from_text" in builder.explain()


def test_from_pass_manager_copies_the_passes_and_leaves_the_manager_alone() -> None:
    pm = parse_pass_pipeline("func.func(cse,canonicalize)")
    builder = PipelineBuilder.from_pass_manager(pm, framework="acme")
    builder.insert_before(Marker(), "canonicalize")
    assert _text(builder) == "func.func(cse,sources-marker,canonicalize)"
    assert str(pm).replace(SHORT, "canonicalize") == "func.func(cse,canonicalize)"
    assert "placed by framework 'acme' via from_pass_manager" in builder.explain()


def test_from_text_wants_an_anchor() -> None:
    with pytest.raises(
        PipelineParseError, match="wrapped with the anchor operation type"
    ):
        PipelineBuilder.from_text("cse")


def test_sources_of_the_wrong_type_are_refused() -> None:
    with pytest.raises(BuilderError, match="expected a PassManager or OpPassManager"):
        PipelineBuilder.from_pass_manager("builtin.module(cse)")  # pyright: ignore[reportArgumentType]
    with pytest.raises(BuilderError, match="expected anchored pipeline text"):
        PipelineBuilder.from_text(PassManager())  # pyright: ignore[reportArgumentType]


def test_adding_a_pass_manager_or_its_text_is_refused_at_the_call() -> None:
    pm = PassManager()
    pm.add(Marker())
    builder = PipelineBuilder()
    with pytest.raises(BuilderError, match=r"from_pass_manager\(pm\)"):
        builder.add(pm)  # pyright: ignore[reportArgumentType]
    with pytest.raises(BuilderError, match="this pipeline's own anchor"):
        builder.add(str(pm))
    with pytest.raises(BuilderError, match="this pipeline's own anchor"):
        builder.add("cse,builtin.module(cse)")
    assert _text(builder) == "builtin.module()"


def test_text_anchored_on_an_enclosing_op_is_refused_in_a_nested_builder() -> None:
    builder = PipelineBuilder()
    functions = builder.nest("func.func")
    functions.add("cse")
    for call in (
        lambda: functions.add("builtin.module(canonicalize)"),
        lambda: functions.insert_before("builtin.module(canonicalize)", "cse"),
    ):
        with pytest.raises(
            BuilderError, match=r"which encloses this 'func\.func' pipeline"
        ):
            call()
    assert _text(builder) == "builtin.module(func.func(cse))"


def test_recursive_nested_pipelines_are_refused() -> None:
    with pytest.raises(BuilderError, match="runs on ops at any depth"):
        PipelineBuilder.from_text("builtin.module(**func.func(cse))")
