"""Registration: passes (class or factory), pipelines with options, resolution order,
duplicates and entry-point plugins."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from passflow import (
    OperationPass,
    OpPassManager,
    PipelineParseError,
    RegistrationError,
    registry,
)
from passflow.options import Option, PipelineOptions
from passflow.pipeline_text import parse_pass_pipeline
from passflow.testing import TestFunctionPass


class Scaled(OperationPass):
    argument = "scaled-test"
    summary = "A pass whose constructor needs an argument"

    factor = Option(1, help="Scale")

    def __init__(self, base: int) -> None:
        super().__init__()
        self.base = base

    def run_on_operation(self) -> None:
        pass


def add_function_pass(pm: OpPassManager) -> None:
    pm.nest("func.func").add(TestFunctionPass())


@pytest.fixture
def cleanup() -> Iterator[list[str]]:
    names: list[str] = []
    yield names
    for name in names:
        registry.unregister(name)


def test_decorator_registers_by_argument(cleanup: list[str]) -> None:
    @registry.register_pass
    class Local(OperationPass):
        argument = "local-decorated"

        def run_on_operation(self) -> None:
            pass

    cleanup.append("local-decorated")
    info = registry.lookup_pass("local-decorated")
    assert info is not None and info.pass_class is Local
    assert isinstance(info.create(), Local)


def test_factory_form_for_passes_needing_arguments(cleanup: list[str]) -> None:
    registry.register_pass(lambda: Scaled(base=7))
    cleanup.append("scaled-test")
    created = parse_pass_pipeline("builtin.module(scaled-test{factor=3})").passes[0]
    assert isinstance(created, Scaled)
    assert (created.base, created.factor) == (7, 3)


def test_duplicates_are_refused_naming_both(cleanup: list[str]) -> None:
    with pytest.raises(RegistrationError) as info:

        @registry.register_pass
        class Clash(OperationPass):
            argument = "cse"

            def run_on_operation(self) -> None:
                pass

    text = str(info.value)
    assert "'cse' is already registered by passflow.transforms.cse" in text
    assert "test_registry" in text and "Clash" in text


def test_malformed_names_are_refused() -> None:
    with pytest.raises(RegistrationError, match="is not a valid pass argument"):
        registry.register_pipeline("has space", "x", add_function_pass)


def test_pipelines_resolve_before_passes(cleanup: list[str]) -> None:
    # A pipeline may share its name with nothing else, so check the lookup order
    # through `lookup`, which textual pipelines use.
    registry.register_pipeline(
        "expand-to-function-pass", "adds test-function-pass", add_function_pass
    )
    cleanup.append("expand-to-function-pass")
    assert isinstance(registry.lookup("expand-to-function-pass"), registry.PipelineInfo)
    pm = parse_pass_pipeline("builtin.module(expand-to-function-pass)")
    assert str(pm) == "builtin.module(func.func(test-function-pass))"  # expanded inline


def test_pipeline_options_are_parsed_into_the_struct() -> None:
    pm = parse_pass_pipeline(
        "builtin.module(func.func(test-options-pass-pipeline{list=1,2 string=foo}))"
    )
    assert (
        str(pm)
        == "builtin.module(func.func(test-options-pass{enum=zero list={1,2} string=foo }))"
    )


def test_pipeline_option_errors_follow_mlir() -> None:
    with pytest.raises(PipelineParseError) as info:
        parse_pass_pipeline(
            "builtin.module(func.func(test-options-pass-pipeline{bogus=1}))"
        )
    assert info.value.cl_messages == ("<Pass-Options-Parser>: no such option bogus",)
    assert info.value.render() == (
        "failed to add `test-options-pass-pipeline` with options `bogus=1`\n"
        "failed to add `func.func` with options `` to inner pipeline\n"
    )
    with pytest.raises(PipelineParseError) as info:
        parse_pass_pipeline("builtin.module(test-pm-nested-pipeline{x=1})")
    assert info.value.cl_messages == ()
    assert (
        info.value.render()
        == "failed to add `test-pm-nested-pipeline` with options `x=1`\n"
    )


def test_options_struct_round_trips() -> None:
    class Opts(PipelineOptions):
        depth = Option(2, help="How deep")
        name = Option("x", help="A name")

    parsed = Opts.parse("depth=5")
    assert (parsed.depth, parsed.name) == (5, "x")
    assert str(parsed) == "{depth=5 name=x}"
    assert parsed == Opts.parse(str(parsed)[1:-1])


@dataclass
class FakeEntryPoint:
    name: str
    target: object

    def load(self) -> object:
        return self.target


def test_entry_point_plugins_register_on_first_lookup(
    monkeypatch: pytest.MonkeyPatch, cleanup: list[str]
) -> None:
    def register_plugin() -> None:
        @registry.register_pass
        class FromPlugin(OperationPass):
            argument = "from-plugin"

            def run_on_operation(self) -> None:
                pass

    cleanup.append("from-plugin")
    calls: list[str] = []

    def fake_entry_points(group: str) -> list[FakeEntryPoint]:
        calls.append(group)
        return [FakeEntryPoint("demo", register_plugin)]

    monkeypatch.setattr(registry, "entry_points", fake_entry_points)
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    assert registry.lookup_pass("from-plugin") is not None
    assert calls == ["passflow.passes"]
    registry.lookup_pass("cse")
    assert calls == ["passflow.passes"]  # loaded once


def test_textual_nested_pipeline_expands_a_registered_pipeline() -> None:
    pm = OpPassManager("builtin.module")
    from passflow.pipeline_text import parse_pass_pipeline_into

    parse_pass_pipeline_into("test-textual-pm-nested-pipeline", pm)
    assert str(pm) == (
        "builtin.module(builtin.module(test-module-pass,func.func(test-function-pass)),"
        "func.func(test-function-pass))"
    )


def test_looking_up_unknown_names_keeps_no_memory() -> None:
    # A reproducer or fuzzer may name any number of passes that do not exist;
    # only xDSL's own names are cached.
    assert registry.lookup_pass("cse") is not None
    assert registry.lookup_pass("convert-scf-to-cf") is not None  # xDSL's
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for i in range(20_000):
            assert registry.lookup_pass(f"no-such-pass-{i}") is None
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert after - before < 64 * 1024
