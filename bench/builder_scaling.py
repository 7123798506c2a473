"""PipelineBuilder scaling: the cost of one add/insert as the pipeline grows.

Builds pipelines of 100 to 5,000 passes under four kind-wide rules
(FollowedByCleanup on EarlyOptimization, Requires(Bufferization) on
LateOptimization, BeforeFirst(Lowering) on HardwareOptimization, AfterLast
(Bufferization) on Lowering): a framework adds three quarters of the passes, in
phases, and extensions insert the rest before the first Lowering pass and after
the last Bufferization pass. Prints the microseconds per call and the ratio to a
bare loop that adds the same passes to an `OpPassManager`, measured in the same
process (`OpPassManager.add` copies its tuple of passes, so the bare loop grows
too). The target is 1,000 calls in under 0.5 s.

Then it times 1,000 and 5,000 insertions into a 100-pass framework pipeline, with
anchors on pass names (`insert_before(p, "bench-lower")`) and on kinds
(`insert_before(p, PassKind.LOWERING)`), with the garbage collector off as in
`timeit`, and prints each ratio 5,000 : 1,000 in the same run; linear would be 5
(the target: at most 7.5).

Last, the case several vendors stacking extensions make: every insertion anchors
on a *distinct* name, the argument of a pass an earlier insertion placed (picked
at random, fixed seed), inside a `func.func` nest, each pass of its own class;
then the same anchored on those classes (`insert_before(New(), Old)`, the
proposal's `addBeforePass<New, Old>`). It times 1,000, 5,000 and 10,000 such
insertions and prints the ratios (targets:
5,000 : 1,000 at most 6, and 10,000 in at most 1 s), beside the bare loop of the
same size measured in the same run, and a gauge of the machine's speed at that
moment (10**7 additions in a Python loop), to compare runs made under different
loads. It gives wall and CPU time: on a shared machine the wall time counts the
waits for a core, so the ratio is taken on CPU time. Run:

    .venv/bin/python bench/builder_scaling.py [--sizes 100,1000,5000] [--repeat N]
"""

from __future__ import annotations

import argparse
import gc
import random
import time
from collections.abc import Callable

from passflow import OperationPass
from passflow.builder import (
    AfterLast,
    BeforeFirst,
    FollowedByCleanup,
    PassKind,
    PipelineBuilder,
    Requires,
    cleanup,
)
from passflow.manager import OpPassManager
from passflow.pass_base import Pass


class _Stub(OperationPass):
    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


class Early(_Stub):
    argument = "bench-early"
    op_name = "func.func"
    kinds = (PassKind.EARLY_OPTIMIZATION,)


class Bufferize(_Stub):
    argument = "bench-bufferize"
    kinds = (PassKind.BUFFERIZATION,)


class Late(_Stub):
    argument = "bench-late"
    op_name = "func.func"
    kinds = (PassKind.LATE_OPTIMIZATION,)


class Hardware(_Stub):
    argument = "bench-hardware"
    kinds = (PassKind.HARDWARE_OPTIMIZATION,)


class Lower(_Stub):
    argument = "bench-lower"
    kinds = (PassKind.LOWERING,)


Call = Callable[[PipelineBuilder], None]


