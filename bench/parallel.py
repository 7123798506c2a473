"""Parallel nested pipelines: serial vs threads vs forked processes vs Dask.

Two pipelines over N generated functions (about 20 arith ops each):

  (a) builtin.module(func.func(canonicalize,cse))       cheap passes
  (b) builtin.module(func.func(bench-busy,canonicalize)) CPU-heavy: a fixed amount
      of pure-Python work per op, then a rewrite so every function travels back

For each executor (2 jobs) it prints the pipeline's wall time, the speedup over
serial measured in the same run, and for the out-of-process executors the
parent's serial fraction: the share of the pipeline's wall time the parent spent
on work no other process can take over (forking, splicing results back, and
everything outside the parallel part), i.e. neither waiting nor running
children. It then fits a model of the process executor from the run's profile
(per child: seconds in the parent, in a worker, and to splice a worker's result
back), checks its 2-job prediction against the measured point and projects 4,
8 and 16 cores, with the bound no core count can beat (the parent only
splicing). See `Model`.
Targets on a 2-core machine: >= 1.6x on (b), >= 1.2x on (a).

A section on small inputs shows where forking starts to pay, and that the
process executor's default serial budget keeps small inputs at serial speed. Run:

    .venv/bin/python bench/parallel.py [--quick] [--sizes 1000 5000] [--no-dask]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import importlib
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from passflow import OperationPass, PassManager, ir
from passflow.execution import ChildExecutor
from passflow.executors import ExecutorProfile, ThreadExecutor
from passflow.executors.forking import ProcessExecutor
from passflow.executors.transfer import Decoder, Encoder
from passflow.pipeline_text import parse_pass_pipeline

JOBS = 2
BUSY_ROUNDS = 1500  # iterations of the busy loop per op: about 10 ms per function


class BusyWork(OperationPass):
    """Fixed pure-Python work per op (a stand-in for an expensive analysis)."""

    argument = "bench-busy"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        total = 0
        for op in self.get_operation().walk():
            seed = len(op.name)
            for i in range(BUSY_ROUNDS):
                total = (total * 31 + seed + i) % 1_000_003
        self.mark_all_analyses_preserved()
        if total < 0:  # never: keeps the loop from looking dead
            self.signal_pass_failure()


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
    "b": "builtin.module(func.func(bench-busy,canonicalize))",
}


def build(
    pipeline: str, context: ir.Context, executor: ChildExecutor | None
) -> PassManager:
    pm = PassManager("builtin.module", context, executor=executor)
    if "bench-busy" in pipeline:
        pm.nest("func.func").add(BusyWork())
        pm.passes[0].managers[0].add(  # type: ignore[attr-defined]
            parse_pass_pipeline("func.func(canonicalize)").passes[0]
        )
    else:
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
    args = parser.parse_args(argv)
    sizes: list[int] = args.sizes or ([200, 1000] if args.quick else [1000, 5000])
    repeat: int = args.repeat or (1 if args.quick else 2)
    with_dask = not args.no_dask
    if with_dask:
        try:
            importlib.import_module("distributed")
        except ImportError:
            print("(dask.distributed not installed: skipping the Dask executor)")
            with_dask = False
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
    # Import this file as the module `parallel` (its directory is on sys.path), so
    # that Dask's worker processes can unpickle BusyWork by reference.
    sys.exit(importlib.import_module("parallel").main())
