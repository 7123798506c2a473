"""Composing pipeline graphs: stages from text or a builder, replace and remove,
graphs registered by name and extended by plugins that did not register them."""

from __future__ import annotations

import itertools
import sys
import textwrap
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import ClassVar

import pytest

from passflow import (
    OperationPass,
    OpPassManager,
    PassflowError,
    PassManager,
    RegistrationError,
    ir,
    registry,
)
from passflow.builder import PipelineBuilder
from passflow.graph import (
    PipelineGraph,
    PipelineGraphError,
    PipelineNameError,
    PipelineSchedulePass,
    ScheduledPipeline,
    UnknownPipelineError,
    extend_graph,
    lookup_graph,
    register_graph,
    registered_schedule,
)
from passflow.graph import registered as graph_registered
from passflow.pipeline_text import parse_pass_pipeline
from passflow.tools import opt

MODULE = """\
func.func @f() {
  func.return
}
"""


def stage(pipeline: ScheduledPipeline) -> str:
    assert isinstance(pipeline.body, OpPassManager)
    return str(pipeline.body)


def stages(graph: PipelineGraph) -> dict[str, str]:
    return {p.name: stage(p) for p in graph.create_schedule().pipelines}


# --- a stage from pipeline text or a builder ---------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("func.func(cse)", "builtin.module(func.func(cse))"),
        ("builtin.module(func.func(cse))", "builtin.module(func.func(cse))"),
        ("  builtin.module(cse, symbol-dce) ", "builtin.module(cse,symbol-dce)"),
        ("cse,symbol-dce", "builtin.module(cse,symbol-dce)"),
        ("", "builtin.module()"),
    ],
)
def test_a_stage_from_text_is_never_nested_twice(text: str, expected: str) -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("a", populate=text)
    assert stages(graph) == {"a": expected}


def test_text_anchored_on_a_function_graphs_anchor_is_the_stage() -> None:
    graph = PipelineGraph("g", anchor="func.func")
    graph.register_pipeline("a", populate="func.func(cse)")
    graph.register_pipeline("b", populate="cse")
    assert stages(graph) == {"a": "func.func(cse)", "b": "func.func(cse)"}


def test_bad_stage_text_names_the_pipeline() -> None:
    graph = PipelineGraph("numba-mlir")
    graph.register_pipeline("optimization", populate="func.func(no-such-pass)")
    with pytest.raises(
        PipelineGraphError,
        match=r"populating pipeline 'optimization' of graph 'numba-mlir' failed: "
        r"PipelineParseError: MLIR Textual PassPipeline Parser:1:11: error: "
        r"'no-such-pass' does not refer to a registered pass",
    ):
        graph.create_schedule()


def test_a_stage_from_a_pipeline_builder() -> None:
    builder = PipelineBuilder("builtin.module", framework="numba")
    builder.add("symbol-dce")
    builder.nest("func.func").add("cse")
    on_functions = PipelineBuilder("func.func", framework="numba")
    on_functions.add("cse")
    graph = PipelineGraph("g")
    graph.register_pipeline("module", populate=builder)
    graph.register_pipeline("functions", ["module"], populate=on_functions)
    assert stages(graph) == {
        "module": "builtin.module(symbol-dce,func.func(cse))",
        "functions": "builtin.module(func.func(cse))",
    }


def test_an_extension_inserts_a_pass_inside_a_builder_stage() -> None:
    builder = PipelineBuilder("builtin.module", framework="numba")
    builder.nest("func.func").add("cse")
    graph = PipelineGraph("g")
    graph.register_pipeline("optimization", populate=builder)
    before = graph.create_schedule()
    source = graph.source("optimization")
    assert source is builder
    with builder.extension("my-plugin"):
        builder.insert_after("loop-invariant-code-motion", "cse")
    assert stage(before.pipelines[0]) == "builtin.module(func.func(cse))"
    assert stages(graph) == {
        "optimization": "builtin.module(func.func(cse,loop-invariant-code-motion))"
    }


# --- replace and remove ---------------------------------------------------------------


def test_replace_keeps_the_edges_and_changes_the_passes() -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("late", ["early"], populate="cse")
    graph.register_pipeline("early", populate="symbol-dce")
    graph.replace_pipeline("late", "func.func(cse)")
    schedule = graph.create_schedule()
    assert schedule.order == ("early", "late")
    assert stage(schedule.pipelines[1]) == "builtin.module(func.func(cse))"
    assert graph.source("late") == "func.func(cse)"


def test_replace_or_remove_an_unknown_stage_lists_what_exists() -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("a")
    graph.register_pipeline("b")
    with pytest.raises(
        PipelineNameError,
        match=r"cannot replace pipeline 'c': graph 'g' has no pipeline of that name "
        r"\(registered: a, b\)",
    ):
        graph.replace_pipeline("c", "cse")
    with pytest.raises(PipelineNameError, match="cannot remove pipeline 'c'"):
        graph.remove_pipeline("c")


