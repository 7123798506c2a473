"""PipelineBuilder (MLIR's "Pass Manager Builder" proposal): insertion rules, kinds, bundles, constraints, origins.

The passes below are stubs with arguments of their own, so that nothing here depends
on which real passes exist; only `canonicalize` and `cse` (the cleanup bundle) are the
built-in ones.
"""

from __future__ import annotations

import re
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import pytest

from passflow import OperationPass, PassManager, ir
from passflow.builder import (
    STANDARD_KINDS,
    AfterLast,
    AmbiguousAnchorError,
    AnchorNotFoundError,
    BeforeFirst,
    BuilderError,
    Bundle,
    ContradictionError,
    FollowedByCleanup,
    OrderingError,
    OrderingWarning,
    PassKind,
    PipelineBuilder,
    Requires,
    cleanup,
)
from passflow.diagnostics import PassflowError, Severity
from passflow.pipeline_text import parse_pass_pipeline
from passflow.registry import lookup_pass, register_pass, unregister


class _Stub(OperationPass):
    """A pass that leaves the IR as it is; only its declarations matter here."""

    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


class Ingress(_Stub):
    argument = "ingress-stub"
    kinds = (PassKind.INGRESS,)


class TensorFold(_Stub):
    argument = "tensor-fold"
    op_name = "func.func"
    kinds = (PassKind.EARLY_OPTIMIZATION,)


class Bufferize(_Stub):
    argument = "one-shot-bufferize-stub"
    kinds = (PassKind.BUFFERIZATION,)


class GenericBufferize(_Stub):
    argument = "generic-bufferize"
    kinds = (PassKind.BUFFERIZATION,)


class MemrefOpt(_Stub):
    argument = "memref-opt"
    op_name = "func.func"
    kinds = (PassKind.LATE_OPTIMIZATION,)
    ordering = (Requires(PassKind.BUFFERIZATION),)


class LowerLoops(_Stub):
    argument = "lower-loops"
    op_name = "func.func"
    kinds = (PassKind.LOWERING,)


class LowerToLLVM(_Stub):
    argument = "lower-to-llvm"
    kinds = (PassKind.LOWERING,)


class ExtA(_Stub):
    argument = "ext-a"


class ExtB(_Stub):
    argument = "ext-b"


class ModuleOnly(_Stub):
    argument = "module-only"
    op_name = "builtin.module"


class Untagged(_Stub):
    argument = "untagged"


REGISTERED: tuple[type[_Stub], ...] = (
    Ingress,
    TensorFold,
    Bufferize,
    GenericBufferize,
    MemrefOpt,
    LowerLoops,
    LowerToLLVM,
    ExtA,
    ExtB,
)


@pytest.fixture(autouse=True)
def registered() -> Iterator[None]:
    """Register the stubs by argument, so pipeline text and round trips work."""
    for cls in REGISTERED:
        register_pass(cls)
    yield
    for cls in REGISTERED:
        unregister(cls.argument)


def text(builder: PipelineBuilder) -> str:
    """The built pipeline with canonicalize's printed defaults left out."""
    return str(builder.build()).replace(
        "canonicalize{  max-iterations=10 max-num-rewrites=-1 "
        "region-simplify=normal test-convergence=false top-down=true}",
        "canonicalize",
    )


def framework() -> PipelineBuilder:
    """the "Pass Manager Builder" proposal's framework shape: ingress, tensor passes, bufferization, memref, lowering."""
    builder = PipelineBuilder("builtin.module", framework="acme")
    builder.add(Ingress())
    functions = builder.nest("func.func")
    functions.add(TensorFold())
    functions.add(cleanup())
    builder.add(Bufferize())
    builder.add(cleanup())
    functions = builder.nest("func.func")
    functions.add(MemrefOpt())
    builder.add(LowerToLLVM())
    return builder


# --- construction and build ----------------------------------------------------


def test_build_returns_an_ordinary_runnable_pass_manager() -> None:
    builder = framework()
    pm = builder.build()
    assert isinstance(pm, PassManager)
    assert text(builder) == (
        "builtin.module(ingress-stub,func.func(tensor-fold,canonicalize,cse),"
        "one-shot-bufferize-stub,canonicalize,cse,func.func(memref-opt),lower-to-llvm)"
    )
    pm.run(ir.parse_module("func.func @f() {\n  func.return\n}\n"))


def test_built_text_parses_back_to_the_same_pipeline() -> None:
    pm = framework().build()
    assert str(parse_pass_pipeline(str(pm))) == str(pm)


def test_each_build_holds_fresh_copies_of_the_passes() -> None:
    added = ExtA()
    builder = PipelineBuilder()
    builder.add(added)
    built = [p for pm in (builder.build(), builder.build()) for p in pm.passes]
    assert len({id(p) for p in built}) == 2
    assert all(p is not added for p in built)


