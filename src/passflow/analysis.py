"""Analyses: computed on demand, cached per operation, invalidated by passes.

An analysis is any class constructible as `A(op)` or `A(op, analysis_manager)`; the
second form lets an analysis query the analyses it depends on. It may define
`is_invalidated(self, preserved: PreservedAnalyses) -> bool` to decide for itself
whether it survives a pass (for example when it depends only on analyses that were
preserved). Cached results live in a tree of maps mirroring the op nesting, so a
nested pass can peek at its parent's cached results and a parent can ask for a
child's, as in MLIR.
"""

from __future__ import annotations

import inspect
from typing import Protocol, TypeVar, cast

from passflow.ir import Operation

__all__ = ["AnalysisManager", "PreservedAnalyses"]

A = TypeVar("A")


class AnalysisObserver(Protocol):
    """Told before and after an analysis is computed: the pass instrumentor
    (`passflow.instrumentation.PassInstrumentor`) forwards it to the
    instrumentations' analysis hooks."""

    def run_before_analysis(self, name: str, analysis: type, op: Operation) -> None: ...

    def run_after_analysis(self, name: str, analysis: type, op: Operation) -> None: ...


class PreservedAnalyses:
    """The set of analyses a pass left valid; `all` means the pass changed nothing."""

    __slots__ = ("_all", "_types")

    def __init__(self) -> None:
        self._all = False
        self._types: set[type] = set()

    def preserve_all(self) -> None:
        self._all = True

    def preserve(self, *analyses: type) -> None:
        self._types.update(analyses)

    def unpreserve(self, analysis: type) -> None:
        self._types.discard(analysis)

    def is_all(self) -> bool:
        return self._all

    def is_none(self) -> bool:
        return not self._all and not self._types

    def is_preserved(self, analysis: type) -> bool:
        return self._all or analysis in self._types

    def copy(self) -> PreservedAnalyses:
        result = PreservedAnalyses()
        result._all = self._all
        result._types = set(self._types)
        return result

    def __repr__(self) -> str:
        if self._all:
            return "PreservedAnalyses(all)"
        return f"PreservedAnalyses({sorted(t.__name__ for t in self._types)})"


ALL_PRESERVED = PreservedAnalyses()
ALL_PRESERVED.preserve_all()
"""Shared "everything preserved" marker; never mutated."""

_NONE_PRESERVED = PreservedAnalyses()

_takes_manager: dict[type, bool] = {}


