"""The IR history's cost: recording, file size, and a query.

One generated module (1,000 functions of ~20 arith ops by default, each
calling a private helper that the inliner inlines and symbol-dce erases) runs
`inline,func.func(canonicalize,cse,loop-invariant-code-motion),symbol-dce` —
five passes — on fresh copies, in one process, alternating round by round:
bare, with `enable_ir_history` (the history written to a temporary file), and
with `enable_report` (the HTML run report) as the peer, each by the CPU time
of the process (which a loaded machine disturbs less than wall time). Then the
history file's size against the input's, the time of `passflow-history FILE
@f500` (the middle function; whole process) and of the same query in
process, and the report's first paint in Chromium.

Then what a user times: whole `passflow-opt` processes on the module written
to a file, in the default mode (no `--jobs` or `--executor`), with and without
`--ir-history`, in turn, each by its wall time and by the CPU time of the
process and of the workers it forked. Run:

    .venv/bin/python bench/ir_history.py [--functions N] [--rounds N]
        [--skip-in-process] [--skip-whole]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

from passflow import HistoryFile, PassManager, ir, register_all_passes

sys.path.insert(0, os.path.dirname(__file__))
import instrumentation
from opt_vs_xdsl import function_text

PIPELINE = (
    "builtin.module(inline,func.func(canonicalize,cse,loop-invariant-code-motion),"
    "symbol-dce)"
)


def module_text(functions: int) -> str:
    """`functions` functions, each calling its own private helper."""
    parts: list[str] = []
    for index in range(functions):
        parts.append(
            f"func.func private @h{index}(%v: i32) -> i32 {{\n"
            f"  %c = arith.constant {index} : i32\n"
            "  %r = arith.addi %v, %c : i32\n"
            "  func.return %r : i32\n}\n"
        )
        body = function_text(index).replace(
            "  func.return %j : i32",
            f"  %call = func.call @h{index}(%j) : (i32) -> i32\n"
            "  func.return %call : i32",
        )
        parts.append(body)
    return "".join(parts)


def one_run(
    module: ir.ModuleOp, ctx: ir.Context, configure: Callable[[PassManager], None]
) -> float:
    """The CPU time of the five passes on a fresh copy of `module`."""
    return instrumentation.one_run(module, ctx, configure, PIPELINE, time.process_time)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--write-input",
        metavar="FILE",
        help="write the benchmark's module to FILE and stop (docs/report.md runs it)",
    )
    parser.add_argument(
        "--skip-in-process", action="store_true", help="only the whole processes"
    )
    parser.add_argument(
        "--skip-whole", action="store_true", help="only the in-process runs"
    )
    args = parser.parse_args()
    text = module_text(args.functions)
    if args.write_input is not None:
        with open(args.write_input, "w") as out:
            out.write(text)
        return
    print(f"{args.functions} functions, {PIPELINE}, {args.rounds} rounds")
    if not args.skip_in_process:
        in_process(text, args.functions, args.rounds)
    if not args.skip_whole:
        whole_processes(text, args.rounds)


def whole_processes(text: str, rounds: int) -> None:
    """`passflow-opt` with and without `--ir-history`, as whole processes in
    turn: medians of wall and CPU time (the process and its workers)."""
    workdir = tempfile.mkdtemp(prefix="passflow-history-bench-")
    source = os.path.join(workdir, "input.mlir")
    with open(source, "w") as out:
        out.write(text)
    base = [sys.executable, "-m", "passflow.tools.opt", source, "-p", PIPELINE]
    base += ["-o", os.devnull]
    history = os.path.join(workdir, "history.db")
    commands = {"bare": base, "ir history": [*base, f"--ir-history={history}"]}
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    names = list(commands)
    for round_ in range(rounds):
        for name in names[round_ % 2 :] + names[: round_ % 2]:
            samples[name].append(timed(commands[name]))
    load = os.getloadavg()[0]
    print(f"whole passflow-opt processes, default mode, load {load:.1f}:")
    bare_wall = statistics.median(wall for wall, _ in samples["bare"])
    bare_cpu = statistics.median(cpu for _, cpu in samples["bare"])
    for name, values in samples.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        print(
            f"{name:<20} median {wall:7.3f} s wall {wall / bare_wall:5.2f}x bare, "
            f"{cpu:7.3f} s CPU {cpu / bare_cpu:5.2f}x bare"
        )


def timed(command: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds (user and system, of the process and of the
    workers it waited for) of one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu


def in_process(text: str, functions: int, rounds: int) -> None:
    """The five passes in this process (the CPU time of `PassManager.run`):
    bare, with the history, with the report (the peer); then the history
    file's size, a query, and the report's first paint."""
    register_all_passes()
    ctx = ir.default_context()
    module = ir.parse_module(text, ctx)
    workdir = tempfile.mkdtemp(prefix="passflow-history-bench-")
    history_path = os.path.join(workdir, "history.db")
    configs: dict[str, Callable[[PassManager], None]] = {
        "bare": lambda pm: None,
        "ir history": lambda pm: pm.enable_ir_history(history_path) and None,
        "run report (peer)": lambda pm: (
            pm.enable_report(os.path.join(workdir, "report.html")) and None
        ),
    }
    one_run(module, ctx, configs["bare"])  # warm-up: imports, pattern tables
    samples: dict[str, list[float]] = {name: [] for name in configs}
    names = list(configs)
    for round_ in range(rounds):
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            samples[name].append(one_run(module, ctx, configs[name]))
    bare = statistics.median(samples["bare"])
    load = os.getloadavg()[0]
    print(f"in process (CPU of PassManager.run), load {load:.1f}:")
    for name, values in samples.items():
        median = statistics.median(values)
        print(f"{name:<20} median {median:7.3f} s CPU  {median / bare:5.2f}x bare")
    size = os.path.getsize(history_path)
    print(
        f"history file {size / 1e6:.2f} MB, input {len(text) / 1e6:.2f} MB: "
        f"{size / len(text):.2f}x the input"
    )
    start = time.perf_counter()
    history = HistoryFile(history_path)
    middle = f"@f{functions // 2}"
    changes = history.changes(middle)
    diffs = [change.diff() for change in changes]
    here = time.perf_counter() - start
    history.close()
    query = [sys.executable, "-m", "passflow.tools.history", history_path, middle]
    walls: list[float] = []
    cpus: list[float] = []
    for _ in range(5):
        wall, cpu = timed(query)
        walls.append(wall)
        cpus.append(cpu)
    report = os.path.join(workdir, "report.html")
    if os.path.exists("/usr/bin/chromium"):
        print(
            f"report {os.path.getsize(report) / 1e6:.2f} MB: first paint in "
            f"Chromium {first_paint(report):.2f} s (median of 3)"
        )
    print(
        f"query {middle}: {len(changes)} changes, {sum(len(d) for d in diffs)} "
        f"characters of diff; in process {here * 1e3:.1f} ms, "
        f"passflow-history (whole process, median of 5) "
        f"{statistics.median(walls) * 1e3:.0f} ms wall, "
        f"{statistics.median(cpus) * 1e3:.0f} ms CPU"
    )


def first_paint(report: str) -> float:
    """Seconds to the report's first contentful paint in the system's
    Chromium (Playwright, headless), median of three loads."""
    from playwright.sync_api import sync_playwright

    paints: list[float] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox"]
        )
        for _ in range(3):
            page = browser.new_page()
            page.goto("file://" + report)
            page.wait_for_load_state("load")
            paint = page.evaluate(
                "() => performance.getEntriesByName('first-contentful-paint')"
                ".map(e => e.startTime)[0] || -1"
            )
            paints.append(float(paint) / 1e3)
            page.close()
        browser.close()
    return statistics.median(paints)


if __name__ == "__main__":
    main()