def test_removing_a_stage_keeps_the_order_it_imposed() -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("last", ["middle"])
    graph.register_pipeline("free")
    graph.register_pipeline("middle", ["first"], populate="cse")
    graph.register_pipeline("first")
    graph.remove_pipeline("middle")
    schedule = graph.create_schedule()
    # `last` still waits for `first`, so `free` (registered earlier) goes first.
    assert schedule.order == ("free", "first", "last")
    assert [(d.source, d.target) for d in schedule.dependencies] == [("first", "last")]
    assert graph.names == ("last", "free", "first")


def test_a_jump_to_a_removed_stage_is_refused() -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("loop")
    graph.register_pipeline("body", ["loop"], jump_targets=["loop"])
    graph.remove_pipeline("loop")
    with pytest.raises(
        UnknownPipelineError,
        match="pipeline 'body' of graph 'g' lists 'loop' in its jump_targets, but "
        r"'loop' was removed \(remove_pipeline\)",
    ):
        graph.create_schedule()


def test_removing_a_choice_removes_its_alternatives() -> None:
    graph = PipelineGraph("g")
    graph.register_choice("device", ["gpu", "cpu"], select=lambda op: "cpu")
    graph.register_pipeline("gpu", populate="cse")
    graph.register_pipeline("cpu", populate="cse")
    graph.register_pipeline("end")
    graph.remove_pipeline("device")
    assert graph.create_schedule().order == ("end",)


def test_a_copy_is_extended_without_changing_the_original() -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("a")
    copy = graph.copy()
    copy.register_pipeline("b", ["a"])
    copy.remove_pipeline("a")
    assert graph.names == ("a",)
    assert copy.names == ("b",)


# --- registered graphs ------------------------------------------------------------------


_graph_names = itertools.count()


@pytest.fixture
def registered() -> Iterator[str]:
    """A registered graph, under a new name each time, since extensions are kept
    by name for the life of the process."""
    name = f"test-compose-compiler-{next(_graph_names)}"
    graph = PipelineGraph(name)
    graph.register_pipeline("frontend", populate="symbol-dce")
    graph.register_pipeline("optimization", ["frontend"], populate="func.func(cse)")
    register_graph(graph, summary="a graph others extend")
    yield name
    registry.unregister(name)


def test_a_registered_graph_is_found_and_extended_by_name(registered: str) -> None:
    lookup_graph(registered).register_pipeline(
        "cleanup", ["optimization"], populate="canonicalize"
    )
    text = f"builtin.module({registered})"
    pm = parse_pass_pipeline(text)
    assert str(pm) == text
    runner = pm.passes[0]
    assert isinstance(runner, PipelineSchedulePass)
    assert runner.schedule.order == ("frontend", "optimization", "cleanup")


def test_extensions_apply_when_the_schedule_is_built(registered: str) -> None:
    extend_graph(
        registered, lambda g: g.replace_pipeline("optimization", "func.func(cse,cse)")
    )
    extend_graph(registered, lambda g: g.remove_pipeline("frontend"))
    schedule = registered_schedule(registered)
    assert schedule.order == ("optimization",)
    assert stage(schedule.pipelines[0]) == "builtin.module(func.func(cse,cse))"
    # The registered graph itself is unchanged: extensions run on a copy.
    assert lookup_graph(registered).names == ("frontend", "optimization")


def test_a_registered_graph_takes_its_jump_cap_as_an_option(registered: str) -> None:
    text = f"builtin.module({registered}{{max-jumps=3}})"
    pm = parse_pass_pipeline(text)
    assert str(pm) == text
    runner = pm.passes[0]
    assert isinstance(runner, PipelineSchedulePass)
    assert runner.schedule.max_jumps_per_edge == 3
    module = ir.parse_module(MODULE)
    run = PassManager()
    run.assign(pm)
    run.run(module)
    assert runner.trace.executed == ("frontend", "optimization")


def test_a_failing_extension_is_named(registered: str) -> None:
    def broken(graph: PipelineGraph) -> None:
        raise RuntimeError("boom")

    extend_graph(registered, broken)
    with pytest.raises(
        PassflowError,
        match=r"extension (tests\.)?test_graph_compose\.test_a_failing_extension_is_"
        rf"named\.<locals>\.broken of graph '{registered}' failed: RuntimeError: boom",
    ):
        registered_schedule(registered)