def _construct(analysis: type[A], op: Operation, am: AnalysisManager) -> A:
    wants = _takes_manager.get(analysis)
    if wants is None:
        params = [
            p
            for p in inspect.signature(analysis).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        wants = _takes_manager[analysis] = len(params) >= 2
    return analysis(op, am) if wants else analysis(op)  # type: ignore[call-arg]


def analysis_name(analysis: type) -> str:
    """The name instrumentation and timing show for an analysis (`DominanceInfo`)."""
    return analysis.__name__


class _AnalysisMap:
    """Cached analyses of one op and the maps of its nested ops."""

    __slots__ = ("analyses", "children", "instrumentor", "op", "parent")

    def __init__(
        self,
        op: Operation,
        parent: _AnalysisMap | None,
        instrumentor: AnalysisObserver | None,
    ) -> None:
        self.op = op
        self.parent = parent
        self.instrumentor = instrumentor
        self.analyses: dict[type, object] = {}
        self.children: dict[int, _AnalysisMap] = {}
        """The maps of nested ops, by `id(op)`: xDSL hashes an op in Python, an
        id hashes in C (a map holds its op, so the id stays its own)."""

    def child(self, op: Operation) -> _AnalysisMap:
        found = self.children.get(id(op))
        if found is None:
            found = self.children[id(op)] = _AnalysisMap(op, self, self.instrumentor)
        return found

    def invalidate(self, preserved: PreservedAnalyses) -> None:
        if preserved.is_all():
            return
        self._invalidate_own(preserved)
        if preserved.is_none():
            self.children.clear()
            return
        worklist = list(self.children.values())
        while worklist:
            current = worklist.pop()
            current._invalidate_own(preserved)
            worklist.extend(current.children.values())

    def _invalidate_own(self, preserved: PreservedAnalyses) -> None:
        if not self.analyses:
            return
        remaining = preserved.copy()
        for key, value in list(self.analyses.items()):
            hook = getattr(value, "is_invalidated", None)
            invalid = (
                bool(hook(remaining))
                if callable(hook)
                else not remaining.is_preserved(key)
            )
            if invalid:
                remaining.unpreserve(key)
                del self.analyses[key]

    def clear(self) -> None:
        self.analyses.clear()
        self.children.clear()


class AnalysisManager:
    """A handle on the analyses of one op; cheap to create, shared by reference.

    A nested handle (`nest`) makes its op's map of cached analyses on first use,
    so that an adaptor's children that no pass asks an analysis of (most of them,
    in most pipelines) cost one small object and nothing to clear.
    """

    __slots__ = ("_map", "_op", "_parent")

    def __init__(
        self,
        _map: _AnalysisMap | None,
        _parent: _AnalysisMap | None = None,
        _op: Operation | None = None,
    ) -> None:
        self._map = _map
        self._parent = _parent
        """With `_op`, the map `_map` is made below on first use (`_own`)."""
        self._op = _op

    @classmethod
    def for_root(
        cls, op: Operation, instrumentor: AnalysisObserver | None = None
    ) -> AnalysisManager:
        return cls(_AnalysisMap(op, None, instrumentor))

    def _own(self) -> _AnalysisMap:
        """This op's map, made (with the maps on the way down) on first use."""
        amap = self._map
        if amap is not None:
            return amap
        parent, op = self._parent, self._op
        assert parent is not None and op is not None  # set together by `nest`
        chain: list[Operation] = []
        current: Operation | None = op
        while current is not None and current is not parent.op:
            chain.append(current)
            current = current.parent_op()
        if current is None or not chain:
            raise ValueError("AnalysisManager.nest needs a descendant of its operation")
        for step in reversed(chain):
            parent = parent.child(step)
        self._map = parent
        return parent

    @property
    def operation(self) -> Operation:
        amap = self._map
        if amap is None:
            assert self._op is not None
            return self._op
        return amap.op

    def get_analysis(self, analysis: type[A]) -> A:
        """The cached analysis, or a new one computed (and cached) now."""
        amap = self._map or self._own()
        found = amap.analyses.get(analysis)
        if found is not None:
            return cast(A, found)
        instrumentor = amap.instrumentor
        name = analysis_name(analysis)
        if instrumentor is not None:
            instrumentor.run_before_analysis(name, analysis, amap.op)
        result = _construct(analysis, amap.op, self)
        amap.analyses[analysis] = result
        if instrumentor is not None:
            instrumentor.run_after_analysis(name, analysis, amap.op)
        return result

    def get_cached_analysis(self, analysis: type[A]) -> A | None:
        return cast("A | None", (self._map or self._own()).analyses.get(analysis))

    def get_cached_parent_analysis(
        self, analysis: type[A], parent_op: Operation
    ) -> A | None:
        """The analysis cached on the map of ancestor `parent_op`; never computes."""
        current = (self._map or self._own()).parent
        while current is not None:
            if current.op is parent_op:
                return cast("A | None", current.analyses.get(analysis))
            current = current.parent
        return None

    def get_cached_child_analysis(
        self, analysis: type[A], child: Operation
    ) -> A | None:
        """The analysis cached on an immediate child's map; never computes."""
        amap = self._map or self._own()
        if child.parent_op() is not amap.op:
            raise ValueError("get_cached_child_analysis needs an immediate child op")
        found = amap.children.get(id(child))
        return None if found is None else cast("A | None", found.analyses.get(analysis))

    def get_child_analysis(self, analysis: type[A], op: Operation) -> A:
        return self.nest(op).get_analysis(analysis)

    def nest(self, op: Operation) -> AnalysisManager:
        """The analysis manager of a proper descendant `op`. Its map (and those on
        the way down) is made on first use, which is also when a non-descendant
        raises `ValueError`."""
        return AnalysisManager(None, self._map or self._own(), op)

    def invalidate(self, preserved: PreservedAnalyses | None) -> None:
        """Drop the analyses of this op and its nested ops that `preserved` does
        not keep (None: none kept); free when nothing is cached, as after most
        passes."""
        amap = self._map
        if amap is not None and (amap.analyses or amap.children):
            amap.invalidate(_NONE_PRESERVED if preserved is None else preserved)

    def clear(self) -> None:
        amap = self._map
        if amap is not None:
            amap.clear()

    def cached_analyses(self) -> list[type]:
        """Types cached on this op, in the order they were computed."""
        return list((self._map or self._own()).analyses)
