"""Incremental checks: a call that only places passes is judged by what it placed,
and must still catch everything the full evaluation would."""

from __future__ import annotations

import random

import pytest

from passflow import OperationPass
from passflow.builder import (
    AfterLast,
    Anchor,
    BeforeFirst,
    BuilderError,
    InBundle,
    OrderingError,
    PassKind,
    PipelineBuilder,
    PrecededByCleanup,
    Requires,
    cleanup,
)
from passflow.builder.entries import entry_matches, pass_entries
from passflow.diagnostics import Severity
from passflow.pass_base import Pass


class _Stub(OperationPass):
    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


class Bufferize(_Stub):
    argument = "scale-bufferize"
    kinds = (PassKind.BUFFERIZATION,)


class Late(_Stub):
    argument = "scale-late"
    op_name = "func.func"
    kinds = (PassKind.LATE_OPTIMIZATION,)


class Hardware(_Stub):
    argument = "scale-hardware"
    kinds = (PassKind.HARDWARE_OPTIMIZATION,)


class Lower(_Stub):
    argument = "scale-lower"
    kinds = (PassKind.LOWERING,)


class NeedsClean(_Stub):
    argument = "scale-needs-clean"
    ordering = (PrecededByCleanup(),)


class BeforeHardware(_Stub):
    argument = "scale-before-hardware"
    ordering = (BeforeFirst(PassKind.HARDWARE_OPTIMIZATION),)


def ruled() -> PipelineBuilder:
    builder = PipelineBuilder(weak_severity=Severity.ERROR)
    builder.require(PassKind.LOWERING, AfterLast(PassKind.BUFFERIZATION))
    builder.require(PassKind.HARDWARE_OPTIMIZATION, BeforeFirst(PassKind.LOWERING))
    builder.require(PassKind.LATE_OPTIMIZATION, Requires(PassKind.BUFFERIZATION))
    return builder


def test_a_new_pass_that_breaks_an_existing_passs_rule_is_caught() -> None:
    builder = ruled()
    builder.add(Bufferize())
    builder.add(Hardware())
    builder.add(Lower())
    with pytest.raises(
        OrderingError, match=r"'scale-lower' .* must run after the last"
    ):
        builder.add(Bufferize())  # the existing Lowering pass now runs before it
    with pytest.raises(OrderingError, match=r"'scale-hardware' .* must run before the"):
        builder.insert_before(Lower(), PassKind.HARDWARE_OPTIMIZATION)
    assert str(builder.build()) == (
        "builtin.module(scale-bufferize,scale-hardware,scale-lower)"
    )


def test_placing_a_pass_right_before_one_that_needs_clean_ir_is_caught() -> None:
    builder = ruled()
    builder.add(Bufferize())
    builder.add(cleanup())
    builder.add(NeedsClean())
    with pytest.raises(OrderingError, match="should be preceded by a Cleanup pass"):
        builder.insert_before(Hardware(), "scale-needs-clean")


def test_a_declared_before_first_of_an_existing_pass_is_caught() -> None:
    builder = ruled()
    builder.add(BeforeHardware())
    builder.add(Hardware())
    with pytest.raises(
        OrderingError, match="must run before the first HardwareOptimization"
    ):
        builder.insert_before(Hardware(), "scale-before-hardware")


def test_random_edits_never_leave_a_violation_behind() -> None:
    """Every call either raises and changes nothing, or leaves no violation that the
    full evaluation (explain) would report."""
    chooser = random.Random(18)
    builder = ruled()
    functions = builder.nest("func.func")
    makers = (Bufferize, Late, Hardware, Lower, NeedsClean, BeforeHardware)
    anchors = (
        PassKind.BUFFERIZATION,
        PassKind.LATE_OPTIMIZATION,
        PassKind.HARDWARE_OPTIMIZATION,
        PassKind.LOWERING,
        PassKind.CLEANUP,
    )
    accepted = 0
    for _ in range(300):
        item = cleanup() if chooser.random() < 0.2 else chooser.choice(makers)()
        anchor = chooser.choice(anchors)
        before = str(builder.build())
        action = chooser.randrange(4)
        try:
            if action == 0:
                builder.add(item)
            elif action == 1:
                functions.add(item)
            elif action == 2:
                builder.insert_before(item, anchor)
            else:
                builder.insert_after(item, anchor, occurrence=chooser.choice((0, -1)))
        except BuilderError:
            assert str(builder.build()) == before
            continue
        accepted += 1
        assert "violations:" not in builder.explain()
    assert accepted > 50


