"""Cleanups as the "Pass Manager Builder" proposal describes them: eventually, or
right before a pass that needs clean IR; inserted by an opt-in policy; shared by
adjacent bundles; and de-duplicated however they were added."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from passflow import OperationPass
from passflow.builder import (
    BuilderError,
    Bundle,
    FollowedByCleanup,
    OrderingError,
    PassKind,
    PipelineBuilder,
    PrecededByCleanup,
    cleanup,
)
from passflow.diagnostics import Severity

CANON = "canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true}"


class _Stub(OperationPass):
    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


class FoldA(_Stub):
    argument = "fold-a"
    kinds = (PassKind.EARLY_OPTIMIZATION,)


class FoldB(_Stub):
    argument = "fold-b"
    kinds = (PassKind.EARLY_OPTIMIZATION,)


class Lower(_Stub):
    argument = "lower"
    kinds = (PassKind.LOWERING,)


class NeedsClean(_Stub):
    argument = "needs-clean"
    ordering = (PrecededByCleanup(),)


def _text(builder: PipelineBuilder) -> str:
    return str(builder.build()).replace(CANON, "canonicalize")


def strict() -> PipelineBuilder:
    builder = PipelineBuilder(framework="acme", weak_severity=Severity.ERROR)
    builder.require(PassKind.EARLY_OPTIMIZATION, FollowedByCleanup())
    return builder


def test_preceded_by_cleanup_needs_a_cleanup_right_before() -> None:
    builder = PipelineBuilder(weak_severity=Severity.ERROR)
    with pytest.raises(
        OrderingError, match=r"should be preceded by a Cleanup pass.*it runs first"
    ):
        builder.add(NeedsClean())
    builder.add(Lower())
    with pytest.raises(OrderingError) as caught:
        builder.add(NeedsClean())
    message = str(caught.value)
    assert (
        "but 'lower' (#1, placed by framework via add) runs right before it" in message
    )
    assert (
        'fix: insert a cleanup right before it, e.g. insert_before(cleanup(), "needs-clean")'
        in message
    )
    builder.add(cleanup())
    builder.add(NeedsClean())
    assert (
        "ok: PrecededByCleanup() [declared by pass class NeedsClean]: cleaned up by #3 cse"
        in builder.explain()
    )


def test_the_policy_inserts_a_cleanup_where_a_constraint_needs_one() -> None:
    builder = strict()
    builder.auto_cleanup()
    builder.add(FoldA())
    builder.add(Lower())
    builder.add(NeedsClean())
    # the cleanup needs-clean needs also cleans up after fold-a, eventually
    assert _text(builder) == "builtin.module(fold-a,lower,canonicalize,cse,needs-clean)"
    listing = builder.explain()
    assert (
        "ok: FollowedByCleanup() [required of PassKind.EARLY_OPTIMIZATION by framework 'acme']: cleaned up by #3 canonicalize"
        in listing
    )
    assert (
        "placed by the cleanup policy via auto_cleanup() for PrecededByCleanup() of "
        "'needs-clean', in bundle 'cleanup'"
    ) in listing


def test_adjacent_bundles_share_one_cleanup() -> None:
    builder = strict()
    builder.auto_cleanup()
    builder.add(Bundle("a", FoldA()))
    builder.add(Bundle("b", FoldB()))
    builder.add(Lower())
    assert _text(builder) == "builtin.module(fold-a,fold-b,canonicalize,cse,lower)"
    listing = builder.explain()
    assert listing.count("placed by the cleanup policy") == 2  # canonicalize, cse
    assert (
        "placed by the cleanup policy via auto_cleanup() for FollowedByCleanup() of "
        "'fold-b', in bundle 'cleanup'"
    ) in listing


def test_the_policy_meets_a_trailing_need_at_build() -> None:
    builder = strict()
    builder.auto_cleanup(Bundle("light", "cse"))
    builder.add(FoldA())
    assert "placed by the cleanup policy" in builder.explain()
    assert _text(builder) == "builtin.module(fold-a,cse)"


def test_without_the_policy_a_need_is_a_violation() -> None:
    builder = strict()
    builder.add(FoldA())
    builder.add(Lower())  # a later call may still append a cleanup
    with pytest.raises(
        OrderingError, match="should be followed by a Cleanup pass, eventually"
    ):
        builder.build()


def test_the_policy_takes_a_bundle() -> None:
    with pytest.raises(BuilderError, match="expected a Bundle"):
        PipelineBuilder().auto_cleanup("cse")  # pyright: ignore[reportArgumentType]


def _as_text(builder: PipelineBuilder) -> None:
    builder.add("canonicalize,cse")


def _one_by_one(builder: PipelineBuilder) -> None:
    builder.add("canonicalize")
    builder.add("cse")


@pytest.mark.parametrize("second", [_as_text, _one_by_one])
def test_cleanups_added_as_text_or_one_by_one_are_deduplicated(
    second: Callable[[PipelineBuilder], None],
) -> None:
    builder = PipelineBuilder(framework="acme")
    builder.add(Lower())
    builder.add(cleanup())
    second(builder)
    assert _text(builder) == "builtin.module(lower,canonicalize,cse)"
    report = builder.report
    assert report is not None
    assert report.notes[0].startswith(
        "collapsed 'canonicalize' (placed by framework 'acme' via add"
    )
    assert (
        "into the identical #2 (placed by framework 'acme' via add)" in report.notes[0]
    )
    assert builder.explain().count("(collapsed)") == 2


def test_a_bundle_of_a_pass_list_collapses_into_an_identical_bundle() -> None:
    builder = PipelineBuilder()
    builder.add(Lower())
    builder.add(Bundle("mine", "canonicalize", "cse"))
    builder.add(cleanup())
    assert _text(builder) == "builtin.module(lower,canonicalize,cse)"


def test_a_bundle_keeps_its_own_repeated_members() -> None:
    builder = PipelineBuilder()
    builder.add(Lower())
    builder.add(Bundle("twice", "cse", "cse"))
    assert _text(builder) == "builtin.module(lower,cse,cse)"
