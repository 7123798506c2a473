"""What a pass changed, per top-level symbol: the unit of change of the run
report and of the IR history.

A *top-level symbol* is a direct child of the run's root op (a `func.func
@f500`, a `memref.global`, a nested module; an op without a symbol name is
`name#k`, its k-th such op). A pass on a function may change that function; a
pass on an op inside a function, the function; a module pass (the inliner,
symbol-dce), any of them, and it may make or erase some. So a module pass's
change is seen as the functions it changed, made or erased, never as the
whole module, and a nested pass's as its function.

`SymbolTracker.snapshot(op)` stamps the units a pass on `op` may change
(`ir.change_stamp`, no printing) and prints a unit only when its stamp
differs from the one of the text last recorded for it; `changes(snapshot,
op)` compares after the pass and prints only what changed. So each unit is
printed once when first seen, and once per change.

Every change to a unit happens inside some pass, whose `changes` stamps that
unit after it. So, between passes, a unit's last stamp still holds, and a
snapshot taken when no other pass is running (`enclosed` false: no pass of
an outer pipeline is between its own steps) reuses it instead of walking the
unit again. Inside a pass that runs a dynamic pipeline (the inliner), the
outer pass may have changed a unit between two inner passes, so such
snapshots stamp afresh.
"""

from __future__ import annotations

from dataclasses import dataclass

from passflow import ir, verifier
from passflow.ir import Operation

__all__ = [
    "SymbolChange",
    "SymbolState",
    "SymbolTracker",
    "labelled_units",
    "top_level_units",
]


@dataclass(eq=False, slots=True)
class SymbolState:
    """A top-level unit as a pass found it."""

    label: str
    """`@f500`, or `name#k` for the k-th unnamed `name` op."""
    op: Operation
    stamp: ir.ChangeStamp
    text: str


@dataclass(frozen=True, slots=True)
class SymbolChange:
    """One unit a pass changed (`before` None: it made it; `after` None: it
    erased it)."""

    label: str
    op: Operation
    before: str | None
    after: str | None


def labelled_units(children: list[Operation]) -> list[tuple[str, Operation]]:
    """`children` (top-level ops, in order) with their unit labels."""
    seen: dict[str, int] = {}
    labelled: list[tuple[str, Operation]] = []
    for child in children:
        symbol = ir.symbol_name(child)
        if symbol is not None:
            labelled.append((f"@{symbol}", child))
            continue
        name = ir.operation_name(child).name
        k = seen.get(name, 0)
        seen[name] = k + 1
        labelled.append((f"{name}#{k}", child))
    return labelled


def top_level_units(op: Operation) -> list[tuple[str, Operation]]:
    """The top-level units (label, op) a pass on `op` may change: every child
    of `op` when it is the root, else the root's child that holds `op`."""
    parent = op.parent_op()
    if parent is None:
        return labelled_units(ir.direct_children(op))
    while (grand := parent.parent_op()) is not None:
        op, parent = parent, grand
    symbol = ir.symbol_name(op)
    if symbol is not None:
        return [(f"@{symbol}", op)]
    for label, child in labelled_units(ir.direct_children(parent)):
        if child is op:
            return [(label, child)]
    return []


def print_unit(op: Operation, generic: bool = False) -> str:
    """`op`'s text: custom form (generic when asked, or when its custom
    printer trips over invalid IR)."""
    try:
        return ir.print_op(op, generic=generic)
    except Exception:
        return ir.print_op(op, generic=True)


class SymbolTracker:
    """Snapshots of top-level units before a pass, and their changes after it."""

    def __init__(self) -> None:
        self._texts: dict[Operation, tuple[ir.ChangeStamp, str]] = {}
        self._stamps: dict[Operation, ir.ChangeStamp] = {}

    def clear(self) -> None:
        """Forget every text and stamp (at the end of a run)."""
        self._texts.clear()
        self._stamps.clear()

    def _text(self, op: Operation, stamp: ir.ChangeStamp, generic: bool = False) -> str:
        known = self._texts.get(op)
        if known is not None and known[0] == stamp:
            return known[1]
        text = print_unit(op, generic)
        self._texts[op] = (stamp, text)
        return text

    def snapshot(self, op: Operation, *, enclosed: bool) -> list[SymbolState]:
        """The units a pass on `op` may change, with their texts now;
        `enclosed` when a pass of an outer pipeline is running (then every
        unit is stamped afresh)."""
        states: list[SymbolState] = []
        known = {} if enclosed else self._stamps
        for label, unit in top_level_units(op):
            stamp = known.get(unit)
            if stamp is None:
                stamp = self._stamps[unit] = ir.change_stamp(unit)
            states.append(SymbolState(label, unit, stamp, self._text(unit, stamp)))
        return states

    def changes(
        self, before: list[SymbolState], op: Operation, *, failed: bool = False
    ) -> list[SymbolChange]:
        """What the pass that ran on `op` changed, against `before`, in the
        order of the units after it (erased ones last). After a failed pass, a
        unit the verifier rejects is printed in generic form."""
        old = {state.label: state for state in before}
        if op.parent_op() is None:
            after = top_level_units(op)
        else:
            after = [(state.label, state.op) for state in before]
        found: list[SymbolChange] = []
        seen: set[str] = set()
        for label, unit in after:
            seen.add(label)
            state = old.get(label)
            stamp = self._stamps[unit] = ir.change_stamp(unit)
            if state is not None and state.op is unit and state.stamp == stamp:
                continue
            generic = failed and verifier.verify(unit) is not None
            text = self._text(unit, stamp, generic)
            previous = state.text if state is not None else None
            if previous != text:
                found.append(SymbolChange(label, unit, previous, text))
        found.extend(
            SymbolChange(label, state.op, state.text, None)
            for label, state in old.items()
            if label not in seen
        )
        return found