def test_pipeline_text_entries_are_resolved_through_the_registry() -> None:
    builder = PipelineBuilder()
    builder.add("ingress-stub,func.func(tensor-fold),canonicalize{max-iterations=3}")
    assert "tensor-fold" in builder
    assert str(builder.build()).startswith(
        "builtin.module(ingress-stub,func.func(tensor-fold),canonicalize{"
    )
    assert "max-iterations=3" in str(builder.build())


def test_op_restricted_passes_are_nested_and_adjacent_nests_merged() -> None:
    builder = PipelineBuilder()
    builder.add(TensorFold())  # restricted to func.func: nested as func.func(...)
    builder.nest("func.func").add(ExtA())
    builder.add(LowerLoops())
    builder.add(ModuleOnly())
    assert text(builder) == (
        "builtin.module(func.func(tensor-fold,ext-a,lower-loops),module-only)"
    )


def test_a_module_pass_cannot_be_added_inside_a_function_pipeline() -> None:
    functions = PipelineBuilder().nest("func.func")
    with pytest.raises(BuilderError, match="fix: add it to the builder of the"):
        functions.add(ModuleOnly())


def test_build_and_explain_belong_to_the_root_builder() -> None:
    functions = PipelineBuilder().nest("func.func")
    with pytest.raises(BuilderError, match="fix: call it on the PipelineBuilder"):
        functions.build()
    with pytest.raises(BuilderError, match="fix: call it on the PipelineBuilder"):
        functions.explain()


def test_the_report_describes_the_last_build() -> None:
    builder = PipelineBuilder()
    assert builder.report is None
    builder.add(ExtA())
    builder.build()
    assert builder.report is not None
    assert str(builder.report) == "nothing to report"


def test_weak_severity_must_be_warning_or_error() -> None:
    with pytest.raises(BuilderError, match=r"fix: use Severity\.WARNING"):
        PipelineBuilder(weak_severity=Severity.REMARK)


# --- kinds ------------------------------------------------------------------------


def test_standard_kinds_are_proposals_eight_strings() -> None:
    assert [str(k) for k in STANDARD_KINDS] == [
        "Ingress",
        "Normalization",
        "EarlyOptimization",
        "Bufferization",
        "LateOptimization",
        "HardwareOptimization",
        "Lowering",
        "Cleanup",
    ]
    assert PassKind.CLEANUP == "Cleanup"
    assert repr(PassKind.LOWERING) == "PassKind.LOWERING"
    assert repr(PassKind("Vectorization")) == "PassKind('Vectorization')"


def test_builtin_canonicalize_and_cse_are_cleanup_passes() -> None:
    builder = PipelineBuilder()
    builder.add(cleanup())
    builder.insert_after(ExtA(), PassKind.CLEANUP)
    assert text(builder) == "builtin.module(canonicalize,cse,ext-a)"
    for argument in ("canonicalize", "cse"):
        info = lookup_pass(argument)
        assert info is not None
        assert getattr(info.pass_class, "kinds", ()) == ("Cleanup",)


def test_user_defined_kinds_and_kinds_given_when_adding() -> None:
    class Vectorize(_Stub):
        argument = "vectorize"
        kinds = ("Vectorization",)

    builder = PipelineBuilder()
    builder.add(Vectorize())
    builder.add(Untagged(), kinds=(PassKind.LOWERING,))
    builder.insert_before(ExtA(), PassKind("Vectorization"))
    builder.insert_before(ExtB(), PassKind.LOWERING)
    assert text(builder) == "builtin.module(ext-a,vectorize,ext-b,untagged)"


def test_a_plain_string_anchor_matches_arguments_not_kinds() -> None:
    builder = framework()
    with pytest.raises(AnchorNotFoundError) as caught:
        builder.insert_before(ExtA(), "Bufferization")
    assert "anchor on PassKind.BUFFERIZATION" in str(caught.value)


def test_malformed_kinds_attribute_is_reported_with_a_fix() -> None:
    class Broken(_Stub):
        argument = "broken"
        kinds = "Lowering"  # pyright: ignore[reportAssignmentType]  (the misuse under test)

    with pytest.raises(BuilderError, match=r"fix the class attribute"):
        PipelineBuilder().add(Broken())


# --- insertion: first, last, index, every -------------------------------------------


def repeated() -> PipelineBuilder:
    builder = PipelineBuilder()
    for item in (ExtA(), "canonicalize", ExtB(), "canonicalize", Untagged()):
        builder.add(item)
    return builder


def test_insert_before_stops_at_the_first_occurrence() -> None:
    builder = repeated()
    builder.insert_before(TensorFold(), "canonicalize")
    assert text(builder) == (
        "builtin.module(ext-a,func.func(tensor-fold),canonicalize,ext-b,"
        "canonicalize,untagged)"
    )


def test_insert_after_stops_at_the_last_occurrence() -> None:
    builder = repeated()
    builder.insert_after(Ingress(), "canonicalize")
    assert text(builder) == (
        "builtin.module(ext-a,canonicalize,ext-b,canonicalize,ingress-stub,untagged)"
    )


