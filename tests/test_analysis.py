"""Analysis management: caching, dependencies, invalidation and lifetime (reference §3)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import pytest

from passflow import AnalysisManager, OperationPass, PassManager, PreservedAnalyses, ir
from passflow.instrumentation import PassInstrumentation

Parse = Callable[[str], ir.ModuleOp]

TEXT = """\
func.func @a() {
  func.return
}
module @inner {
  func.func @deep() {
    func.return
  }
}
"""


class Counted:
    """An analysis counting how often it was built."""

    built: ClassVar[int] = 0

    def __init__(self, op: ir.Operation) -> None:
        type(self).built += 1
        self.op = op


class Other(Counted):
    built: ClassVar[int] = 0


class DependsOnCounted:
    """Two-argument analysis: survives unless the analysis it uses is invalidated."""

    def __init__(self, op: ir.Operation, am: AnalysisManager) -> None:
        self.base = am.get_analysis(Counted)

    def is_invalidated(self, preserved: PreservedAnalyses) -> bool:
        return not preserved.is_preserved(Counted)


@pytest.fixture(autouse=True)
def _reset() -> None:
    Counted.built = 0
    Other.built = 0


def test_get_analysis_caches_and_get_cached_never_computes(parse: Parse) -> None:
    am = AnalysisManager.for_root(parse(TEXT))
    assert am.get_cached_analysis(Counted) is None
    first = am.get_analysis(Counted)
    assert am.get_analysis(Counted) is first
    assert am.get_cached_analysis(Counted) is first
    assert Counted.built == 1


def test_two_argument_analyses_get_the_manager(parse: Parse) -> None:
    am = AnalysisManager.for_root(parse(TEXT))
    dep = am.get_analysis(DependsOnCounted)
    assert dep.base is am.get_cached_analysis(Counted)
    assert am.cached_analyses() == [Counted, DependsOnCounted]


def test_invalidation_keeps_preserved_and_drops_the_rest(parse: Parse) -> None:
    am = AnalysisManager.for_root(parse(TEXT))
    am.get_analysis(Counted)
    am.get_analysis(Other)
    preserved = PreservedAnalyses()
    preserved.preserve(Counted)
    am.invalidate(preserved)
    assert am.cached_analyses() == [Counted]
    everything = PreservedAnalyses()
    everything.preserve_all()
    am.invalidate(everything)
    assert am.cached_analyses() == [Counted]
    am.invalidate(PreservedAnalyses())
    assert am.cached_analyses() == []


def test_is_invalidated_hook_decides_and_sees_earlier_invalidations(
    parse: Parse,
) -> None:
    am = AnalysisManager.for_root(parse(TEXT))
    am.get_analysis(DependsOnCounted)  # computes Counted first
    keep_dep_only = PreservedAnalyses()
    keep_dep_only.preserve(Other)  # neither Counted nor the dependent preserved
    am.invalidate(keep_dep_only)
    # Counted is dropped, and the dependent sees it gone through the copy
    assert am.cached_analyses() == []

    am.get_analysis(DependsOnCounted)
    keep_base = PreservedAnalyses()
    keep_base.preserve(Counted, Other)
    am.invalidate(keep_base)
    # the hook keeps the dependent although its own type was not preserved
    assert am.cached_analyses() == [Counted, DependsOnCounted]


def test_child_and_parent_queries(parse: Parse) -> None:
    module = parse(TEXT)
    func_a, inner = ir.direct_children(module)
    (deep,) = ir.direct_children(inner)
    am = AnalysisManager.for_root(module)
    root_analysis = am.get_analysis(Counted)
    child = am.nest(func_a)
    assert child.get_cached_parent_analysis(Counted, module) is root_analysis
    assert child.get_cached_parent_analysis(Other, module) is None
    assert child.get_cached_parent_analysis(Counted, inner) is None  # not an ancestor
    assert am.get_cached_child_analysis(Counted, func_a) is None
    computed = child.get_analysis(Counted)
    assert am.get_cached_child_analysis(Counted, func_a) is computed
    # a deeper descendant creates the intermediate maps
    deep_analysis = am.get_child_analysis(Counted, deep)
    assert am.nest(inner).get_cached_child_analysis(Counted, deep) is deep_analysis
    with pytest.raises(ValueError, match="immediate child"):
        am.get_cached_child_analysis(Counted, deep)


def test_preserving_nothing_drops_child_maps(parse: Parse) -> None:
    module = parse(TEXT)
    func_a = ir.direct_children(module)[0]
    am = AnalysisManager.for_root(module)
    am.nest(func_a).get_analysis(Counted)
    keep_other = PreservedAnalyses()
    keep_other.preserve(Counted)
    am.invalidate(keep_other)
    assert am.get_cached_child_analysis(Counted, func_a) is not None
    am.invalidate(PreservedAnalyses())
    assert am.get_cached_child_analysis(Counted, func_a) is None


def test_partial_preservation_reaches_every_depth(parse: Parse) -> None:
    # A pass that keeps some analyses drops the others on its op and on every
    # op nested in it, grandchildren included, and keeps the preserved ones.
    module = parse(TEXT)
    func_a, inner = ir.direct_children(module)
    (deep,) = ir.direct_children(inner)
    am = AnalysisManager.for_root(module)
    for op in (func_a, inner, deep):
        am.get_child_analysis(Counted, op)
        am.get_child_analysis(Other, op)
    keep_counted = PreservedAnalyses()
    keep_counted.preserve(Counted)
    am.invalidate(keep_counted)
    kept = {
        ir.symbol_name(op): am.nest(op).cached_analyses()
        for op in (func_a, inner, deep)
    }
    assert kept == {"a": [Counted], "inner": [Counted], "deep": [Counted]}


class DropOther(OperationPass):
    """Keeps `Counted` only: any other analysis of its op, at any depth, goes."""

    argument = "drop-other"

    def run_on_operation(self) -> None:
        self.mark_analyses_preserved(Counted)


class ComputeDeep(OperationPass):
    """Computes `Counted` and `Other` on every op nested in its op."""

    argument = "compute-deep"

    def run_on_operation(self) -> None:
        am = self.get_analysis_manager()
        for op in self.get_operation().walk():
            if op is not self.get_operation():
                am.get_child_analysis(Counted, op)
                am.get_child_analysis(Other, op)
        self.mark_all_analyses_preserved()


def test_a_pass_preserving_some_analyses_invalidates_grandchildren(
    parse: Parse,
) -> None:
    module = parse(TEXT)
    (deep,) = ir.direct_children(ir.direct_children(module)[1])

    class Check(OperationPass):
        argument = "check"

        def run_on_operation(self) -> None:
            found.append(self.get_analysis_manager().nest(deep).cached_analyses())
            self.mark_all_analyses_preserved()

    found: list[list[type]] = []
    pm = PassManager()
    pm.add(ComputeDeep())
    pm.add(Check())
    pm.add(DropOther())
    pm.add(Check())
    pm.run(module)
    assert found == [[Counted, Other], [Counted]]


class Probe(OperationPass):
    """Records what cached analyses it can see; optionally computes one."""

    argument = "probe"
    seen: ClassVar[list[tuple[str, object]]] = []

    def __init__(
        self, label: str, compute: bool = False, preserve: bool = False
    ) -> None:
        super().__init__()
        self.label = label
        self.compute = compute
        self.preserve = preserve

    def run_on_operation(self) -> None:
        op = self.get_operation()
        Probe.seen.append((self.label + ":own", self.get_cached_analysis(Counted)))
        Probe.seen.append(
            (self.label + ":parent", self.get_cached_parent_analysis(Counted))
        )
        if self.compute:
            self.get_analysis(Counted)
        if self.preserve:
            self.mark_analyses_preserved(Counted)
        del op


def test_a_nested_pass_sees_its_parents_cached_analysis(parse: Parse) -> None:
    Probe.seen.clear()
    module = parse("func.func @a() {\n  func.return\n}\n")
    pm = PassManager()
    pm.add(Probe("module", compute=True, preserve=True))
    pm.nest("func.func").add(Probe("func"))
    pm.run(module)
    seen = dict(Probe.seen)
    assert seen["module:own"] is None
    assert isinstance(seen["func:parent"], Counted)


def test_analyses_do_not_outlive_their_nested_pipeline(parse: Parse) -> None:
    Probe.seen.clear()
    module = parse("func.func @a() {\n  func.return\n}\n")
    pm = PassManager()
    pm.nest("func.func").add(Probe("first", compute=True, preserve=True))
    pm.add(Probe("between"))
    pm.nest("func.func").add(Probe("second"))
    pm.run(module)
    seen = dict(Probe.seen)
    assert seen["first:own"] is None
    assert seen["second:own"] is None  # cleared when the first pipeline ended
    assert Counted.built == 1


def test_preserved_analysis_survives_to_the_next_pass(parse: Parse) -> None:
    Probe.seen.clear()
    module = parse("func.func @a() {\n  func.return\n}\n")
    pm = PassManager()
    fpm = pm.nest("func.func")
    fpm.add(Probe("one", compute=True, preserve=True))
    fpm.add(Probe("two", compute=True))
    fpm.add(Probe("three"))
    pm.run(module)
    seen = dict(Probe.seen)
    assert isinstance(seen["two:own"], Counted)
    assert seen["three:own"] is None  # "two" preserved nothing
    assert Counted.built == 1


def test_analysis_hooks_fire_on_a_miss_only(parse: Parse) -> None:
    events: list[tuple[str, str]] = []

    class Recorder(PassInstrumentation):
        def run_before_analysis(
            self, name: str, analysis: type, op: ir.Operation
        ) -> None:
            events.append(("before", name))

        def run_after_analysis(
            self, name: str, analysis: type, op: ir.Operation
        ) -> None:
            events.append(("after", name))

    class Twice(OperationPass):
        argument = "twice"

        def run_on_operation(self) -> None:
            self.get_analysis(Counted)
            self.get_analysis(Counted)

    pm = PassManager()
    pm.add_instrumentation(Recorder())
    pm.add(Twice())
    pm.run(parse(TEXT))
    assert events == [("before", "Counted"), ("after", "Counted")]
