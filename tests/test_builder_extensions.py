"""Extension points, bundles as anchors, and extensions found through an
entry-point group."""

from __future__ import annotations

from pathlib import Path

import pytest

from passflow import OperationPass
from passflow.builder import (
    EXTENSION_GROUP,
    AfterLast,
    AnchorNotFoundError,
    BuilderError,
    Bundle,
    Extension,
    ExtensionError,
    InBundle,
    OrderingError,
    PassKind,
    PipelineBuilder,
    cleanup,
    discover_extensions,
)
from passflow.diagnostics import Severity

CANON = "canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true}"


class _Stub(OperationPass):
    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


class Bufferize(_Stub):
    argument = "ext-bufferize"
    kinds = (PassKind.BUFFERIZATION,)


class Lower(_Stub):
    argument = "ext-lower"
    kinds = (PassKind.LOWERING,)


class Vectorize(_Stub):
    argument = "ext-vectorize"
    op_name = "func.func"


class Unroll(_Stub):
    argument = "ext-unroll"
    op_name = "func.func"


class ModulePass(_Stub):
    argument = "ext-module-pass"
    op_name = "builtin.module"


class AfterPacking(_Stub):
    argument = "ext-after-packing"
    ordering = (AfterLast(InBundle("packing")),)


def _text(builder: PipelineBuilder) -> str:
    return str(builder.build()).replace(CANON, "canonicalize")


def framework() -> PipelineBuilder:
    builder = PipelineBuilder(framework="acme")
    functions = builder.nest("func.func")
    functions.add(Vectorize())
    functions.extension_point("function-opt")
    functions.add(Unroll())
    builder.add(Bufferize())
    builder.extension_point("after-bufferization")
    builder.add(Lower())
    return builder


def test_an_extension_point_is_empty_until_an_extension_adds_there() -> None:
    builder = framework()
    assert builder.extension_points == ("function-opt", "after-bufferization")
    assert _text(builder) == (
        "builtin.module(func.func(ext-vectorize,ext-unroll),ext-bufferize,ext-lower)"
    )
    assert (
        "'after-bufferization' (placed by framework 'acme' via "
        'extension_point("after-bufferization")), after #3 ext-bufferize: nothing yet'
    ) in builder.explain()


def test_passes_added_at_a_point_run_there_in_the_order_they_were_added() -> None:
    builder = framework()
    with builder.extension("one"):
        builder.add_at("after-bufferization", "cse")
    with builder.extension("two"):
        builder.add_at("after-bufferization", cleanup())
        builder.add_at("function-opt", "canonicalize")
    builder.add(Lower())
    assert _text(builder) == (
        "builtin.module(func.func(ext-vectorize,canonicalize,ext-unroll),"
        "ext-bufferize,cse,canonicalize,cse,ext-lower,ext-lower)"
    )
    assert (
        "after #4 ext-bufferize: #5 cse (extension 'one'), #6 canonicalize "
        "(extension 'two'), #7 cse (extension 'two')"
    ) in builder.explain()


def test_a_point_follows_its_pipeline_through_a_split() -> None:
    builder = framework()
    builder.insert_after(ModulePass(), "ext-vectorize")
    builder.add_at("function-opt", "cse")
    assert _text(builder) == (
        "builtin.module(func.func(ext-vectorize),ext-module-pass,"
        "func.func(cse,ext-unroll),ext-bufferize,ext-lower)"
    )


def test_a_pass_that_cannot_run_in_the_points_pipeline_is_refused() -> None:
    builder = framework()
    with pytest.raises(BuilderError, match="would never run there"):
        builder.add_at("function-opt", ModulePass())


def test_a_missing_point_is_an_anchor_not_found_listing_the_points() -> None:
    builder = framework()
    with pytest.raises(AnchorNotFoundError) as caught:
        builder.add_at("before-lowering", "cse")
    message = str(caught.value)
    assert "no extension point 'before-lowering' in this pipeline" in message
    assert "extension points declared: 'function-opt', 'after-bufferization'" in message
    assert caught.value.anchor == "before-lowering"


def test_point_names_are_unique_and_undone_with_their_block() -> None:
    builder = framework()
    with pytest.raises(BuilderError, match="already declared"):
        builder.extension_point("function-opt")
    with pytest.raises(BuilderError, match="expected a name"):
        builder.extension_point("")
    with pytest.raises(AnchorNotFoundError), builder.extension("bad"):
        builder.extension_point("late")
        builder.add_at("late", "cse")
        builder.insert_after("cse", "no-such-pass")
    assert "late" not in builder.extension_points


def test_a_bundle_is_an_anchor_by_name() -> None:
    builder = PipelineBuilder(weak_severity=Severity.ERROR)
    builder.add(Bundle("packing", "canonicalize", Bufferize()))
    builder.add(Lower())
    builder.insert_after("cse", InBundle("packing"))
    builder.insert_before(Vectorize(), InBundle("packing"))
    assert InBundle("packing") in builder
    assert _text(builder) == (
        "builtin.module(func.func(ext-vectorize),canonicalize,ext-bufferize,cse,ext-lower)"
    )
    with pytest.raises(AnchorNotFoundError, match="no pass of a bundle 'tiling'"):
        builder.insert_after("cse", InBundle("tiling"))
    with pytest.raises(
        OrderingError, match="must run after the last pass of a bundle 'packing'"
    ):
        builder.insert_before(AfterPacking(), InBundle("packing"))


def _install(root: Path, name: str, value: str) -> None:
    """A distribution on sys.path declaring one builder extension, as pip would."""
    info = root / f"{name.replace('-', '_')}-1.0.dist-info"  # as wheels name it
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(f"[{EXTENSION_GROUP}]\n{name} = {value}\n")