def test_explicit_occurrences_count_like_python_indexes() -> None:
    builder = repeated()
    builder.insert_after(Ingress(), "canonicalize", occurrence=0)
    builder.insert_before(GenericBufferize(), "canonicalize", occurrence=-1)
    assert text(builder) == (
        "builtin.module(ext-a,canonicalize,ingress-stub,ext-b,generic-bufferize,"
        "canonicalize,untagged)"
    )


def test_every_occurrence_gets_its_own_copy() -> None:
    builder = repeated()
    marker = Ingress()
    builder.insert_after(marker, "canonicalize", occurrence="every")
    assert text(builder) == (
        "builtin.module(ext-a,canonicalize,ingress-stub,ext-b,canonicalize,"
        "ingress-stub,untagged)"
    )
    ingresses = [p for p in builder.build().passes if isinstance(p, Ingress)]
    assert len({id(p) for p in ingresses}) == 2


def test_every_occurrence_inside_one_bundle_inserts_once() -> None:
    builder = PipelineBuilder()
    builder.add(cleanup())
    builder.insert_after(ExtA(), PassKind.CLEANUP, occurrence="every")
    assert text(builder) == "builtin.module(canonicalize,cse,ext-a)"


def test_an_occurrence_out_of_range_is_an_anchor_not_found() -> None:
    builder = repeated()
    with pytest.raises(AnchorNotFoundError, match=r"range\(-2, 2\)"):
        builder.insert_before(ExtA(), "canonicalize", occurrence=2)


def test_an_occurrence_that_is_not_an_index_is_rejected() -> None:
    untyped = cast(int, "first")  # what an untyped caller could pass
    with pytest.raises(BuilderError, match="fix: pass 0 for the first match"):
        repeated().insert_before(ExtA(), "canonicalize", occurrence=untyped)


def test_anchoring_inside_a_bundle_places_around_the_whole_bundle() -> None:
    builder = PipelineBuilder()
    builder.add(ExtA())
    builder.add(cleanup())
    builder.insert_before(Untagged(), "cse")
    builder.insert_after(Ingress(), "canonicalize")
    assert (
        text(builder) == "builtin.module(ext-a,untagged,canonicalize,cse,ingress-stub)"
    )


class MemrefOptFree(_Stub):
    argument = "memref-free"
    op_name = "func.func"


def test_insertions_go_into_the_innermost_pipeline_that_can_run_them() -> None:
    builder = PipelineBuilder()
    functions = builder.nest("func.func")
    functions.add(TensorFold())
    functions.add(LowerLoops())
    builder.insert_before(ExtA(), "lower-loops")  # op-agnostic: next to the anchor
    builder.insert_before(MemrefOptFree(), "lower-loops")  # func.func: inside too
    builder.insert_before(ModuleOnly(), "tensor-fold")  # module: before the nest
    builder.insert_after("func.func(ext-b)", "tensor-fold")  # unwrapped inside
    assert text(builder) == (
        "builtin.module(module-only,func.func(tensor-fold,ext-b,ext-a,"
        "memref-free,lower-loops))"
    )


def test_a_nested_builder_searches_only_its_own_pipeline() -> None:
    builder = PipelineBuilder()
    builder.add(ExtA())
    functions = builder.nest("func.func")
    functions.add(TensorFold())
    assert "ext-a" in builder
    assert PassKind.EARLY_OPTIMIZATION in builder
    assert "ext-a" not in functions
    assert PassKind.EARLY_OPTIMIZATION in functions
    with pytest.raises(
        AnchorNotFoundError, match=re.escape("the 'func.func' pipeline")
    ):
        functions.insert_after(ExtB(), "ext-a")


# --- the repeated-canonicalize question from the "Pass Manager Builder" proposal's discussion --------------------


def test_a_later_canonicalize_does_not_move_an_earlier_insertion() -> None:
    """ "What if you addPassBefore<MyTensorPass, Canonicalize>() and then add another
    Canonicalize?" The position is resolved when inserting; it does not follow."""
    builder = PipelineBuilder()
    builder.add(ExtA())
    builder.add("canonicalize")
    builder.insert_before(ExtB(), "canonicalize")
    builder.insert_before("canonicalize", "ext-a")  # a new first canonicalize
    assert text(builder) == "builtin.module(canonicalize,ext-a,ext-b,canonicalize)"


class BeforeAnyCanonicalize(_Stub):
    argument = "before-any-canonicalize"
    ordering = (BeforeFirst("canonicalize"),)


def test_a_constraint_keeps_the_intent_when_a_canonicalize_is_added_later() -> None:
    builder = PipelineBuilder(weak_severity=Severity.ERROR)
    builder.add(ExtA())
    builder.add("canonicalize")
    builder.insert_before(BeforeAnyCanonicalize(), "canonicalize")
    with pytest.raises(OrderingError) as caught:
        builder.insert_before("canonicalize", "ext-a")
    message = str(caught.value)
    assert "'before-any-canonicalize' (#3" in message
    assert 'BeforeFirst("canonicalize")' in message
    assert "'canonicalize' (#1, placed by framework" in message
    assert "fix: place 'before-any-canonicalize' before 'canonicalize'" in message
    assert text(builder) == (
        "builtin.module(ext-a,before-any-canonicalize,canonicalize)"
    )


