"""Parallel runs, end to end and pipeline only: serial vs processes vs Dask.

End to end (the default): whole `passflow-opt` runs, from reading the file to
writing the printed output, on N generated functions (about 20 arith ops each)
for two pipelines:

  (a) builtin.module(func.func(canonicalize,cse))                  cheap passes
  (b) builtin.module(func.func(test-busy-work,canonicalize))       CPU-heavy: a
      fixed amount of pure-Python work per op, then a rewrite

each serially (`--mlir-disable-threading`), sliced on forked processes
(`--jobs 2`, the default executor) and sliced on a local Dask cluster of 2
worker processes (`--executor=dask --scheduler=...`, started once, warmed up),
every run in a fresh interpreter, in rounds that run each of them once (the
best of each over the rounds), output checked against the serial run. It
prints the time of `passflow-opt`'s `main` (parse to printed output) and of the
whole process (interpreter start-up included), the speedup over serial in the
same measurement, the parent's peak memory, and fits a model of the sliced run
from its profile: a serial part (the parent's scan, forking, collecting and
stitching, and everything outside the sliced run) plus the batches' work
spread over the cores, checked against the 2-core point and projected to 4,
16 and 64 cores. Last, serial passflow-opt against `xdsl-opt -p
canonicalize,cse` on the same input (whole processes, alternating).

Pipeline only (`--pipeline-only`): `PassManager.run` on an already-parsed
module with each executor (serial, threads, processes, Dask), its parent's
serial fraction and a model of the process executor (see `Model`), then a
section on small inputs. Run:

    .venv/bin/python bench/parallel.py [--quick] [--sizes 1000 5000] [--repeat 3] [--no-dask]
    .venv/bin/python bench/parallel.py --pipeline-only [--quick] [--no-threads]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context

from passflow import PassManager, ir
from passflow.execution import ChildExecutor
from passflow.executors import ExecutorProfile, ThreadExecutor
from passflow.executors.forking import ProcessExecutor
from passflow.executors.transfer import Decoder, Encoder
from passflow.pipeline_text import parse_pass_pipeline

JOBS = 2


def make_input(functions: int, seed: int = 0) -> str:
    """`functions` functions of 20 arith ops with constants and redundancy."""
    rnd = random.Random(seed)
    out: list[str] = []
    for i in range(functions):
        lines = [f"func.func @f{i}(%a: i32, %b: i32) -> i32 {{"]
        lines.append(f"  %c = arith.constant {i % 7} : i32")
        values = ["%a", "%b", "%c"]
        for k in range(18):
            op = rnd.choice(["addi", "muli", "subi", "andi", "ori", "xori"])
            lhs, rhs = rnd.choice(values), rnd.choice(values)
            lines.append(f"  %v{k} = arith.{op} {lhs}, {rhs} : i32")
            values.append(f"%v{k}")
        lines.append(f"  func.return {values[-1]} : i32")
        lines.append("}")
        out.append("\n".join(lines))
    return "\n".join(out) + "\n"


class ModuleFactory:
    """Fresh copies of one parsed module (parsing 5,000 functions takes a minute;
    decoding a snapshot takes seconds and gives the same IR and locations)."""

    def __init__(self, text: str, context: ir.Context) -> None:
        self.context = context
        self.module = ir.parse_module(text, context, "bench.mlir")
        self.shared: list[object] = []
        encoder = Encoder(self.shared, grow_shared=True)
        self.snapshot = encoder.dumps(
            (encoder.header(self.module), encoder.regions(self.module))
        )

    def fresh(self) -> ir.ModuleOp:
        decoder = Decoder(self.context, self.shared)
        header, regions = decoder.loads(self.snapshot)  # type: ignore[misc]
        copy = ir.ModuleOp([])
        decoder.splice(copy, header, regions)  # type: ignore[arg-type]
        return copy


@dataclass
class Point:
    executor: str
    seconds: float
    profile: ExecutorProfile | None


PIPELINES: dict[str, str] = {
    "a": "builtin.module(func.func(canonicalize,cse))",
    "b": "builtin.module(func.func(test-busy-work,canonicalize))",
}


def build(
    pipeline: str, context: ir.Context, executor: ChildExecutor | None
) -> PassManager:
    pm = PassManager("builtin.module", context, executor=executor)
    pm.assign(parse_pass_pipeline(pipeline))
    return pm


def measure(
    factory: ModuleFactory,
    pipeline: str,
    name: str,
    make: Callable[[], ChildExecutor | None],
    repeat: int,
    reference: str | None,
) -> Point:
    """Best-of-`repeat` wall time of `pm.run`; checks the output against serial."""
    executor = make()
    best = float("inf")
    best_profile: ExecutorProfile | None = None
    try:
        for _ in range(repeat):
            module = factory.fresh()
            pm = build(pipeline, factory.context, executor)
            profile = getattr(executor, "profile", None)
            before = ExecutorProfile()
            if isinstance(profile, ExecutorProfile):
                before.add(profile)
            gc.collect()
            start = time.perf_counter()
            pm.run(module)
            seconds = time.perf_counter() - start
            if reference is not None and ir.print_op(module) != reference:
                raise SystemExit(f"{name}: output differs from the serial run")
            if seconds < best:
                best = seconds
                if isinstance(profile, ExecutorProfile):
                    best_profile = _delta(profile, before)
    finally:
        if executor is not None:
            executor.close()
    return Point(name, best, best_profile)


def _delta(after: ExecutorProfile, before: ExecutorProfile) -> ExecutorProfile:
    return ExecutorProfile(
        **{
            f.name: getattr(after, f.name) - getattr(before, f.name)
            for f in dataclasses.fields(ExecutorProfile)
        }
    )


def executors(
    with_dask: bool, with_threads: bool
) -> list[tuple[str, Callable[[], ChildExecutor | None]]]:
    found: list[tuple[str, Callable[[], ChildExecutor | None]]] = [
        ("serial", lambda: None)
    ]
    if with_threads:
        found.append(("thread", lambda: ThreadExecutor(JOBS)))
    found.append(("process", lambda: ProcessExecutor(JOBS)))
    if with_dask:
        found.append(("dask-local", _dask))
    return found


def _dask() -> ChildExecutor:
    from passflow.executors.dask import DaskExecutor

    return DaskExecutor(None, jobs=JOBS)  # 2 local worker processes


def report(size: int, label: str, points: list[Point]) -> None:
    serial = points[0].seconds
    print(f"\n({label}) {PIPELINES[label]}  --  {size} functions, {JOBS} jobs")
    print(
        f"  {'executor':<11} {'wall s':>8} {'speedup':>8} {'serial frac':>12} {'shipped':>8}"
    )
    for point in points:
        profile = point.profile
        frac = (
            f"{(profile.parent_busy + point.seconds - profile.wall) / point.seconds:.3f}"
            if profile and profile.wall
            else "-"
        )
        shipped = str(profile.shipped) if profile else "-"
        print(
            f"  {point.executor:<11} {point.seconds:8.3f} {serial / point.seconds:7.2f}x"
            f" {frac:>12} {shipped:>8}"
        )
    process = next((p for p in points if p.executor == "process"), None)
    if process is None or process.profile is None:
        return
    model = Model.fit(process.profile, process.seconds)
    print(
        f"  model: {model.children} children past the head start, {model.in_parent}"
        f" run by the parent; per child {model.here * 1e3:.2f} ms in the parent,"
        f" {model.there * 1e3:.2f} ms in a worker (run + encode),"
        f" {model.splice * 1e3:.2f} ms of parent time to splice a worker's result;"
        f" {model.outside:.3f} s serial outside the forked part"
    )
    predicted = model.time(JOBS)
    print(
        f"  T({JOBS}) predicted {predicted:.3f} s, measured {process.seconds:.3f} s"
        f" ({(predicted - process.seconds) / process.seconds:+.0%})"
    )
    for cores in (2, 4, 8, 16):
        print(
            f"    {cores:>2} cores: projected speedup over serial "
            f"{serial / model.time(cores):5.2f}x"
            f"  (bound with the parent only splicing: {serial / model.bound():5.1f}x)"
        )


@dataclass
class Model:
    """Where a forked run's time goes, per child, to project other core counts.

    With `c` jobs the parent runs `k` children itself (`here` each) and splices
    the other `N - k` (`splice` each) while `c - 1` workers run those (`there`
    each, encoding included). The executor balances the two, so
    T(c) = outside + the parent's time at the `k` where it equals the workers'.
    """

    children: int
    in_parent: int
    here: float
    there: float
    splice: float
    outside: float

    @staticmethod
    def fit(profile: ExecutorProfile, seconds: float) -> Model:
        shipped_to = max(profile.children - profile.in_parent, 1)
        there = profile.worker_busy / shipped_to
        here = profile.parent_work / profile.in_parent if profile.in_parent else there
        return Model(
            profile.children,
            profile.in_parent,
            here,
            there,
            profile.parent_busy / shipped_to,
            seconds - profile.wall,
        )

    def time(self, cores: int) -> float:
        n, workers = self.children, cores - 1
        per_worker = self.there / workers
        k = n * (per_worker - self.splice) / (self.here - self.splice + per_worker)
        k = min(max(k, 0.0), float(n))
        parent = k * self.here + (n - k) * self.splice
        return self.outside + max(parent, (n - k) * per_worker)

    def bound(self) -> float:
        return self.outside + self.children * self.splice


def small_inputs(context: ir.Context, repeat: int) -> None:
    """Where forking starts to pay: serial vs process (no threshold) on few children."""
    print("\nsmall inputs, pipeline (a): serial vs process (fork at once / default)")
    print(
        f"  {'functions':>9} {'serial ms':>10} {'fork ms':>8} {'speedup':>8}"
        f" {'default ms':>11} {'speedup':>8}"
    )
    for count in (2, 8, 32, 64, 128, 256):
        factory = ModuleFactory(make_input(count, seed=count), context)
        serial = measure(factory, PIPELINES["a"], "serial", lambda: None, repeat, None)
        forked = measure(
            factory,
            PIPELINES["a"],
            "process",
            lambda: ProcessExecutor(JOBS, serial_budget=0),
            repeat,
            None,
        )
        default = measure(
            factory,
            PIPELINES["a"],
            "process",
            lambda: ProcessExecutor(JOBS),
            repeat,
            None,
        )
        print(
            f"  {count:>9} {serial.seconds * 1e3:10.1f} {forked.seconds * 1e3:8.1f}"
            f" {serial.seconds / forked.seconds:7.2f}x {default.seconds * 1e3:11.1f}"
            f" {serial.seconds / default.seconds:7.2f}x"
        )


# --- end to end -------------------------------------------------------------

# Runs passflow-opt's `main` in a fresh interpreter: its time, the process's
# own peak memory and the sliced run's profile, as one JSON line on stderr.
RUNNER = """
import json, resource, sys, time
from passflow.tools import chunk, opt
profile = {}
sliced = chunk.run_sliced_on
def recording(*args, **kwargs):
    outcome = sliced(*args, **kwargs)
    found = getattr(outcome, "profile", None)
    if found is not None:
        profile.update(vars(found), parent_only=found.parent_only)
    else:
        profile["fallback"] = getattr(outcome, "reason", "?")
    return outcome