def test_extensions_are_discovered_through_the_entry_point_group(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ext_demo_module.py").write_text(
        "def register(builder):\n"
        '    builder.add_at("after-bufferization", "cse")\n'
        "NOT_A_FUNCTION = 3\n"
    )
    _install(tmp_path, "ext-demo", "ext_demo_module:register")
    monkeypatch.syspath_prepend(str(tmp_path))  # pyright: ignore[reportUnknownMemberType]
    found = discover_extensions()
    assert [e.name for e in found] == ["ext-demo"]
    builder = framework()

    def local(b: PipelineBuilder) -> None:
        b.add_at("function-opt", "canonicalize")

    assert builder.load_extensions(Extension("a-local", local)) == (
        "a-local",
        "ext-demo",
    )
    assert _text(builder) == (
        "builtin.module(func.func(ext-vectorize,canonicalize,ext-unroll),"
        "ext-bufferize,cse,ext-lower)"
    )
    listing = builder.explain()
    assert (
        "placed by extension 'ext-demo' via add_at(\"after-bufferization\")" in listing
    )
    assert "placed by extension 'a-local' via add_at(\"function-opt\")" in listing


def test_an_entry_point_that_is_not_a_function_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ext_bad_module.py").write_text("NOT_A_FUNCTION = 3\n")
    _install(tmp_path, "ext-bad", "ext_bad_module:NOT_A_FUNCTION")
    monkeypatch.syspath_prepend(str(tmp_path))  # pyright: ignore[reportUnknownMemberType]
    with pytest.raises(
        BuilderError,
        match=r"extension 'ext-bad' \(entry point 'ext-bad = ext_bad_module:"
        r"NOT_A_FUNCTION' .*\): BuilderError: it is an int, not a function",
    ):
        discover_extensions()


def test_a_copy_builds_the_same_pipeline_and_is_edited_alone() -> None:
    builder = framework()
    builder.auto_cleanup()
    with builder.extension("one"):
        builder.add_at("after-bufferization", "cse")
    copy = builder.copy()
    assert _text(copy) == _text(builder)
    assert copy.extension_points == builder.extension_points
    with copy.extension("two"):
        copy.add_at("function-opt", "canonicalize")
        copy.insert_after(ModulePass(), "ext-vectorize")
    assert _text(builder) == (
        "builtin.module(func.func(ext-vectorize,ext-unroll),ext-bufferize,cse,"
        "ext-lower)"
    )
    assert _text(copy) == (
        "builtin.module(func.func(ext-vectorize),ext-module-pass,"
        "func.func(canonicalize,ext-unroll),ext-bufferize,cse,ext-lower)"
    )
    assert "placed by extension 'one' via add_at" in copy.explain()
    with pytest.raises(BuilderError, match=r"copy\(\) was called on the nested"):
        builder.nest("func.func").copy()


def test_load_extensions_runs_every_extension_and_reports_all_failures(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ext_good_module.py").write_text(
        'def register(builder):\n    builder.add_at("after-bufferization", "cse")\n'
    )
    (tmp_path / "ext_raises_module.py").write_text(
        "def register(builder):\n"
        '    builder.add_at("function-opt", "canonicalize")\n'
        '    raise KeyError("one-shot-bufferize")\n'
    )
    _install(tmp_path, "ext-a-missing", "ext_no_such_module:register")
    _install(tmp_path, "ext-b-raises", "ext_raises_module:register")
    _install(tmp_path, "ext-c-good", "ext_good_module:register")
    monkeypatch.syspath_prepend(str(tmp_path))  # pyright: ignore[reportUnknownMemberType]
    builder = framework()

    def local(b: PipelineBuilder) -> None:
        b.insert_before("symbol-dce", "ext-lower")

    with pytest.raises(ExtensionError) as caught:
        builder.load_extensions(Extension("a-local", local))
    error = caught.value
    assert error.ran == ("a-local", "ext-c-good")
    assert [f.name for f in error.failures] == ["ext-a-missing", "ext-b-raises"]
    message = str(error)
    assert message.startswith(
        "load_extensions(): 2 of 4 extensions failed, each undone alone; the "
        "others ran (a-local, ext-c-good):\n"
    )
    assert (
        "- extension 'ext-a-missing' (entry point 'ext-a-missing = "
        "ext_no_such_module:register' in group 'passflow.builder_extensions', "
        "distribution ext-a-missing 1.0): ModuleNotFoundError: No module named "
        "'ext_no_such_module'"
    ) in message
    assert (
        "- extension 'ext-b-raises' (entry point 'ext-b-raises = "
        "ext_raises_module:register' in group 'passflow.builder_extensions', "
        "distribution ext-b-raises 1.0): KeyError: 'one-shot-bufferize'"
    ) in message
    assert "fix:" in message
    # The good ones' changes are kept, the failing one's undone.
    assert _text(builder) == (
        "builtin.module(func.func(ext-vectorize,ext-unroll),ext-bufferize,cse,"
        "symbol-dce,ext-lower)"
    )


def test_discovering_a_missing_module_names_the_extension(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _install(tmp_path, "ext-gone", "ext_gone_module:register")
    monkeypatch.syspath_prepend(str(tmp_path))  # pyright: ignore[reportUnknownMemberType]
    with pytest.raises(ExtensionError) as caught:
        discover_extensions()
    assert (
        "extension 'ext-gone' (entry point 'ext-gone = ext_gone_module:register'"
        in (str(caught.value))
    )
    assert isinstance(caught.value.failures[0].error, ModuleNotFoundError)