# --- replace and remove ----------------------------------------------------------------


def test_replace_swaps_one_pass_in_place() -> None:
    builder = framework()
    with builder.extension("numba"):
        builder.replace("one-shot-bufferize-stub", GenericBufferize())
    assert "generic-bufferize,canonicalize,cse,func.func(memref-opt)" in text(builder)
    assert "replaced 'one-shot-bufferize-stub'" in builder.explain()


def test_replace_and_remove_refuse_an_ambiguous_anchor() -> None:
    builder = repeated()
    with pytest.raises(AmbiguousAnchorError, match=r"0: #2 'canonicalize'.*1: #4"):
        builder.remove("canonicalize")
    with pytest.raises(AmbiguousAnchorError, match='occurrence="every"'):
        builder.replace("canonicalize", "cse")
    builder.replace("canonicalize", "cse", occurrence=-1)
    builder.remove("canonicalize", occurrence="every")
    assert text(builder) == "builtin.module(ext-a,ext-b,cse,untagged)"


def test_replace_inside_a_bundle_keeps_the_bundle() -> None:
    builder = PipelineBuilder()
    builder.add(cleanup())
    builder.replace("cse", ExtA())
    assert text(builder) == "builtin.module(canonicalize,ext-a)"
    assert "ext-a\n       placed by framework via replace" in builder.explain()
    assert "in bundle 'cleanup'" in builder.explain().split("2.  ext-a")[1]


def test_kinds_given_when_adding_carry_over_to_the_replacement_when_asked() -> None:
    builder = PipelineBuilder()
    builder.add(Untagged(), kinds=(PassKind.LOWERING,))
    builder.replace("untagged", ExtA(), keep_kinds=True)
    builder.insert_before(ExtB(), PassKind.LOWERING)
    assert text(builder) == "builtin.module(ext-b,ext-a)"


def test_removing_the_last_member_removes_the_bundle_and_empty_nests_are_dropped() -> (
    None
):
    builder = PipelineBuilder()
    builder.add(ExtA())
    builder.nest("func.func").add(cleanup())
    builder.remove("canonicalize")
    builder.remove("cse")
    assert text(builder) == "builtin.module(ext-a)"
    report = builder.report
    assert report is not None
    assert report.notes == (
        "dropped an empty 'func.func' pipeline: it has nothing to run",
    )


def test_removing_a_prerequisite_fails_and_changes_nothing() -> None:
    builder = framework()
    before = text(builder)
    with pytest.raises(OrderingError) as caught:
        builder.remove("one-shot-bufferize-stub")
    message = str(caught.value)
    assert 'remove("one-shot-bufferize-stub") was undone' in message
    assert "'func.func(memref-opt)'" in message
    assert "requires a Bufferization pass to run before it" in message
    assert "the pipeline has none" in message
    assert "fix: add a Bufferization pass before 'func.func(memref-opt)'" in message
    assert text(builder) == before


# --- anchors that are not found ---------------------------------------------------------


def test_anchor_not_found_names_what_was_searched_and_what_exists() -> None:
    builder = framework()
    with pytest.raises(AnchorNotFoundError) as caught:
        builder.insert_before(ExtA(), "one-shot-bufferise")
    err = caught.value
    assert err.anchor == "one-shot-bufferise"
    assert "one-shot-bufferize-stub" in err.arguments
    assert err.kinds == (
        "Bufferization",
        "Cleanup",
        "EarlyOptimization",
        "Ingress",
        "LateOptimization",
        "Lowering",
    )
    message = str(err)
    assert "no 'one-shot-bufferise' pass in the 'builtin.module' pipeline" in message
    assert "did you mean 'one-shot-bufferize-stub'?" in message
    assert "Bufferization (one-shot-bufferize-stub)" in message
    assert "fix: anchor on one of these, or catch AnchorNotFoundError" in message


def test_anchor_not_found_leaves_the_builder_unchanged() -> None:
    builder = framework()
    before = text(builder)
    with pytest.raises(AnchorNotFoundError):
        builder.insert_before(ExtA(), PassKind.HARDWARE_OPTIMIZATION)
    assert text(builder) == before


# --- bundles -------------------------------------------------------------------------------


def test_cleanup_is_canonicalize_then_cse() -> None:
    bundle = cleanup()
    assert bundle.name == "cleanup"
    assert [p.argument for p in bundle.passes] == ["canonicalize", "cse"]


def test_user_bundles_are_flattened_and_kept_together() -> None:
    builder = PipelineBuilder()
    pair = Bundle("pair", ExtA(), "ext-b")
    builder.add(pair)
    builder.add(pair)  # a template: each use gets its own passes
    builder.insert_after(Untagged(), "ext-a", occurrence=0)
    assert text(builder) == "builtin.module(ext-a,ext-b,untagged,ext-a,ext-b)"


