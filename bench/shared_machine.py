"""passflow-opt on a shared machine: the default run against the serial one.

Whole `passflow-opt` processes on N generated functions (`opt_vs_xdsl`'s, about
20 arith ops each) with `func.func(canonicalize,cse)`, in four situations, the
default run (`--jobs` from the usable CPUs) and the serial one
(`--mlir-disable-threading`) measured side by side, alternating round by round
(median wall time and CPU time of the process tree):

  alone      one run at a time (on an idle 2-core machine the default should
             be >= 1.6x faster than serial), after the machine's ceiling: how
             much faster two bare Python loops run than one (a VM's two vCPUs
             may give less than 2x, and no run can beat that);
  pairs      two runs started together, two default against two serial (the
             default pair should finish within 1.05x of the serial pair);
  loaded     one run beside `--hogs` busy processes (default: 4 per CPU), so
             the load is >= 4 per core (the default run should cost <= 1.05x
             the serial one, in time and CPU);
  make -jN   N runs per CPU under `make -jN` (N = CPUs), default against serial:
             the jobserver keeps the default runs from forking beyond N.

  phases     where a default run's time goes (`--only phases`): the sliced run
             in a fresh process, as passflow-opt makes it, with its
             `SlicedProfile` (scan, batches here and in workers, time waited,
             the parent's serial rest) and the CPU time of the parent and of
             its workers; on a busy machine it shows the run took no worker.

The machine's load average is printed beside each figure: other users of a
shared machine move wall times, so read the ratios (and the CPU times, which
move less). Run:

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
from parallel import JOBS, machine_ceiling

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


def phases(source: Path) -> None:
    """One default sliced run of `source` in this process (a fresh one: the
    caller starts it), its profile and CPU times printed."""
    from passflow import ir
    from passflow.all_passes import register_all_passes
    from passflow.executors.forking import ProcessExecutor
    from passflow.manager import Nesting
    from passflow.pass_manager import PassManager
    from passflow.pipeline_text import parse_pass_pipeline
    from passflow.sliced.run import run_sliced_on

    register_all_passes()
    text = source.read_text()
    executor = ProcessExecutor()  # as passflow-opt's default: no --jobs
    pm = PassManager("builtin.module", ir.default_context(), nesting=Nesting.IMPLICIT)
    pm.executor = executor
    pm.assign(parse_pass_pipeline(PIPELINE.partition("=")[2]))
    before = resource.getrusage(resource.RUSAGE_SELF)
    outcome = run_sliced_on(executor, text, source.name, pm)
    after = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    parent_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    worker_cpu = workers.ru_utime + workers.ru_stime
    profile = getattr(outcome, "profile", None)
    if profile is None:
        print(f"phases     no sliced run: {outcome}")
        return
    print(
        f"phases     wall {profile.wall:.2f} s: scan {profile.scan:.3f}, batches "
        f"here {profile.here:.2f} ({profile.in_parent}/{profile.batches}), waited "
        f"{profile.waited:.2f}, parent only {profile.parent_only:.2f} | "
        f"{profile.workers} worker(s) | CPU parent {parent_cpu:.2f} s, workers "
        f"{worker_cpu:.2f} s | load {os.getloadavg()[0]:.1f}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--hogs", type=int, default=None)
    parser.add_argument(
        "--only", choices=("alone", "pairs", "loaded", "make", "phases")
    )
    parser.add_argument("--phases-of", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phases_of is not None:
        phases(args.phases_of)
        return
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
            print(
                f"ceiling    {JOBS} processes of a bare Python loop run "
                f"{machine_ceiling(3):.2f}x as fast as one (the bound for the "
                f"alone speedup) | load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
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
        if args.only in (None, "phases"):
            for _ in range(max(1, args.rounds // 2)):
                subprocess.run(
                    [sys.executable, __file__, "--phases-of", str(source)],
                    check=True,
                    env=_environment(),
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
