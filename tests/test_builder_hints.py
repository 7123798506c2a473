"""Every likely mistake with a PipelineBuilder gets an error (or a warning) that
says what to do instead."""

from __future__ import annotations

import warnings

import pytest

from passflow import OperationPass
from passflow.builder import (
    AfterLast,
    AnchorNotFoundError,
    BeforeFirst,
    BuilderError,
    OrderingWarning,
    PassKind,
    PipelineBuilder,
    UnknownKindWarning,
    cleanup,
)


class _Stub(OperationPass):
    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


class Tiling(_Stub):
    argument = "hint-tiling"
    kinds = (PassKind("Tiling"),)


class Lower(_Stub):
    argument = "hint-lower"
    kinds = (PassKind.LOWERING,)


class AfterTiling(_Stub):
    argument = "hint-after-tiling"
    ordering = (AfterLast(PassKind("Tilling")),)  # misspelt


class Vectorize(_Stub):
    argument = "hint-vectorize"
    op_name = "func.func"


def pipeline() -> PipelineBuilder:
    builder = PipelineBuilder(framework="acme")
    builder.add(Tiling())
    builder.nest("func.func").add(Vectorize())
    builder.add(cleanup())
    builder.add(Lower())
    return builder


def test_an_anchor_on_a_bundles_name_points_to_in_bundle() -> None:
    with pytest.raises(AnchorNotFoundError) as caught:
        pipeline().insert_after(Lower(), "cleanup")
    assert (
        "note: 'cleanup' is the name of a bundle here; a plain string matches pass "
        'arguments, so anchor on its passes with InBundle("cleanup")'
    ) in str(caught.value)


def test_an_anchor_with_options_is_refused_saying_to_drop_them() -> None:
    with pytest.raises(BuilderError) as caught:
        pipeline().insert_before(Lower(), "canonicalize{max-iterations=3}")
    assert str(caught.value) == (
        'insert_before(Lower(), "canonicalize{max-iterations=3}"): an anchor names '
        "a pass by its argument, without options; fix: drop the options, "
        '"canonicalize"'
    )


def test_an_anchor_on_a_nest_says_to_anchor_on_a_pass_inside() -> None:
    with pytest.raises(AnchorNotFoundError) as caught:
        pipeline().insert_after(Lower(), "func.func")
    assert (
        "note: 'func.func' is a nested pipeline here, not a pass; anchor on a pass "
        'inside it (hint-vectorize), or add to it with the builder nest("func.func") '
        "returned"
    ) in str(caught.value)


def test_a_nested_builder_says_the_anchor_is_in_the_enclosing_builder() -> None:
    builder = PipelineBuilder(framework="acme")
    builder.add(Lower())
    functions = builder.nest("func.func")
    functions.add(Vectorize())
    with pytest.raises(AnchorNotFoundError) as caught:
        functions.insert_after("cse", "hint-lower")
    assert (
        "note: 'hint-lower' is in the enclosing builder, the 'builtin.module' "
        "pipeline; call insert_after on it: this nested builder searches its own "
        "'func.func' pipeline only"
    ) in str(caught.value)


def test_a_weak_constraint_on_a_kind_no_pass_has_warns_at_build() -> None:
    builder = pipeline()
    builder.add(AfterTiling())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        builder.build()
    found = [w for w in caught if issubclass(w.category, UnknownKindWarning)]
    assert len(found) == 1
    assert str(found[0].message) == (
        "AfterLast(PassKind('Tilling')) [declared by pass class AfterTiling] names "
        "the kind 'Tilling', which no pass in the pipeline has, so it holds "
        "trivially; did you mean 'Tiling'?; fix: correct the kind, or ignore this "
        "if passes of that kind are added later"
    )
    assert issubclass(UnknownKindWarning, OrderingWarning)


def test_a_rule_on_an_unknown_kind_warns_too_and_known_kinds_do_not() -> None:
    builder = pipeline()
    builder.require(PassKind("Tilling"), BeforeFirst(PassKind.LOWERING))
    builder.require(PassKind("Tiling"), BeforeFirst(PassKind.LOWERING))
    builder.require(PassKind.BUFFERIZATION, BeforeFirst(PassKind.LOWERING))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        builder.build()
    messages = [str(w.message) for w in caught]
    assert len(messages) == 1
    assert messages[0].startswith(
        "require(PassKind('Tilling'), BeforeFirst(PassKind.LOWERING)) by framework "
        "'acme' names the kind 'Tilling', which no pass in the pipeline has"
    )


def test_replace_gives_the_new_pass_its_own_kinds_unless_asked() -> None:
    builder = PipelineBuilder()
    builder.add("cse", kinds=(PassKind.LOWERING,))
    builder.replace("cse", "canonicalize")
    assert PassKind.LOWERING not in builder
    builder.add("cse", kinds=(PassKind.LOWERING,))
    builder.replace("cse", "symbol-dce", keep_kinds=True)
    assert PassKind.LOWERING in builder


class Foreign(_Stub):
    argument = "hint-foreign"


def test_a_builders_own_tags_stay_in_that_builder() -> None:
    framework = PipelineBuilder(framework="acme")
    framework.add(Foreign())
    other = PipelineBuilder(framework="other")
    other.add(Foreign())
    framework.tag_kinds(Foreign, PassKind("Tiling"))
    assert PassKind("Tiling") in framework
    assert PassKind("Tiling") not in other
    framework.insert_after(Lower(), PassKind("Tiling"))
    assert str(framework.build()) == "builtin.module(hint-foreign,hint-lower)"
    assert PassKind("Tiling") in framework.copy()


def test_a_failed_extension_block_takes_its_tags_back() -> None:
    builder = PipelineBuilder(framework="acme")
    builder.add(Foreign())
    with pytest.raises(AnchorNotFoundError), builder.extension("tiling"):
        builder.tag_kinds("hint-foreign", PassKind.LOWERING)
        builder.insert_after(Lower(), "no-such-pass")
    assert PassKind.LOWERING not in builder
    with pytest.raises(BuilderError, match=r"tag_kinds\(Foreign, \.\.\.\): kinds=\(\)"):
        builder.tag_kinds(Foreign)