MALFORMED_BUNDLES: list[tuple[Callable[[], Bundle], str]] = [
    (lambda: Bundle("", "cse"), 'fix: Bundle("my-bundle", ...)'),
    (lambda: Bundle("empty"), "fix: give it at least one pass"),
    (lambda: Bundle("nested", "func.func(cse)"), "fix: add the pass itself"),
]


@pytest.mark.parametrize(("make", "fix"), MALFORMED_BUNDLES)
def test_malformed_bundles_are_rejected(make: Callable[[], Bundle], fix: str) -> None:
    with pytest.raises(BuilderError, match=re.escape(fix)):
        make()


def test_adjacent_duplicate_cleanup_bundles_collapse_and_the_report_says_so() -> None:
    builder = PipelineBuilder(framework="acme")
    builder.add(ExtA())
    builder.add(cleanup())
    with builder.extension("tpp"):
        builder.insert_after(cleanup(), "ext-a")
        builder.insert_after(cleanup(), PassKind.CLEANUP)
    assert text(builder) == "builtin.module(ext-a,canonicalize,cse)"
    report = builder.report
    assert report is not None
    assert len(report.notes) == 2
    assert report.notes[0] == (
        "collapsed bundle 'cleanup' (placed by framework 'acme' via add) into the "
        "identical bundle at #2-#3 (placed by extension 'tpp' via "
        'insert_after("ext-a")): nothing runs between them'
    )
    explained = builder.explain()
    assert explained.count("(collapsed)") == 2


def test_cleanup_bundles_with_a_pass_between_them_are_kept() -> None:
    builder = PipelineBuilder()
    builder.add(cleanup())
    builder.add(ExtA())
    builder.add(cleanup())
    assert text(builder) == "builtin.module(canonicalize,cse,ext-a,canonicalize,cse)"
    assert builder.report is not None and builder.report.notes == ()


def test_only_identical_all_cleanup_bundles_collapse() -> None:
    builder = PipelineBuilder()
    builder.add(cleanup())
    builder.add(Bundle("cleanup", "canonicalize{max-iterations=2}", "cse"))
    builder.add(Bundle("pair", ExtA(), ExtB()))
    builder.add(Bundle("pair", ExtA(), ExtB()))
    built = text(builder)
    assert built.count("cse") == 2
    assert built.count("ext-a") == 2


def test_cleanup_bundles_collapse_across_merged_function_pipelines() -> None:
    builder = PipelineBuilder()
    first = builder.nest("func.func")
    first.add(TensorFold())
    first.add(cleanup())
    builder.nest("func.func").add(cleanup())
    assert text(builder) == "builtin.module(func.func(tensor-fold,canonicalize,cse))"


def test_bundles_that_only_look_alike_by_name_do_not_collapse() -> None:
    builder = PipelineBuilder()
    builder.add(cleanup())
    builder.add(Bundle("cleanup", "cse", "canonicalize"))
    # not the same bundle; only the 'cse' that repeats the one right before goes
    assert text(builder) == "builtin.module(canonicalize,cse,canonicalize)"


# --- ordering constraints ----------------------------------------------------------------


def test_a_strong_constraint_fails_the_insertion_that_breaks_it() -> None:
    builder = PipelineBuilder(framework="acme")
    builder.add(Bufferize())
    with pytest.raises(OrderingError) as caught:
        builder.insert_before(MemrefOpt(), "one-shot-bufferize-stub")
    message = str(caught.value)
    assert "requires a Bufferization pass to run before it" in message
    assert (
        "[Requires(PassKind.BUFFERIZATION), declared by pass class MemrefOpt]"
        in message
    )
    assert "the only ones run after it, from 'one-shot-bufferize-stub' (#2" in message
    assert (
        "fix: place 'func.func(memref-opt)' after 'one-shot-bufferize-stub'" in message
    )
    assert caught.value.violations[0].constraint == Requires(PassKind.BUFFERIZATION)
    assert text(builder) == "builtin.module(one-shot-bufferize-stub)"


def test_a_strong_constraint_is_an_error_even_with_weak_warnings() -> None:
    with pytest.raises(OrderingError, match="the pipeline has none"):
        PipelineBuilder(weak_severity=Severity.WARNING).add(MemrefOpt())


class AfterLowering(_Stub):
    argument = "after-lowering"
    ordering = (AfterLast(PassKind.LOWERING),)


def test_weak_constraints_warn_by_default_and_are_in_the_report() -> None:
    builder = PipelineBuilder()
    builder.add(LowerToLLVM())
    builder.add(AfterLowering())
    with pytest.warns(OrderingWarning, match="must run after the last Lowering pass"):
        builder.insert_after(LowerLoops(), "after-lowering")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # warned once already: build stays quiet
        builder.build()
    report = builder.report
    assert report is not None
    assert [w.subject for w in report.warnings] == ["after-lowering"]
    assert report.warnings[0].severity is Severity.WARNING