chunk.run_sliced_on = recording
start = time.perf_counter()
status = opt.main(sys.argv[1:])
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"status": status, "seconds": seconds, "peak_mb": peak, **profile}),
      file=sys.stderr)
"""


@dataclass
class Run:
    """The best of a command's runs: `main`'s time, the whole process's, the
    parent's peak memory, the sliced run's profile (empty when not sliced)."""

    name: str
    seconds: float
    process_seconds: float
    peak_mb: float
    profile: dict[str, float]
    output: str


def run_opt(name: str, argv: list[str], output: str) -> Run:
    """One passflow-opt run in a fresh interpreter."""
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, *argv, "-o", output],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    report = json.loads(done.stderr.strip().splitlines()[-1])
    if report["status"] != 0:
        raise SystemExit(f"{name}: passflow-opt failed:\n{done.stderr}")
    if "fallback" in report:
        raise SystemExit(f"{name}: the run was not sliced: {report['fallback']}")
    with open(output) as stream:
        text = stream.read()
    return Run(
        name,
        report["seconds"],
        wall,
        report["peak_mb"],
        {k: v for k, v in report.items() if isinstance(v, float | int)},
        text,
    )


def best_of_rounds(
    commands: list[tuple[str, list[str]]], output: str, repeat: int
) -> list[Run]:
    """The best run of each command over `repeat` rounds, each round running
    every command once: this VM's slow and fast spells (minutes long) fall on
    all the commands alike, not on whichever ran during them."""
    best: dict[str, Run] = {}
    for _ in range(repeat):
        for name, argv in commands:
            run = run_opt(name, argv, output)
            if name not in best or run.seconds < best[name].seconds:
                best[name] = run
    return [best[name] for name, _ in commands]


@dataclass
class SlicedModel:
    """A sliced run's time on `c` cores: `serial` seconds only the parent can
    spend (outside the sliced run, and inside it neither running batches nor
    waiting: scan, fork, collect, stitch) plus the batches' `work` shared by
    `c` processes. `work` is measured with two processes on this machine's
    two vCPUs, so it includes their slowing each other down."""

    serial: float
    work: float

    @staticmethod
    def fit(run: Run) -> SlicedModel:
        profile = run.profile
        outside = run.seconds - profile["wall"]
        return SlicedModel(outside + profile["parent_only"], profile["batch_seconds"])

    def time(self, cores: int) -> float:
        return self.serial + self.work / cores


def _spin(_: int) -> float:
    """A bare loop of pure-Python work; its time."""
    start = time.perf_counter()
    total = 0
    for i in range(5_000_000):
        total = (total * 31 + i) % 1_000_003
    return time.perf_counter() - start


def machine_ceiling(repeat: int) -> float:
    """How much faster `JOBS` processes of a bare loop get through `JOBS` loops
    than one process does (fastest of `repeat` each): what this machine's
    cores give pure Python when all are busy, a bound for any parallel run."""
    one = min(_spin(0) for _ in range(repeat))
    both = float("inf")
    with ProcessPoolExecutor(JOBS, mp_context=get_context("fork")) as pool:
        pool.submit(int).result()
        for _ in range(repeat):
            start = time.perf_counter()
            list(pool.map(_spin, range(JOBS)))
            both = min(both, time.perf_counter() - start)
    return one * JOBS / both


def end_to_end(sizes: list[int], repeat: int, with_dask: bool) -> None:
    print(
        f"end to end: passflow-opt main() in a fresh interpreter, best of {repeat} rounds, each running every command once"
    )
    print(
        f"machine ceiling: {JOBS} processes of a bare Python loop run"
        f" {machine_ceiling(repeat):.2f}x as fast as one (the bound for any run here)"
    )
    cluster: tuple[object, object] | None = _start_dask() if with_dask else None
    try:
        with tempfile.TemporaryDirectory() as directory:
            for size in sizes:
                source = os.path.join(directory, f"input_{size}.mlir")
                with open(source, "w") as stream:
                    stream.write(make_input(size))
                for label, pipeline in PIPELINES.items():
                    _end_to_end_case(
                        directory, source, size, label, pipeline, repeat, cluster
                    )
            if 1000 in sizes or not sizes:
                _versus_xdsl(directory, repeat)
    finally:
        if cluster is not None:
            for part in cluster:
                part.close()  # type: ignore[attr-defined]


def _end_to_end_case(
    directory: str,
    source: str,
    size: int,
    label: str,
    pipeline: str,
    repeat: int,
    cluster: tuple[object, object] | None,
) -> None:
    output = os.path.join(directory, "out.mlir")
    argv = [source, f"--pass-pipeline={pipeline}"]
    commands = [
        ("serial", [*argv, "--mlir-disable-threading"]),
        ("process", [*argv, f"--jobs={JOBS}"]),
    ]
    if cluster is not None:
        address = str(getattr(cluster[1], "scheduler_address", ""))
        dask = [*argv, "--executor=dask", f"--scheduler={address}"]
        run_opt("dask-local", dask, output)  # the workers import passflow
        commands.append(("dask-local", dask))
    runs = best_of_rounds(commands, output, repeat)
    serial = runs[0]
    for run in runs[1:]:
        if run.output != serial.output:
            raise SystemExit(f"{run.name}: output differs from the serial run")
    print(f"\n({label}) {pipeline}  --  {size} functions, {JOBS} jobs")
    print(
        f"  {'run':<11} {'main s':>7} {'speedup':>8} {'process s':>10} {'speedup':>8}"
        f" {'parent MB':>10} {'serial part s':>14}"
    )
    for run in runs:
        model = SlicedModel.fit(run) if "batch_seconds" in run.profile else None
        part = (
            f"{model.serial:.3f}"
            if model is not None and run.name == "process"
            else "-"
        )
        print(
            f"  {run.name:<11} {run.seconds:7.3f} {serial.seconds / run.seconds:7.2f}x"
            f" {run.process_seconds:10.3f}"
            f" {serial.process_seconds / run.process_seconds:7.2f}x"
            f" {run.peak_mb:10.1f} {part:>14}"
        )
    process = runs[1]
    model = SlicedModel.fit(process)
    predicted = model.time(JOBS)
    print(
        f"  model: {model.serial:.3f} s serial (the parent's), {model.work:.3f} s of"
        f" batches; T({JOBS}) predicted {predicted:.3f} s, measured"
        f" {process.seconds:.3f} s ({(predicted - process.seconds) / process.seconds:+.0%})"
    )
    print(
        "    projected speedup over serial: "
        + ", ".join(
            f"{cores} cores {serial.seconds / model.time(cores):.2f}x"
            for cores in (4, 16, 64)
        )
        + f" (bound {serial.seconds / model.serial:.1f}x)"
    )


def _versus_xdsl(directory: str, repeat: int) -> None:
    """Serial passflow-opt against xdsl-opt, whole processes, alternating."""
    source = os.path.join(directory, "input_1000.mlir")
    output = os.path.join(directory, "out.mlir")
    binaries = os.path.dirname(sys.executable)
    commands = {
        "passflow-opt": [
            os.path.join(binaries, "passflow-opt"),
            source,
            "--pass-pipeline=builtin.module(func.func(canonicalize,cse))",
            "--mlir-disable-threading",
        ],
        "xdsl-opt": [
            os.path.join(binaries, "xdsl-opt"),
            source,
            "-p",
            "canonicalize,cse",
        ],
    }
    best = dict.fromkeys(commands, float("inf"))
    for _ in range(repeat):
        for name, command in commands.items():
            start = time.perf_counter()
            subprocess.run([*command, "-o", output], check=True)
            best[name] = min(best[name], time.perf_counter() - start)
    print(
        f"\nserial, end to end, 1,000 functions, (a): passflow-opt {best['passflow-opt']:.3f} s,"
        f" xdsl-opt -p canonicalize,cse {best['xdsl-opt']:.3f} s"
        f" ({best['passflow-opt'] / best['xdsl-opt']:.2f}x)"
    )


def _start_dask() -> tuple[object, object]:
    """A local cluster set up as docs/parallel.md advises: one thread per
    worker process, the workers' statistical profiler off."""
    from dask import config as dask_config
    from distributed import Client, LocalCluster

    with dask_config.set({"distributed.worker.profile.enabled": False}):
        cluster = LocalCluster(
            n_workers=JOBS,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,  # pyright: ignore[reportArgumentType]
        )
    return Client(cluster), cluster


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="200 and 1000 functions, one run each"
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--repeat", type=int, default=None, help="best of N runs")
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask executor")
    parser.add_argument(
        "--no-threads", action="store_true", help="skip the thread executor"
    )
    parser.add_argument(
        "--pipeline-only",
        action="store_true",
        help="PassManager.run on a parsed module, every executor (the old bench)",
    )
    args = parser.parse_args(argv)
    sizes: list[int] = args.sizes or ([200, 1000] if args.quick else [1000, 5000])
    repeat: int = args.repeat or (1 if args.quick else 3)
    with_dask = not args.no_dask
    if with_dask:
        try:
            importlib.import_module("distributed")
        except ImportError:
            print("(dask.distributed not installed: skipping the Dask executor)")
            with_dask = False
    if not args.pipeline_only:
        end_to_end(sizes, repeat, with_dask)
        return 0
    context = ir.default_context()
    ir.preload_dialects(context)  # every executor pays the same dialect loading
    print(f"python {sys.version.split()[0]}, {JOBS} jobs, best of {repeat}")
    for size in sizes:
        factory = ModuleFactory(make_input(size), context)
        for label, pipeline in PIPELINES.items():
            points: list[Point] = []
            reference: str | None = None
            for name, make in executors(with_dask, not args.no_threads):
                point = measure(factory, pipeline, name, make, repeat, reference)
                if reference is None:
                    module = factory.fresh()
                    build(pipeline, context, None).run(module)
                    reference = ir.print_op(module)
                points.append(point)
            report(size, label, points)
    small_inputs(context, max(repeat, 3))
    return 0


if __name__ == "__main__":
    sys.exit(main())