def test_looking_up_something_that_is_not_a_graph_says_what_exists(
    registered: str,
) -> None:
    with pytest.raises(
        UnknownPipelineError,
        match=r"no pipeline graph is registered as 'nope' \(registered graphs: "
        rf".*{registered}",
    ):
        lookup_graph("nope")
    with pytest.raises(
        UnknownPipelineError,
        match="no pipeline graph is registered as 'cse'; 'cse' is a pass, not a graph",
    ):
        lookup_graph("cse")


# --- a plugin package extends a graph it did not register -----------------------------

COMPILER = """\
from passflow.graph import PipelineGraph, register_graph


def register() -> None:
    graph = PipelineGraph("test-plugin-compiler")
    graph.register_pipeline("frontend", populate="symbol-dce")
    graph.register_pipeline("optimization", ["frontend"], populate="func.func(cse)")
    graph.register_pipeline("lower", ["optimization"])
    register_graph(graph, summary="a compiler from one plugin")
"""

EXTENSION = """\
from passflow.graph import PipelineGraph, extend_graph


def add_stage(graph: PipelineGraph) -> None:
    graph.register_pipeline(
        "vendor-tiling", ["optimization"], ["lower"], populate="canonicalize"
    )


def register() -> None:
    extend_graph("test-plugin-compiler", add_stage)
"""


def install_plugins(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    packages: dict[str, str],
    plugins: list[tuple[str, str]],
) -> None:
    """Write `packages` (module name to code) on sys.path and make `plugins`
    ((name, "module:function") pairs) the registry's entry points, to load again."""
    for package, code in packages.items():
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text(textwrap.dedent(code))
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    group = registry.ENTRY_POINT_GROUP
    entries = [EntryPoint(name, value, group) for name, value in plugins]

    def entry_points(group: str) -> list[EntryPoint]:
        return entries

    monkeypatch.setattr(registry, "entry_points", entry_points)
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    monkeypatch.setattr(registry, "_plugins", registry.loaded_plugins())


def test_a_plugin_package_extends_a_graph_another_plugin_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The extension's entry point loads first: the order must not matter.
    install_plugins(
        tmp_path,
        monkeypatch,
        {"compiler_plugin": COMPILER, "vendor_plugin": EXTENSION},
        [
            ("vendor", "vendor_plugin:register"),
            ("compiler", "compiler_plugin:register"),
        ],
    )
    try:
        pm = parse_pass_pipeline("builtin.module(test-plugin-compiler)")
        runner = pm.passes[0]
        assert isinstance(runner, PipelineSchedulePass)
        assert runner.schedule.order == (
            "frontend",
            "optimization",
            "vendor-tiling",
            "lower",
        )
        module = ir.parse_module(MODULE)
        run = PassManager()
        run.assign(pm)
        run.run(module)
        assert runner.trace.executed == runner.schedule.order
    finally:
        registry.unregister("test-plugin-compiler")


# --- schedules from immutable declarations -----------------------------------------


class CountRuns(OperationPass):
    """Counts its runs, across clones."""

    argument = "test-compose-count-runs"
    runs: ClassVar[list[str]] = []

    def run_on_operation(self) -> None:
        CountRuns.runs.append(ir.operation_name(self.get_operation()).name)
        self.mark_all_analyses_preserved()


@pytest.fixture
def builder_stage() -> Iterator[str]:
    """A registered graph whose `optimization` stage is a framework's builder, and
    the docs' recipe inserting a pass inside that stage from an extension."""
    name = f"test-compose-builder-{next(_graph_names)}"
    framework = PipelineBuilder(framework="numba")
    framework.nest("func.func").add("cse")
    graph = PipelineGraph(name)
    graph.register_pipeline("frontend", populate="symbol-dce")
    graph.register_pipeline("optimization", ["frontend"], populate=framework)
    register_graph(graph)

    def add_counter(graph: PipelineGraph) -> None:
        builder = graph.source("optimization")
        assert isinstance(builder, PipelineBuilder)
        with builder.extension("my-plugin"):
            builder.insert_after(CountRuns(), "cse")

    extend_graph(name, add_counter)
    CountRuns.runs.clear()
    yield name
    registry.unregister(name)


def test_the_builder_recipe_applies_once_per_build(builder_stage: str) -> None:
    for _ in range(3):
        schedule = registered_schedule(builder_stage)
        assert stage(schedule.pipelines[1]) == (
            "builtin.module(func.func(cse,test-compose-count-runs))"
        )
    # The framework's builder, registered with the graph, was never edited.
    framework = lookup_graph(builder_stage).source("optimization")
    assert isinstance(framework, PipelineBuilder)
    assert str(framework.build()) == "builtin.module(func.func(cse))"


def test_a_graph_named_twice_runs_each_pass_once_per_use(builder_stage: str) -> None:
    pm = parse_pass_pipeline(f"builtin.module({builder_stage},{builder_stage})")
    module = ir.parse_module(MODULE)
    run = PassManager()
    run.assign(pm)
    run.run(module)
    assert CountRuns.runs == ["func.func", "func.func"]


