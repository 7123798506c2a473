"""PipelineGraph scaling: scheduling and exporting graphs of 1,000 and 4,000 pipelines.

Builds a graph of `n` pipelines, each after the one before it and the one three
before it, with a loop back every 50 pipelines (a jump ten pipelines back), a
choice between two alternatives every 100 and a two-member subgraph with a loop
of its own every 100. Times `create_schedule()` and the two
exports, `to_dot()` and `to_json()`, and prints for each the ratio of the time
for the larger graph to the time for the smaller one, measured in the same run
(linear would be 4 for 1,000 -> 4,000; the target for export is at most 6).
Run:

    .venv/bin/python bench/graph_scaling.py [--sizes 1000,4000] [--repeat N]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

from passflow.graph import PipelineGraph, PipelineSchedule


def graph(size: int) -> PipelineGraph:
    """`size` pipelines in a chain with skip edges, loops, choices and subgraphs."""
    built = PipelineGraph(f"bench-{size}")
    previous = "p0"
    built.register_pipeline("p0")
    for i in range(1, size):
        name = f"p{i}"
        before = [previous] + ([f"p{i - 3}"] if i >= 3 and i % 3 == 0 else [])
        jumps = [f"p{i - 10}"] if i % 50 == 0 else []
        if i % 100 == 0:
            built.register_choice(
                name, [f"{name}-a", f"{name}-b"], before, select=lambda op: "x"
            )
            built.register_pipeline(f"{name}-a", populate="cse")
            built.register_pipeline(f"{name}-b")
        elif i % 100 == 50:
            built.register_subgraph(name, before, [], jumps, populate=_members)
        else:
            built.register_pipeline(name, before, [], jumps)
        previous = name
    return built


def _members(subgraph: PipelineGraph) -> None:
    subgraph.register_pipeline("first", populate="canonicalize")
    subgraph.register_pipeline("last", ["first"], [], ["first"])


def best(action: Callable[[], object], repeat: int) -> float:
    """Seconds per call, the best of `repeat` samples; each sample repeats the
    call for at least 0.1 s, so that calls of a few milliseconds are timed over
    many and the VM's noise averages out; the garbage collector is off meanwhile,
    as in `timeit`."""
    times: list[float] = []
    for _ in range(repeat):
        gc.collect()
        gc.disable()  # as timeit does: the collector's passes grow with the heap
        calls = 0
        start = time.perf_counter()
        try:
            while True:
                action()
                calls += 1
                elapsed = time.perf_counter() - start
                if elapsed >= 0.1:
                    break
        finally:
            gc.enable()
        times.append(elapsed / calls)
    return min(times)


def measure(size: int, repeat: int) -> dict[str, float]:
    built = graph(size)
    schedule: PipelineSchedule = built.create_schedule()
    return {
        "create_schedule": best(built.create_schedule, repeat),
        "to_dot": best(schedule.to_dot, repeat),
        "to_json": best(schedule.to_json, repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description="PipelineGraph scaling")
    parser.add_argument("--sizes", default="1000,4000")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    small, large = (int(s) for s in args.sizes.split(","))
    measure(100, 1)  # warm up: imports, the registry
    timed = {size: measure(size, args.repeat) for size in (small, large)}
    print(f"{'':>16} {small:>9,} s {large:>9,} s {'ratio':>7}")
    for what in timed[small]:
        a, b = timed[small][what], timed[large][what]
        print(f"{what:>16} {a:>11.3f} {b:>11.3f} {b / a:>7.2f}")
    export_small = timed[small]["to_dot"] + timed[small]["to_json"]
    export_large = timed[large]["to_dot"] + timed[large]["to_json"]
    print(
        f"{'export':>16} {export_small:>11.3f} {export_large:>11.3f} "
        f"{export_large / export_small:>7.2f}"
    )


if __name__ == "__main__":
    main()
