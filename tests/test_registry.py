"""Registration: passes (class or factory), pipelines with options, resolution order,
duplicates, entry-point plugins and lazy registration."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

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
    value: str = "demo_plugin:register"
    group: str = "passflow.passes"

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
    monkeypatch.setattr(registry, "_plugins", registry.loaded_plugins())
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


UNKNOWN_NAMES_PROBE = """
import tracemalloc
from passflow import registry

def look_up(first, count):
    for i in range(first, first + count):
        assert registry.lookup_pass(f"no-such-pass-{i}") is None

assert registry.lookup_pass("cse") is not None
assert registry.lookup_pass("convert-scf-to-cf") is not None  # xDSL's
look_up(0, 2_000)  # whatever is cached once (plugins, names) is cached now
ours = [tracemalloc.Filter(True, "*/passflow/*")]
tracemalloc.start()
before = tracemalloc.take_snapshot().filter_traces(ours)
look_up(2_000, 20_000)
after = tracemalloc.take_snapshot().filter_traces(ours)
print(sum(stat.size_diff for stat in after.compare_to(before, "filename")))
"""


def test_looking_up_unknown_names_keeps_no_memory() -> None:
    """A reproducer or fuzzer may name any number of passes that do not exist;
    only xDSL's own names are cached. Measured in a fresh interpreter, so that
    what other tests left running (a Dask client's threads, plugins loaded)
    allocates nothing in the window: 20,000 lookups kept 8 bytes each would be
    160 KB, against a bound of 64 KiB for what a run caches once."""
    done = subprocess.run(
        [sys.executable, "-c", UNKNOWN_NAMES_PROBE],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert int(done.stdout) < 64 * 1024


# --- lazy registration ----------------------------------------------------------

LAZY_MODULE = """
from passflow import OperationPass
from passflow.registry import register_pass


@register_pass
class Decorated(OperationPass):
    argument = "lazy-decorated"

    def run_on_operation(self) -> None:
        pass


class Plain(OperationPass):
    argument = "plain-own-argument"

    def run_on_operation(self) -> None:
        pass


def not_a_pass() -> None:
    pass
"""


@pytest.fixture
def lazy_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cleanup: list[str]
) -> Iterator[str]:
    """The name of a fresh, not yet imported module defining passes."""
    name = f"lazy_passes_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text(LAZY_MODULE)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    cleanup.append("lazy-decorated")  # registered whenever the module is imported
    yield name
    sys.modules.pop(name, None)


def test_lazy_pass_is_imported_when_first_looked_up(lazy_module: str) -> None:
    registry.register_lazy("lazy-decorated", f"{lazy_module}:Decorated")
    assert lazy_module not in sys.modules
    info = registry.lookup("lazy-decorated")
    assert isinstance(info, registry.PassInfo)
    module = sys.modules[lazy_module]
    assert info.pass_class is module.Decorated
    assert info.origin == f"{lazy_module}.Decorated"
    assert registry.lookup_pass("lazy-decorated") is info  # registered once


def test_lazy_pass_class_its_module_does_not_register(
    lazy_module: str, cleanup: list[str]
) -> None:
    registry.register_lazy("lazy-plain", f"{lazy_module}:Plain")
    cleanup.append("lazy-plain")
    pm = parse_pass_pipeline("builtin.module(lazy-plain)")
    assert type(pm.passes[0]) is sys.modules[lazy_module].Plain
    assert registry.lookup_pass("plain-own-argument") is None


def test_lazy_target_that_is_not_a_pass_is_an_error(
    lazy_module: str, cleanup: list[str]
) -> None:
    registry.register_lazy("lazy-bad", f"{lazy_module}:not_a_pass")
    registry.register_lazy("lazy-missing", f"{lazy_module}:Missing")
    cleanup.extend(["lazy-bad", "lazy-missing"])
    with pytest.raises(RegistrationError, match="did not register it"):
        registry.lookup("lazy-bad")
    with pytest.raises(RegistrationError, match=rf"{lazy_module}\.Missing"):
        registry.lookup("lazy-missing")
    with pytest.raises(RegistrationError, match="is not 'module:Name'"):
        registry.register_lazy("lazy-malformed", lazy_module)


def test_lazy_names_clash_without_importing_anything(
    lazy_module: str, cleanup: list[str]
) -> None:
    registry.register_lazy("lazy-taken", f"{lazy_module}:Plain")
    cleanup.append("lazy-taken")
    with pytest.raises(RegistrationError) as info:

        @registry.register_pass
        class Other(OperationPass):
            argument = "lazy-taken"

            def run_on_operation(self) -> None:
                pass

    assert f"'lazy-taken' is already registered by {lazy_module}.Plain" in str(
        info.value
    )
    with pytest.raises(RegistrationError, match=r"passflow\.transforms\.cse\.CSE"):
        registry.register_lazy("cse", f"{lazy_module}:Plain")
    assert lazy_module not in sys.modules


def test_listings_import_lazy_passes_and_unregister_forgets_them(
    lazy_module: str, cleanup: list[str]
) -> None:
    registry.register_lazy("lazy-listed", f"{lazy_module}:Plain")
    registry.register_lazy("lazy-forgotten", f"{lazy_module}:Plain")
    cleanup.append("lazy-listed")
    registry.unregister("lazy-forgotten")
    listed = [info.argument for info in registry.registered_passes()]
    assert "lazy-listed" in listed and "lazy-forgotten" not in listed
    assert lazy_module in sys.modules
    assert registry.lookup("lazy-forgotten") is None


def test_built_in_passes_load_only_when_named() -> None:
    # A fresh interpreter: this one has imported every pass already.
    code = (
        "import sys\n"
        "from passflow import registry\n"
        "registry.load_plugins()\n"
        "assert registry.lookup('cse') is not None\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", code], check=True, capture_output=True, text=True
    ).stdout.split()
    assert "passflow.transforms.cse" in loaded
    for module in (
        "passflow.transforms.canonicalize",
        "passflow.transforms.inline",
        "passflow.transforms.loop_invariant_code_motion",
        "passflow.testing.passes",
        "passflow.testing.test_dialect",
    ):
        assert module not in loaded