def test_one_passflow_opt_run_counts_the_extension_once(
    builder_stage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(MODULE)
    status = opt.main(
        [
            str(source),
            f"--pass-pipeline=builtin.module({builder_stage})",
            "--mlir-pass-statistics",
        ]
    )
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert CountRuns.runs == ["func.func"]
    assert captured.err.count("CountRuns") == 1


def test_a_copied_graph_owns_its_builder_stages() -> None:
    framework = PipelineBuilder(framework="numba")
    framework.add("cse")
    graph = PipelineGraph("g")
    graph.register_pipeline("a", populate=framework)
    copy = graph.copy()
    copied = copy.source("a")
    assert isinstance(copied, PipelineBuilder) and copied is not framework
    copied.add("symbol-dce")
    assert stages(graph) == {"a": "builtin.module(cse)"}
    assert stages(copy) == {"a": "builtin.module(cse,symbol-dce)"}


# --- extensions of graphs that do not exist ---------------------------------------


def test_extending_a_misspelt_graph_is_refused_at_once(registered: str) -> None:
    typo = registered.replace("compiler", "compiler-x")
    with pytest.raises(UnknownPipelineError) as info:
        extend_graph(typo, lambda g: None)
    assert str(info.value).startswith(
        f"cannot extend graph '{typo}': no pipeline graph is registered under that "
        f"name; did you mean '{registered}'?"
    )
    assert "optional=True" in str(info.value)


def test_an_extension_of_a_graph_never_registered_fails_the_schedule(
    registered: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As while plugins load: the graph may still come, so the name is kept.
    monkeypatch.setattr(graph_registered, "_extensions", {})
    monkeypatch.setattr(registry, "_plugins_loading", True)
    typo = registered.replace("compiler", "compilr")
    extend_graph(typo, lambda g: None)
    extend_graph("test-compose-maybe-installed", lambda g: None, optional=True)
    monkeypatch.setattr(registry, "_plugins_loading", False)
    with pytest.raises(
        UnknownPipelineError,
        match=r"an extension \((tests\.)?test_graph_compose\.test_an_extension_of_a_"
        r"graph_never_registered_fails_the_schedule\.<locals>\.<lambda>\) was given "
        rf"for graph '{typo}', but no pipeline graph was ever registered under that "
        rf"name; did you mean '{registered}'\?",
    ):
        registered_schedule(registered)
    graph_registered._extensions.pop(typo)  # pyright: ignore[reportPrivateUsage]
    assert registered_schedule(registered).order == ("frontend", "optimization")


def test_every_plugin_loads_and_the_failures_are_reported_together(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    install_plugins(
        tmp_path,
        monkeypatch,
        {
            "compiler_plugin": COMPILER,
            "raising_plugin": "def register():\n    raise KeyError('numba-mlir')\n",
        },
        [
            ("gone", "no_such_plugin_module:register"),
            ("raising", "raising_plugin:register"),
            ("compiler", "compiler_plugin:register"),
        ],
    )
    try:
        with pytest.raises(RegistrationError) as info:
            registry.lookup_pipeline("test-plugin-compiler")
        assert str(info.value) == (
            "2 passflow.passes plugins failed to load; the others are registered:\n"
            "- plugin 'gone' (entry point 'gone = no_such_plugin_module:register' in "
            "group 'passflow.passes'): ModuleNotFoundError: No module named "
            "'no_such_plugin_module'\n"
            "- plugin 'raising' (entry point 'raising = raising_plugin:register' in "
            "group 'passflow.passes'): KeyError: 'numba-mlir'\n"
            "  fix: reinstall or fix the packages named, or uninstall them"
        )
        assert registry.lookup_pipeline("test-plugin-compiler") is not None
    finally:
        registry.unregister("test-plugin-compiler")


# --- mistakes that say what to do -------------------------------------------------


def test_running_text_or_a_graph_says_what_to_do() -> None:
    graph = PipelineGraph("g")
    graph.register_pipeline("a", populate="cse")
    with pytest.raises(PipelineGraphError) as info:
        graph.create_schedule().run(MODULE)  # pyright: ignore[reportArgumentType]
    assert str(info.value) == (
        "schedule 'g': run() takes an Operation, got str 'func.func @f() {\\n  "
        "func.return\\n}\\n'; fix: parse it first, run(ir.parse_module(text))"
    )
    with pytest.raises(PipelineGraphError) as info:
        graph.run(ir.parse_module(MODULE))
    assert str(info.value) == (
        "graph 'g' is a declaration and does not run; fix: create its schedule "
        "first, graph.create_schedule().run(op)"
    )