def test_weak_constraints_are_errors_when_configured() -> None:
    builder = PipelineBuilder(weak_severity=Severity.ERROR)
    builder.add(AfterLowering())
    with pytest.raises(OrderingError, match="'lower-to-llvm' \\(#2"):
        builder.add(LowerToLLVM())
    assert text(builder) == "builtin.module(after-lowering)"


def test_weak_constraints_hold_when_nothing_matches() -> None:
    builder = PipelineBuilder(weak_severity=Severity.ERROR)
    builder.add(AfterLowering())
    builder.add(BeforeAnyCanonicalize())
    assert text(builder) == "builtin.module(after-lowering,before-any-canonicalize)"


def test_cleanup_rule_waits_while_the_pass_is_last_and_is_checked_at_build() -> None:
    builder = PipelineBuilder(weak_severity=Severity.ERROR)
    builder.require(PassKind.EARLY_OPTIMIZATION, FollowedByCleanup())
    builder.add(TensorFold())  # the cleanup may come next
    builder.add(cleanup())
    builder.add(TensorFold())
    with pytest.raises(OrderingError) as caught:
        builder.build()
    message = str(caught.value)
    assert "'func.func(tensor-fold)' (#4, placed by framework via add)" in message
    assert "nothing runs after it" in message
    assert (
        "[FollowedByCleanup(), required of PassKind.EARLY_OPTIMIZATION by framework]"
        in message
    )
    assert "fix: add cleanup() at the end of the pipeline" in message


def test_cleanup_rule_allows_passes_between_the_pass_and_its_cleanup() -> None:
    builder = PipelineBuilder(framework="acme", weak_severity=Severity.ERROR)
    builder.require(PassKind.EARLY_OPTIMIZATION, FollowedByCleanup())
    builder.add(TensorFold())
    builder.add(cleanup())
    with builder.extension("tpp"):
        builder.insert_after(ExtA(), "tensor-fold")  # eventually cleaned up: fine
    assert "cleaned up by #3 canonicalize" in builder.explain()
    with builder.extension("tpp"):
        builder.insert_after(ExtB(), "cse")
        builder.remove("canonicalize")
        builder.remove("cse")  # a later call may still append a cleanup
    with pytest.raises(OrderingError) as caught:
        builder.build()
    message = str(caught.value)
    assert "should be followed by a Cleanup pass, eventually" in message
    assert "but none runs after it, up to the last pass 'ext-b' (#3" in message
    assert 'insert_after(cleanup(), "tensor-fold")' in message


def test_cleanup_rule_looks_past_the_rest_of_a_bundle() -> None:
    builder = PipelineBuilder(weak_severity=Severity.ERROR)
    builder.require(PassKind.EARLY_OPTIMIZATION, FollowedByCleanup())
    builder.add(Bundle("fold-then-tag", TensorFold(), ExtA()))
    builder.add(cleanup())
    explained = builder.explain()
    assert "ok: FollowedByCleanup()" in explained
    assert "cleaned up by #3 canonicalize" in explained


def test_checks_inside_an_extension_block_wait_for_its_end() -> None:
    builder = PipelineBuilder(weak_severity=Severity.ERROR)
    builder.require(PassKind.EARLY_OPTIMIZATION, FollowedByCleanup())
    builder.add(Ingress())
    builder.add(Bufferize())
    with builder.extension("tpp"):
        builder.insert_before(TensorFold(), "one-shot-bufferize-stub")  # broken here
        builder.insert_before(cleanup(), "one-shot-bufferize-stub")  # fixed here
    assert "tensor-fold),canonicalize,cse,one-shot" in text(builder)


def test_an_extension_block_that_breaks_a_constraint_is_undone_as_a_whole() -> None:
    builder = PipelineBuilder(weak_severity=Severity.ERROR)
    builder.add(Ingress())
    with (
        pytest.raises(
            OrderingError, match="the changes of extension 'tpp' were undone"
        ),
        builder.extension("tpp"),
    ):
        builder.add(ExtA())
        builder.add(AfterLowering())
        builder.add(LowerToLLVM())
    assert text(builder) == "builtin.module(ingress-stub)"


class NeedsB(_Stub):
    argument = "needs-b"
    ordering = (AfterLast("before-a"),)


class BeforeA(_Stub):
    argument = "before-a"
    ordering = (AfterLast("needs-b"),)


def test_a_contradiction_reports_the_whole_chain() -> None:
    builder = PipelineBuilder()
    builder.add(NeedsB())
    with pytest.raises(ContradictionError) as caught:
        builder.add(BeforeA())
    err = caught.value
    assert err.chain == (
        "'needs-b' (#1) must run before 'before-a' (#2): 'before-a' has "
        'AfterLast("needs-b") (declared by pass class BeforeA)',
        "'before-a' (#2) must run before 'needs-b' (#1): 'needs-b' has "
        'AfterLast("before-a") (declared by pass class NeedsB)',
    )
    assert "fix: remove one of these passes or drop one of these constraints" in str(
        err
    )
    assert text(builder) == "builtin.module(needs-b)"