def calls(size: int) -> list[Call]:
    """`size` builder calls: framework adds in phases, then extension inserts."""
    quarter = max(size // 4, 1)
    steps: list[Call] = []
    functions: list[PipelineBuilder] = []

    def nest(builder: PipelineBuilder) -> None:
        functions.append(builder.nest("func.func"))

    steps.append(nest)
    for i in range(quarter - 2):
        if i % 8 == 7:
            steps.append(lambda b: functions[0].add(cleanup()))
        else:
            steps.append(lambda b: functions[0].add(Early()))
    steps.append(lambda b: functions[0].add(cleanup()))
    steps.append(lambda b: b.add(Bufferize()))
    steps.extend(lambda b: b.add(Late()) for _ in range(quarter))
    steps.extend(lambda b: b.add(Lower()) for _ in range(quarter))
    steps.extend(insertions(size - len(steps), by_name=False))
    return steps


def insertions(count: int, *, by_name: bool) -> list[Call]:
    """`count` extension calls, alternately before the first Lowering pass and
    after the last Bufferization pass, anchored on names or on kinds."""
    lower: str = "bench-lower" if by_name else PassKind.LOWERING
    bufferize: str = "bench-bufferize" if by_name else PassKind.BUFFERIZATION
    return [
        (lambda b: b.insert_before(Hardware(), lower))
        if i % 2
        else (lambda b: b.insert_after(Late(), bufferize))
        for i in range(count)
    ]


def rules(builder: PipelineBuilder) -> None:
    builder.require(PassKind.EARLY_OPTIMIZATION, FollowedByCleanup())
    builder.require(PassKind.LATE_OPTIMIZATION, Requires(PassKind.BUFFERIZATION))
    builder.require(PassKind.HARDWARE_OPTIMIZATION, BeforeFirst(PassKind.LOWERING))
    builder.require(PassKind.LOWERING, AfterLast(PassKind.BUFFERIZATION))


def time_builder(size: int) -> tuple[float, int]:
    steps = calls(size)
    builder = PipelineBuilder(framework="bench")
    rules(builder)
    gc.collect()
    start = time.perf_counter()
    for step in steps:
        step(builder)
    elapsed = time.perf_counter() - start
    passes = len(builder.build().passes)
    assert passes > 0
    return elapsed, len(steps)


def time_insertions(count: int, *, by_name: bool) -> float:
    """Seconds for `count` insertions into a 100-pass framework pipeline."""
    base = calls(100)[:75]  # the framework's adds, without its extensions
    builder = PipelineBuilder(framework="bench")
    rules(builder)
    for step in base:
        step(builder)
    steps = insertions(count, by_name=by_name)
    gc.collect()
    gc.disable()  # as timeit does: the collector's passes grow with the heap
    try:
        start = time.perf_counter()
        for step in steps:
            step(builder)
        return time.perf_counter() - start
    finally:
        gc.enable()


def vendor_classes(count: int) -> list[type[Pass]]:
    """`count` pass classes, `ext-0` ... : each vendor's pass is its own class;
    two in three run on `func.func`, the others on any op."""
    return [
        type(
            f"Vendor{i}",
            (_Stub,),
            {"argument": f"ext-{i}", "op_name": "func.func" if i % 3 else None},
        )
        for i in range(count)
    ]


def clocks() -> tuple[float, float]:
    """Wall time and this process's CPU time: on a shared machine the first
    counts the waits for a core, the second only the work."""
    return time.perf_counter(), time.process_time()


def since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = clocks()
    return wall - start[0], cpu - start[1]


def time_distinct(count: int, *, by_class: bool = False) -> tuple[float, float]:
    """Seconds for `count` insertions, each anchored on the argument (or the
    class) of a pass an earlier one inserted (the first on the framework's
    `bench-early`, inside the `func.func` nest), alternately after and before it:
    (wall, CPU)."""
    classes = vendor_classes(count)
    chooser = random.Random(count)
    builder = PipelineBuilder(framework="bench")
    rules(builder)
    for step in calls(100)[:75]:
        step(builder)
    placed: list[str | type[Pass]] = [Early if by_class else "bench-early"]
    plan: list[tuple[Pass, str | type[Pass], bool]] = []
    for i, cls in enumerate(classes):
        plan.append((cls(), placed[chooser.randrange(len(placed))], i % 2 == 0))
        placed.append(cls if by_class else f"ext-{i}")
    gc.collect()
    gc.disable()
    try:
        start = clocks()
        for pass_, anchor, after in plan:
            if after:
                builder.insert_after(pass_, anchor)
            else:
                builder.insert_before(pass_, anchor)
        return since(start)
    finally:
        gc.enable()


def time_python_loop() -> tuple[float, float]:
    """(wall, CPU) seconds for 10**7 additions in a Python loop: a gauge of how
    fast this machine runs Python right now, to compare runs made under
    different loads."""
    start = clocks()
    total = 0
    for i in range(10**7):
        total += i
    assert total > 0
    return since(start)


def time_bare(size: int) -> float:
    """The same number of passes added to a plain OpPassManager."""
    made: list[Pass] = [Lower() for _ in range(size)]
    pm = OpPassManager("builtin.module")
    gc.collect()
    start = time.perf_counter()
    for pass_ in made:
        pm.add(pass_)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description="PipelineBuilder scaling")
    parser.add_argument("--sizes", default="100,500,1000,2000,5000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    time_builder(100)  # warm up: imports, the kind table, the registry
    print(
        f"{'passes':>7} {'calls':>6} {'total s':>9} {'us/call':>9} "
        f"{'bare us':>8} {'ratio':>7}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        best, count = min(time_builder(size) for _ in range(args.repeat))
        bare = min(time_bare(size) for _ in range(args.repeat))
        per_call = best / count * 1e6
        bare_call = bare / size * 1e6
        print(
            f"{size:>7} {count:>6} {best:>9.3f} {per_call:>9.1f} {bare_call:>8.2f} "
            f"{per_call / bare_call:>7.0f}"
        )
    print()
    print(f"{'anchors':>8} {'1,000 s':>9} {'5,000 s':>9} {'us/call':>15} {'ratio':>6}")
    for by_name in (True, False):
        rounds = [  # in rounds, so a slow spell of the machine hits both sizes
            (
                time_insertions(1000, by_name=by_name),
                time_insertions(5000, by_name=by_name),
            )
            for _ in range(args.repeat)
        ]
        small = min(r[0] for r in rounds)
        large = min(r[1] for r in rounds)
        calls_us = f"{small / 1000 * 1e6:.1f} -> {large / 5000 * 1e6:.1f}"
        print(
            f"{'names' if by_name else 'kinds':>8} {small:>9.3f} {large:>9.3f} "
            f"{calls_us:>15} {large / small:>6.2f}"
        )

    print()
    print(
        f"{'distinct':>8} {'calls':>6} {'wall s':>8} {'cpu s':>7} {'cpu us/call':>12} "
        f"{'bare us':>8} {'cpu vs 1,000':>13}"
    )
    sizes = (1000, 5000, 10000)
    gauges = [time_python_loop()]
    bare = [min(time_bare(n) for _ in range(args.repeat)) for n in sizes]
    for by_class in (False, True):
        runs = [
            [time_distinct(n, by_class=by_class) for _ in range(args.repeat)]
            for n in sizes
        ]
        wall = [min(w for w, _ in timed) for timed in runs]
        cpu = [min(c for _, c in timed) for timed in runs]
        for i, size in enumerate(sizes):
            print(
                f"{'classes' if by_class else 'names':>8} {size:>6} {wall[i]:>8.3f} "
                f"{cpu[i]:>7.3f} {cpu[i] / size * 1e6:>12.1f} "
                f"{bare[i] / size * 1e6:>8.2f} {cpu[i] / cpu[0]:>13.2f}"
            )
    gauges.append(time_python_loop())
    print(
        "(gauge: 10**7 additions in a Python loop took "
        f"{min(w for w, _ in gauges):.2f} s wall, {min(c for _, c in gauges):.2f} s CPU)"
    )


if __name__ == "__main__":
    main()
