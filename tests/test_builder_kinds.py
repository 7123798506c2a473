"""Kinds on every pass: the kind table, tags for passes you don't own, class anchors."""

from __future__ import annotations

import pytest

from passflow import OperationPass
from passflow.builder import (
    KIND_TABLE,
    UNKNOWN,
    AnchorNotFoundError,
    BuilderError,
    OrderingError,
    PassKind,
    PipelineBuilder,
    Requires,
    tag_kinds,
)
from passflow.registry import lookup_pass, registered_passes
from passflow.xdsl_passes import adapter_for, xdsl_pass_names


class _Stub(OperationPass):
    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


class OneShotBufferize(_Stub):
    argument = "kinds-one-shot-bufferize"
    kinds = (PassKind.BUFFERIZATION,)


class VendorBufferize(OneShotBufferize):
    argument = "kinds-vendor-bufferize"


class Foreign(_Stub):
    argument = "kinds-foreign"


class ForeignByName(_Stub):
    argument = "kinds-foreign-by-name"


class NeedsBufferizer(_Stub):
    argument = "kinds-needs-bufferizer"
    ordering = (Requires(OneShotBufferize),)


class New(_Stub):
    argument = "kinds-new"


def _names(builder: PipelineBuilder) -> list[str]:
    return [p.argument for p in builder.build().passes]


def test_every_registered_pass_has_a_kind_table_entry() -> None:
    ours = {p.argument for p in registered_passes() if p.origin.startswith("passflow.")}
    registered = ours | set(xdsl_pass_names())
    assert sorted(registered - set(KIND_TABLE)) == []
    # and the table names nothing that is no longer registered
    assert sorted(set(KIND_TABLE) - registered) == []


def test_the_table_gives_standard_kinds_or_unknown() -> None:
    assert KIND_TABLE["canonicalize"] == (PassKind.CLEANUP,)
    assert KIND_TABLE["convert-linalg-to-loops"] == (PassKind.LOWERING,)
    assert KIND_TABLE["print-ir"] == UNKNOWN
    assert all(
        kind in PassKind.__dict__.values() for k in KIND_TABLE.values() for kind in k
    )


def test_a_kind_anchor_finds_an_xdsl_lowering_pass() -> None:
    builder = PipelineBuilder()
    builder.add("canonicalize,convert-linalg-to-loops,convert-scf-to-cf")
    builder.insert_before(New(), PassKind.LOWERING)
    builder.insert_after("cse", PassKind.LOWERING)
    assert _names(builder) == [
        "canonicalize",
        "kinds-new",
        "convert-linalg-to-loops",
        "convert-scf-to-cf",
        "cse",
    ]


def test_tag_kinds_by_name_reaches_passes_already_placed() -> None:
    builder = PipelineBuilder()
    builder.add(ForeignByName())
    assert PassKind("Vendoring") not in builder
    tag_kinds("kinds-foreign-by-name", PassKind("Vendoring"))
    assert PassKind("Vendoring") in builder
    builder.insert_after(New(), PassKind("Vendoring"))
    assert _names(builder) == ["kinds-foreign-by-name", "kinds-new"]


def test_tag_kinds_by_class_covers_subclasses_and_xdsl_classes() -> None:
    class ForeignChild(Foreign):
        argument = "kinds-foreign-child"

    tag_kinds(Foreign, PassKind("Foreignness"))
    xdsl_class = adapter_for("scf-for-loop-unroll")
    assert xdsl_class is not None
    tag_kinds(xdsl_class.xdsl_class, PassKind("Unrolling"))
    builder = PipelineBuilder()
    builder.add(ForeignChild())
    builder.add("scf-for-loop-unroll")
    builder.insert_before(New(), PassKind("Unrolling"))
    builder.insert_before("cse", PassKind("Foreignness"))
    assert _names(builder) == [
        "cse",
        "kinds-foreign-child",
        "kinds-new",
        "scf-for-loop-unroll",
    ]


@pytest.mark.parametrize(
    ("target", "kinds", "expected"),
    [
        (123, (PassKind.LOWERING,), "expected a pass argument or a pass class"),
        ("kinds-x", (), "expected one or more kind names"),
        ("kinds-x", (3,), "expected one or more kind names"),
    ],
)
def test_tag_kinds_refuses_misuse(
    target: object, kinds: tuple[object, ...], expected: str
) -> None:
    with pytest.raises(BuilderError, match=expected):
        tag_kinds(target, *kinds)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]


def test_a_pass_class_is_an_anchor_matching_its_subclasses() -> None:
    builder = PipelineBuilder()
    builder.add("canonicalize")
    builder.add(VendorBufferize())
    builder.add("cse")
    builder.insert_before(New(), OneShotBufferize)
    assert OneShotBufferize in builder
    assert _names(builder) == [
        "canonicalize",
        "kinds-new",
        "kinds-vendor-bufferize",
        "cse",
    ]


def test_an_xdsl_pass_class_is_an_anchor() -> None:
    adapter = adapter_for("convert-linalg-to-loops")
    assert adapter is not None
    builder = PipelineBuilder()
    builder.add("canonicalize,convert-linalg-to-loops")
    builder.insert_after(New(), adapter.xdsl_class)
    assert _names(builder) == ["canonicalize", "convert-linalg-to-loops", "kinds-new"]


def test_constraints_take_class_anchors() -> None:
    builder = PipelineBuilder()
    with pytest.raises(
        OrderingError, match=r"requires an? OneShotBufferize pass to run before it"
    ):
        builder.add(NeedsBufferizer())
    builder.add(VendorBufferize())
    builder.add(NeedsBufferizer())
    assert _names(builder) == ["kinds-vendor-bufferize", "kinds-needs-bufferizer"]


def test_a_missing_class_anchor_is_named() -> None:
    builder = PipelineBuilder()
    builder.add("cse")
    with pytest.raises(AnchorNotFoundError, match="no OneShotBufferize pass") as info:
        builder.insert_before(New(), OneShotBufferize)
    assert info.value.anchor == "OneShotBufferize"


@pytest.mark.parametrize("anchor", [123, None, "", int])
def test_an_anchor_that_is_none_of_the_three_is_refused_at_the_call(
    anchor: object,
) -> None:
    builder = PipelineBuilder()
    builder.add("cse")
    with pytest.raises(
        BuilderError,
        match="is not a pass argument, a PassKind, a pass class or an InBundle",
    ):
        builder.insert_before(New(), anchor)  # pyright: ignore[reportArgumentType]
    with pytest.raises(BuilderError, match="expected an anchor"):
        Requires(anchor)  # pyright: ignore[reportArgumentType]


def test_registry_passes_resolve_to_the_adapter_that_kind_anchors_match() -> None:
    info = lookup_pass("lower-affine")
    assert info is not None
    builder = PipelineBuilder()
    builder.add(info.factory())
    assert PassKind.LOWERING in builder