def test_a_contradiction_through_a_rule_and_a_kind() -> None:
    """ext-a runs before every Lowering pass, Lowering passes run before every
    Cleanup, canonicalize runs before ext-a: no place for a Lowering pass."""
    builder = PipelineBuilder(framework="acme")
    builder.require("ext-a", BeforeFirst(PassKind.LOWERING))
    builder.require(PassKind.LOWERING, BeforeFirst(PassKind.CLEANUP))
    builder.require("canonicalize", BeforeFirst("ext-a"))
    builder.add("canonicalize")
    builder.add(ExtA())
    with pytest.raises(ContradictionError) as caught:
        builder.insert_before(LowerToLLVM(), "canonicalize")
    chain = "\n".join(caught.value.chain)
    assert "required of PassKind.LOWERING by framework 'acme'" in chain
    assert "required of \"ext-a\" by framework 'acme'" in chain
    assert "required of \"canonicalize\" by framework 'acme'" in chain
    assert len(caught.value.chain) == 3


def test_a_bundle_keeps_its_order_when_checking_contradictions() -> None:
    builder = PipelineBuilder()
    builder.add(Bundle("pair", "canonicalize", "cse"))
    with pytest.raises(ContradictionError, match="bundle 'pair' keeps its order"):
        builder.require("cse", BeforeFirst("canonicalize"))


def test_a_rule_that_is_broken_when_stated_is_refused() -> None:
    builder = PipelineBuilder()
    builder.add(ExtA())
    with pytest.raises(OrderingError, match="the pipeline has none"):
        builder.require("ext-a", Requires(PassKind.INGRESS))
    builder.add(Ingress())  # without the rule, any order is fine
    assert text(builder) == "builtin.module(ext-a,ingress-stub)"


def test_require_needs_constraints() -> None:
    with pytest.raises(BuilderError, match=r"fix: pass Requires\(\.\.\.\)"):
        PipelineBuilder().require("ext-a")


# --- extensions, origins and explain() --------------------------------------------------


def test_extension_blocks_undo_everything_on_any_error() -> None:
    builder = framework()
    before = text(builder)
    with pytest.raises(AnchorNotFoundError), builder.extension("tpp"):
        builder.insert_before(ExtA(), "one-shot-bufferize-stub")
        builder.insert_after(ExtB(), "one-shot-bufferize")  # not in this framework
    assert text(builder) == before


def test_nested_extension_blocks_are_named_outer_slash_inner() -> None:
    builder = PipelineBuilder(framework="acme")
    builder.add(ExtA())
    with builder.extension("plugins"), builder.extension("tpp"):
        builder.insert_after(ExtB(), "ext-a")
    with builder.extension("tpp"), builder.extension("tpp"):
        builder.insert_after(Untagged(), "ext-b")
    explained = builder.explain()
    assert "placed by extension 'plugins/tpp' via insert_after(\"ext-a\")" in explained
    assert "placed by extension 'tpp' via insert_after(\"ext-b\")" in explained
    assert "placed by framework 'acme' via add" in explained


def test_explain_lists_every_pass_with_origin_and_constraints() -> None:
    builder = framework()
    builder.require(PassKind.EARLY_OPTIMIZATION, FollowedByCleanup())
    with builder.extension("tpp"):
        builder.insert_before(LowerLoops(), PassKind.LOWERING)
        builder.remove("cse", occurrence=-1)
    explained = builder.explain()
    lines = explained.splitlines()
    assert lines[0] == "9 passes on 'builtin.module', in execution order:"
    assert "   2.  func.func(tensor-fold)  [EarlyOptimization]" in lines
    assert (
        "       ok: FollowedByCleanup() [required of PassKind.EARLY_OPTIMIZATION by "
        "framework 'acme']: cleaned up by #3 func.func(canonicalize)"
    ) in lines
    assert "       satisfies FollowedByCleanup() of #2 func.func(tensor-fold)" in lines
    assert (
        "       ok: Requires(PassKind.BUFFERIZATION) [declared by pass class "
        "MemrefOpt]: after #5 one-shot-bufferize-stub"
    ) in lines
    assert (
        "       placed by extension 'tpp' via insert_before(PassKind.LOWERING)"
    ) in lines
    assert "removed and replaced:" in lines
    assert any(
        line.startswith(
            "  - removed 'cse' (placed by framework 'acme' via add, in bundle"
        )
        and line.endswith("extension 'tpp' via remove(\"cse\", occurrence=-1)")
        for line in lines
    )


def test_explain_shows_violations_instead_of_raising() -> None:
    builder = PipelineBuilder()
    builder.add(LowerToLLVM())
    builder.add(AfterLowering())
    with pytest.warns(OrderingWarning):
        builder.add(LowerLoops())
    explained = builder.explain()
    assert "warning: AfterLast(PassKind.LOWERING)" in explained
    assert "violations:\n  - warning: 'after-lowering' (#2" in explained