def test_order_keys_and_indexes_stay_right_when_one_spot_fills_up() -> None:
    # Each insertion halves the gap between two keys, so the neighbours are
    # re-keyed in ever wider windows: every key must stay in run order, and
    # every anchor index must hold each matching pass once, under its key.
    builder = PipelineBuilder()
    builder.add(Bufferize())
    for _ in range(50):
        builder.add(Late())
    for _ in range(50):
        builder.add(Lower())
    for _ in range(150):
        builder.insert_before(Hardware(), "scale-lower")
        builder.insert_after(Late(), "scale-bufferize")
    tree = builder._shared.tree  # pyright: ignore[reportPrivateUsage]
    keys = [entry.key for entry in pass_entries(tree.root.entries)]
    assert keys == sorted(set(keys))
    for anchor in ("scale-lower", "scale-bufferize", PassKind.LOWERING, "scale-late"):
        ordered = tree.ordered(anchor)
        assert len({id(entry) for entry in ordered.entries}) == len(ordered.entries)
        assert ordered.keys == [entry.key for entry in ordered.entries]
    assert len(tree.matching("scale-lower")) == 50


def test_indexes_stay_right_when_every_insertion_anchors_on_a_new_name() -> None:
    # Vendors stacking extensions: each pass is its own class and anchors on a
    # pass an earlier one inserted (by its argument, or every third time by its
    # class), inside a nest. Every index (argument, kind, bundle, class) must
    # hold exactly the passes a fresh walk finds, in order, and each pass must
    # sit right next to its anchor.
    chooser = random.Random(45)
    builder = PipelineBuilder()
    builder.add(Bufferize())
    functions = builder.nest("func.func")
    functions.add(Late())
    functions.add(cleanup())
    builder.add(Lower())
    placed: list[tuple[str, type[Pass]]] = [("scale-late", Late)]
    for i in range(300):
        if i == 150:  # a class anchor searched midway is kept up to date after
            assert _Stub in builder
        cls = type(f"Vendor{i}", (_Stub,), {"argument": f"vendor-{i}"})
        name, anchor_class = chooser.choice(placed)
        anchor: str | type[Pass] = anchor_class if i % 3 == 0 else name
        if i % 2:
            builder.insert_after(cls(), anchor)
            neighbour = -1
        else:
            builder.insert_before(cls(), anchor)
            neighbour = 1
        tree = builder._shared.tree  # pyright: ignore[reportPrivateUsage]
        passes = list(pass_entries(tree.root.entries))
        position = [p.pass_.argument for p in passes].index(f"vendor-{i}")
        assert passes[position + neighbour].pass_.argument == name
        placed.append((f"vendor-{i}", cls))
    tree = builder._shared.tree  # pyright: ignore[reportPrivateUsage]
    passes = list(pass_entries(tree.root.entries))
    assert [p.key for p in passes] == sorted({p.key for p in passes})
    anchors: list[Anchor] = [name for name, _ in placed]
    anchors.extend(cls for _, cls in placed)
    anchors.extend(
        [
            PassKind.CLEANUP,
            PassKind.LATE_OPTIMIZATION,
            InBundle("cleanup"),
            _Stub,
            OperationPass,
            "never-placed",
        ]
    )
    for wanted in anchors:
        ordered = tree.ordered(wanted)
        assert ordered.entries == [p for p in passes if entry_matches(wanted, p)]
        assert ordered.keys == [p.key for p in ordered.entries]
    assert str(builder.build()).startswith("builtin.module(scale-bufferize,func.func(")
