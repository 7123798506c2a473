"""Exact placement inside nests: a pass that cannot run in the anchor's nested
pipeline goes exactly next to the anchor anyway, the nests split around it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import pytest

from passflow import OperationPass, ir
from passflow.builder import (
    BuilderError,
    OrderingError,
    PassKind,
    PipelineBuilder,
    Requires,
)
from passflow.registry import register_pass, unregister


class _Stub(OperationPass):
    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


class Vectorize(_Stub):
    argument = "vectorize"
    op_name = "func.func"


class LowerLoops(_Stub):
    argument = "lower-loops"
    op_name = "func.func"
    kinds = (PassKind.LOWERING,)


class ConvertToLLVM(_Stub):
    argument = "convert-to-llvm"
    op_name = "builtin.module"
    kinds = (PassKind.LOWERING,)


class ModulePass(_Stub):
    argument = "module-pass"
    op_name = "builtin.module"


class GpuPass(_Stub):
    argument = "gpu-pass"
    op_name = "gpu.module"


class NeedsLowering(_Stub):
    argument = "needs-lowering"
    op_name = "builtin.module"
    ordering = (Requires(PassKind.LOWERING),)


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    for cls in (Vectorize, LowerLoops, ConvertToLLVM):
        register_pass(cls)
    yield
    for cls in (Vectorize, LowerLoops, ConvertToLLVM):
        unregister(cls.argument)


def issue_pipeline() -> PipelineBuilder:
    return PipelineBuilder.from_text(
        "builtin.module(func.func(vectorize,lower-loops),convert-to-llvm)"
    )


def test_a_module_pass_after_a_function_pass_splits_the_nest() -> None:
    builder = issue_pipeline()
    builder.insert_after(ModulePass(), "vectorize")
    assert str(builder.build()) == (
        "builtin.module(func.func(vectorize),module-pass,func.func(lower-loops),"
        "convert-to-llvm)"
    )


def test_explain_shows_the_split() -> None:
    builder = issue_pipeline()
    with builder.extension("ext"):
        builder.insert_after(ModulePass(), "vectorize")
    listing = builder.explain()
    assert "nested pipelines split:" in listing
    assert (
        "split the 'func.func' pipeline after 'func.func(vectorize)' (placed by "
        "framework via from_text) to place ModulePass() exactly there: extension "
        "'ext' via insert_after(\"vectorize\")"
    ) in listing


def test_insert_before_splits_too_and_no_split_at_the_edges() -> None:
    builder = issue_pipeline()
    builder.insert_before(ModulePass(), "lower-loops")
    builder.insert_before(ModulePass(), "vectorize")  # first in its nest: no split
    assert str(builder.build()) == (
        "builtin.module(module-pass,func.func(vectorize),module-pass,"
        "func.func(lower-loops),convert-to-llvm)"
    )
    assert builder.explain().count("split the 'func.func' pipeline") == 1


def test_nests_split_at_every_depth_and_only_up_to_the_pipeline_that_runs_the_pass() -> (
    None
):
    builder = PipelineBuilder()
    functions = builder.nest("gpu.module").nest("func.func")
    functions.add("vectorize,lower-loops")
    builder.insert_after(GpuPass(), "vectorize")
    assert str(builder.build()) == (
        "builtin.module(gpu.module(func.func(vectorize),gpu-pass,func.func(lower-loops)))"
    )
    builder.insert_after(ModulePass(), "vectorize")
    assert str(builder.build()) == (
        "builtin.module(gpu.module(func.func(vectorize)),module-pass,"
        "gpu.module(gpu-pass,func.func(lower-loops)))"
    )


def test_a_nested_builder_still_appends_at_the_end_of_its_pipeline() -> None:
    builder = PipelineBuilder()
    functions = builder.nest("func.func")
    functions.add("vectorize,lower-loops")
    builder.insert_after(ModulePass(), "vectorize")
    functions.add("cse")
    assert str(builder.build()) == (
        "builtin.module(func.func(vectorize),module-pass,func.func(lower-loops,cse))"
    )


def test_a_split_that_breaks_a_constraint_is_undone() -> None:
    builder = PipelineBuilder()
    builder.nest("func.func").add("vectorize,lower-loops")
    before = str(builder.build())
    with pytest.raises(OrderingError):
        builder.insert_after(NeedsLowering(), "vectorize")
    assert str(builder.build()) == before
    assert "split" not in builder.explain()


def test_every_occurrence_splits_at_each_one() -> None:
    builder = PipelineBuilder()
    builder.nest("func.func").add("vectorize,lower-loops,vectorize,lower-loops")
    builder.insert_after(ModulePass(), "vectorize", occurrence="every")
    assert str(builder.build()) == (
        "builtin.module(func.func(vectorize),module-pass,"
        "func.func(lower-loops,vectorize),module-pass,func.func(lower-loops))"
    )


# --- a pass for an op that can never sit inside the anchor's nest ------------------

GPU_MODULE = """\
builtin.module attributes {gpu.container_module} {
  func.func @host() {
    func.return
  }
  "gpu.module"() ({
  ^bb0:
  }) {sym_name = "kernels"} : () -> ()
}
"""


class Outline(_Stub):
    """A `gpu.module` pass that records the ops it ran on."""

    argument = "gpu-outline-stub"
    op_name = "gpu.module"
    ran: ClassVar[list[str]] = []

    def run_on_operation(self) -> None:
        Outline.ran.append(ir.operation_name(self.get_operation()).name)
        self.mark_all_analyses_preserved()


class OnGpuFunctions(_Stub):
    """A `gpu.func` pass: gpu.func ops live in gpu.module ops only."""

    argument = "on-gpu-functions"
    op_name = "gpu.func"


def functions_pipeline() -> PipelineBuilder:
    builder = PipelineBuilder(framework="acme")
    builder.nest("func.func").add("vectorize,lower-loops")
    return builder


def test_a_pass_for_an_op_outside_the_nest_goes_where_it_can_run() -> None:
    # A gpu.module is a symbol: it sits directly in a symbol table (a module),
    # never in a function, so `func.func(gpu.module(...))` would never run.
    builder = functions_pipeline()
    with builder.extension("gpu"):
        builder.insert_after(Outline(), "vectorize")
    pm = builder.build()
    assert str(pm) == (
        "builtin.module(func.func(vectorize),gpu.module(gpu-outline-stub),"
        "func.func(lower-loops))"
    )
    assert (
        "split the 'func.func' pipeline after 'func.func(vectorize)' (placed by "
        "framework 'acme' via add) to place Outline() exactly there: extension "
        "'gpu' via insert_after(\"vectorize\")"
    ) in builder.explain()
    Outline.ran.clear()
    pm.run(ir.parse_module(GPU_MODULE))
    assert Outline.ran == ["gpu.module"]


def test_adding_a_pass_where_its_op_never_sits_says_where_it_could_go() -> None:
    functions = functions_pipeline().nest("func.func")
    with pytest.raises(BuilderError) as caught:
        functions.add(Outline())
    assert str(caught.value) == (
        "add(Outline()): it runs on 'gpu.module' ops, which are never directly "
        "inside 'func.func' ops, so 'func.func(gpu.module(...))' would never run; "
        "fix: add it to the builder of the enclosing 'builtin.module' pipeline"
    )


def test_a_pass_no_pipeline_around_the_anchor_can_run_is_refused() -> None:
    builder = functions_pipeline()
    with pytest.raises(BuilderError) as caught:
        builder.insert_after(OnGpuFunctions(), "vectorize")
    assert str(caught.value) == (
        "insert_after(OnGpuFunctions(), \"vectorize\"): it runs on 'gpu.func' ops, "
        "which are only ever directly inside 'gpu.module' ops, and no pipeline "
        "around 'func.func(vectorize)' runs on those; fix: insert it next to a pass "
        "of a pipeline on 'gpu.module' ops (nest(\"gpu.module\") makes one)"
    )