# --- every error says how to fix it -----------------------------------------------------


def misplaced_module_pass(builder: PipelineBuilder) -> None:
    functions = builder.nest("func.func")
    functions.add(ExtA())
    functions.insert_before(ModuleOnly(), "ext-a")


MISTAKES: list[Callable[[PipelineBuilder], object]] = [
    lambda b: b.insert_before(ExtA(), "nope"),
    lambda b: b.insert_after(ExtA(), PassKind("Nope")),
    lambda b: b.remove("canonicalize"),
    lambda b: b.replace("cse", ExtA(), occurrence=7),
    lambda b: b.remove("one-shot-bufferize-stub"),
    lambda b: b.insert_before(MemrefOpt(), PassKind.INGRESS),
    lambda b: b.nest("func.func").add(ModuleOnly()),
    misplaced_module_pass,
    lambda b: b.replace("tensor-fold", ModuleOnly()),
    lambda b: b.replace("cse", "func.func(ext-a)", occurrence=1),
    lambda b: b.extension(" ").__enter__(),
    lambda b: b.require("ext-a"),
]


@pytest.mark.parametrize("mistake", MISTAKES)
def test_every_error_message_says_how_to_fix_it(
    mistake: Callable[[PipelineBuilder], object],
) -> None:
    builder = framework()
    with pytest.raises(PassflowError) as caught:
        mistake(builder)
    assert "fix:" in str(caught.value)


# --- the example ------------------------------------------------------------------------


def test_the_proposals_example_composes_both_frameworks() -> None:
    example = Path(__file__).parent.parent / "examples" / "builder_framework.py"
    result = subprocess.run(
        [sys.executable, str(example)], capture_output=True, text=True, check=True
    )
    out = result.stdout
    acme, beta = out.split("=== beta-gpu")
    assert "tpp-pack-tensors" in acme
    assert "extensions: outline, tpp" in acme  # 'outline' was discovered
    assert (
        "placed by extension 'tpp' via add_at(\"after-bufferization\")" in acme
    )  # the framework's extension point
    assert "collapsed bundle 'cleanup'" in acme
    assert (
        "func.func(stablehlo-legalize-to-linalg),outline-kernels,"
        "func.func(linalg-fuse-elementwise-ops," in acme
    )  # the module pass split the function pipeline
    assert "split the 'func.func' pipeline after" in acme
    assert "'tensor-optimization' (placed by framework 'acme-cpu'" in acme
    assert "tpp: no 'one-shot-bufferize' here" in beta
    assert "tpp-pack-tensors" not in beta
    assert (
        "placed by extension 'tpp/fallback' via insert_after(PassKind.BUFFERIZATION)"
        in beta
    )
    assert "before #12 legacy-gpu-lowering" in beta
    assert out.count("(the built pipeline ran)") == 2
    assert result.stderr == ""


# --- misuse is refused at the call that made it --------------------------------


def _misuses() -> list[tuple[str, Callable[[PipelineBuilder], None], str]]:
    from passflow.transforms import CSE

    untyped = cast(Callable[..., None], PipelineBuilder.add)
    return [
        (
            "a number",
            lambda b: untyped(b, 123),
            "add(123): got int 123; expected a pass",
        ),
        (
            "a pass class",
            lambda b: untyped(b, CSE),
            "add(CSE): CSE is a pass class; fix: pass an instance, CSE()",
        ),
        (
            "a pass class to insert",
            lambda b: cast(Callable[..., None], b.insert_after)(CSE, "cse"),
            'insert_after(CSE, "cse"): CSE is a pass class',
        ),
        (
            "kinds as one string",
            lambda b: untyped(b, CSE(), kinds="Lowering"),
            "kinds='Lowering'; expected a tuple of kind names, e.g. kinds=(\"Lowering\",)",
        ),
        (
            "a pass manager",
            lambda b: untyped(b, PassManager()),
            "got a pass manager, 'builtin.module()'; expected a pass",
        ),
        (
            "text anchored on the builder's own anchor",
            lambda b: b.add("builtin.module(cse)"),
            "the text is anchored on 'builtin.module', this pipeline's own anchor",
        ),
    ]


@pytest.mark.parametrize(
    ("case", "call", "message"), _misuses(), ids=[m[0] for m in _misuses()]
)
def test_misuse_is_a_builder_error_naming_what_was_expected(
    case: str, call: Callable[[PipelineBuilder], None], message: str
) -> None:
    builder = PipelineBuilder()
    builder.add("cse")
    with pytest.raises(BuilderError) as caught:
        call(builder)
    assert message in str(caught.value)
    assert str(builder.build()) == "builtin.module(cse)"  # left unchanged


def test_text_anchored_on_another_op_is_still_a_nested_pipeline() -> None:
    builder = PipelineBuilder()
    builder.add("func.func(cse)")
    builder.nest("builtin.module").add("symbol-dce")
    assert str(builder.build()) == (
        "builtin.module(func.func(cse),builtin.module(symbol-dce))"
    )
