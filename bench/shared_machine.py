"""passflow-opt on a shared machine: the default run against the serial one.

Whole `passflow-opt` processes on N generated functions (`opt_vs_xdsl`'s, about
20 arith ops each) with `func.func(canonicalize,cse)`, in four situations, the
default run (`--jobs` from the usable CPUs) and the serial one
(`--mlir-disable-threading`) measured side by side, alternating round by round
(median wall time and CPU time of the process tree):

  alone      one run at a time (on an idle 2-core machine the default should
             be >= 1.6x faster than serial);
  pairs      two runs started together, two default against two serial (the
             default pair should finish within 1.05x of the serial pair);
  loaded     one run beside `--hogs` busy processes (default: 4 per CPU), so
             the load is >= 4 per core (the default run should cost <= 1.05x
             the serial one, in time and CPU);
  make -jN   N runs per CPU under `make -jN` (N = CPUs), default against serial:
             the jobserver keeps the default runs from forking beyond N.

The machine's load average is printed beside each figure: other users of a
shared machine move wall times, so read the ratios. Run:

    .venv/bin/python bench/shared_machine.py [--functions N] [--rounds N] [--only NAME]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))
from opt_vs_xdsl import function_text

OPT = str(Path(sys.executable).with_name("passflow-opt"))
PIPELINE = "--pass-pipeline=builtin.module(func.func(canonicalize,cse))"
SERIAL = ["--mlir-disable-threading"]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    for name in ("PASSFLOW_SERVER", "MAKEFLAGS", "PASSFLOW_CACHE"):
        env.pop(name, None)
    return env


def run_together(commands: list[list[str]]) -> tuple[float, float]:
    """Start `commands` together; (wall until the last ends, CPU of all)."""
    cpu = _children_cpu()
    start = time.perf_counter()
    running = [
        subprocess.Popen(c, stdout=subprocess.DEVNULL, env=_environment())
        for c in commands
    ]
    for process in running:
        if process.wait() != 0:
            raise SystemExit(f"{process.args} failed")
    return time.perf_counter() - start, _children_cpu() - cpu


def compare(
    name: str,
    rounds: int,
    default: Callable[[], tuple[float, float]],
    serial: Callable[[], tuple[float, float]],
) -> None:
    walls: dict[str, list[float]] = {"default": [], "serial": []}
    cpus: dict[str, list[float]] = {"default": [], "serial": []}
    loads: list[float] = []
    for index in range(rounds):
        order = [("default", default), ("serial", serial)]
        if index % 2:
            order.reverse()
        for label, measure in order:
            loads.append(os.getloadavg()[0])
            wall, cpu = measure()
            walls[label].append(wall)
            cpus[label].append(cpu)
    d_wall, s_wall = (
        statistics.median(walls["default"]),
        statistics.median(walls["serial"]),
    )
    d_cpu, s_cpu = statistics.median(cpus["default"]), statistics.median(cpus["serial"])
    print(
        f"{name:<10} default {d_wall:6.2f} s wall {d_cpu:6.2f} s CPU | serial "
        f"{s_wall:6.2f} s wall {s_cpu:6.2f} s CPU | default/serial: wall "
        f"{d_wall / s_wall:.2f}x, CPU {d_cpu / s_cpu:.2f}x | speedup "
        f"{s_wall / d_wall:.2f}x | load {min(loads):.1f}-{max(loads):.1f}",
        flush=True,
    )


class Hogs:
    """`count` busy processes (a spinning interpreter each) while in use."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.processes: list[subprocess.Popen[bytes]] = []

    def __enter__(self) -> Hogs:
        self.processes = [
            subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(self.count)
        ]
        time.sleep(2.0)  # let the scheduler see them
        return self

    def __exit__(self, *exc: object) -> None:
        for process in self.processes:
            process.kill()
            process.wait()


def make_runs(
    directory: Path, jobs: int, runs: int, flags: list[str]
) -> tuple[float, float]:
    """`runs` passflow-opt runs under `make -j<jobs>`, recipes marked `+`."""
    makefile = directory / "Makefile"
    targets = [f"out{i}.mlir" for i in range(runs)]
    extra = " ".join(flags)
    makefile.write_text(
        f"all: {' '.join(targets)}\n"
        + "".join(
            f"{t}:\n\t+{OPT} '{PIPELINE}' {extra} in.mlir -o $@\n" for t in targets
        )
    )
    for target in targets:
        (directory / target).unlink(missing_ok=True)
    return run_together([["make", "-s", "-C", str(directory), f"-j{jobs}", "all"]])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hogs", type=int, default=None)
    parser.add_argument("--only", choices=("alone", "pairs", "loaded", "make"))
    args = parser.parse_args()
    cpus = len(os.sched_getaffinity(0))
    with tempfile.TemporaryDirectory() as work:
        directory = Path(work)
        source = directory / "in.mlir"
        source.write_text("".join(function_text(i) for i in range(args.functions)))
        one = [OPT, PIPELINE, str(source)]
        print(
            f"{args.functions} functions, func.func(canonicalize,cse), {cpus} CPUs, "
            f"median of {args.rounds} alternated rounds; uptime: "
            + subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
        )
        if args.only in (None, "alone"):
            compare(
                "alone",
                args.rounds,
                lambda: run_together([one]),
                lambda: run_together([one + SERIAL]),
            )
        if args.only in (None, "pairs"):
            compare(
                "pairs",
                args.rounds,
                lambda: run_together([one, one]),
                lambda: run_together([one + SERIAL, one + SERIAL]),
            )
        if args.only in (None, "loaded"):
            with Hogs(args.hogs if args.hogs is not None else 4 * cpus):
                compare(
                    "loaded",
                    args.rounds,
                    lambda: run_together([one]),
                    lambda: run_together([one + SERIAL]),
                )
        if args.only in (None, "make") and shutil.which("make"):
            runs = 2 * cpus
            compare(
                f"make -j{cpus}",
                max(1, args.rounds // 2),
                lambda: make_runs(directory, cpus, runs, []),
                lambda: make_runs(directory, cpus, runs, SERIAL),
            )


if __name__ == "__main__":
    main()
