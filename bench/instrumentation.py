"""Instrumentation overhead on `builtin.module(func.func(canonicalize,cse))`.

Runs the same pipeline on fresh copies of one generated module (1,000 functions
of ~20 arith ops by default) with: nothing, an instrumentation that overrides no
hook, timing, statistics, and after-change IR printing to /dev/null. Configurations
alternate round by round and the median of each is compared with the bare run,
measured in the same process. Run:

    .venv/bin/python bench/instrumentation.py [--functions N] [--rounds N] [--cpu]

`--cpu` times each run in CPU time (`time.process_time`) instead of wall time:
the figure to quote on a shared machine, where other processes stretch wall
time but not this process's CPU time. `--instructions` counts, under
valgrind's callgrind, the machine instructions of one run of each
configuration instead (three runs minus one, in processes of their own): a
figure the load does not move, slow enough to want `--functions 200`.
"""

from __future__ import annotations

import argparse
import gc
import io
import os
import statistics
import sys
import time
from collections.abc import Callable

from passflow import PassInstrumentation, PassManager, ir
from passflow.instruments.ir_printing import IRPrinterConfig
from passflow.pipeline_text import parse_pass_pipeline

sys.path.insert(0, os.path.dirname(__file__))
import callgrind
from opt_vs_xdsl import function_text

PIPELINE = "builtin.module(func.func(canonicalize,cse))"


class Silent(PassInstrumentation):
    """Overrides no hook: the instrumentor must skip it entirely."""


def configure_none(pm: PassManager) -> None:
    del pm


def configure_silent(pm: PassManager) -> None:
    pm.add_instrumentation(Silent())


def configure_timing(pm: PassManager) -> None:
    pm.enable_timing(stream=io.StringIO())


def configure_statistics(pm: PassManager) -> None:
    pm.enable_statistics(stream=io.StringIO())


def configure_after_change(pm: PassManager) -> None:
    devnull = open(os.devnull, "w")  # noqa: SIM115  (lives as long as the benchmark)
    pm.enable_ir_printing(
        IRPrinterConfig(after_all=True, after_change=True, stream=devnull)
    )


CONFIGS: dict[str, Callable[[PassManager], None]] = {
    "bare": configure_none,
    "no-hook instrumentation": configure_silent,
    "timing": configure_timing,
    "statistics": configure_statistics,
    "after-change printing": configure_after_change,
}


def one_run(
    module: ir.ModuleOp,
    ctx: ir.Context,
    configure: Callable[[PassManager], None],
    pipeline: str = PIPELINE,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """`pipeline` on a fresh copy of `module`, configured by `configure`: the
    `clock` time of the run alone."""
    pm = PassManager(context=ctx)
    pm.assign(parse_pass_pipeline(pipeline))
    configure(pm)
    copy = ir.clone(module)
    gc.collect()
    start = clock()
    pm.run(copy)
    return clock() - start


def child(name: str, repeat: int, functions: int) -> None:
    """`repeat` runs of configuration `name` (the callgrind measurement)."""
    ctx = ir.default_context()
    module = ir.parse_module("".join(function_text(i) for i in range(functions)), ctx)
    gc.disable()
    for _ in range(repeat):
        one_run(module, ctx, CONFIGS[name])


def instructions(name: str, repeat: int, functions: int) -> int:
    command = [
        sys.executable,
        __file__,
        f"--child={name}",
        f"--repeat={repeat}",
        f"--functions={functions}",
    ]
    return callgrind.instructions(command, {**os.environ, "PYTHONHASHSEED": "0"})


def count(functions: int) -> None:
    per_run = {
        name: (instructions(name, 3, functions) - instructions(name, 1, functions)) / 2
        for name in ("bare", "timing", "statistics")
    }
    print(
        f"{functions} functions, {PIPELINE}, callgrind instructions per run "
        "(3 runs minus 1)"
    )
    bare = per_run["bare"]
    for name, value in per_run.items():
        print(f"{name:<25} {value / 1e6:9.1f} M  {100 * (value / bare - 1):+6.2f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--cpu", action="store_true", help="CPU time, not wall time")
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--child", choices=list(CONFIGS), help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.repeat, args.functions)
        return
    if args.instructions:
        count(args.functions)
        return
    clock = time.process_time if args.cpu else time.perf_counter

    ctx = ir.default_context()
    module = ir.parse_module(
        "".join(function_text(i) for i in range(args.functions)), ctx
    )
    one_run(module, ctx, configure_none)  # warm-up: imports, pattern tables
    samples: dict[str, list[float]] = {name: [] for name in CONFIGS}
    names = list(CONFIGS)
    gc.disable()
    for round_ in range(args.rounds):
        # Rotate the order so that no configuration always runs first or last.
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            samples[name].append(one_run(module, ctx, CONFIGS[name], clock=clock))
    gc.enable()
    bare_min = min(samples["bare"])
    bare_median = statistics.median(samples["bare"])
    kind = "CPU" if args.cpu else "wall"
    load = os.getloadavg()[0]
    print(
        f"{args.functions} functions, {PIPELINE}, {args.rounds} rounds, "
        f"{kind} time, load {load:.1f} ({os.cpu_count()} CPUs)"
    )
    print(f"{'':<25} {'min':>9}  {'vs bare':>7}  {'median':>9}  {'vs bare':>7}")
    for name, values in samples.items():
        low, median = min(values), statistics.median(values)
        print(
            f"{name:<25} {low * 1e3:7.1f}ms  {100 * (low / bare_min - 1):+6.1f}%"
            f"  {median * 1e3:7.1f}ms  {100 * (median / bare_median - 1):+6.1f}%"
        )


if __name__ == "__main__":
    main()
