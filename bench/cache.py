"""The result cache (`passflow-opt --cache`), end to end: whole processes on N
generated functions (bench/parallel.py's input), `builtin.module(func.func(
canonicalize,cse))`, in rounds that run each command once:

  plain   passflow-opt without the cache (the default run: sliced, 2 jobs)
  cold    with --cache on an empty cache directory
  warm    with --cache again, nothing changed
  edited  with --cache after one function in the middle was edited in place
  line    with --cache after a line was added in that function instead (every
          function below it moves down a line)
  mlir    mlir-opt (C++, one thread) on the same file, if --mlir-opt PATH is given
  cold-before, warm-before
          cold and warm with another passflow's source (--before DIR: a
          directory holding its `passflow` package, e.g. made with
          `git archive main src | tar -x -C DIR`), to compare two versions
          in the same rounds

It prints the median of each over the rounds, wall time and CPU time (user
and system, of the command and the processes it waited for), the targets'
ratios (warm/cold, warm/mlir-opt, edited/cold, line/cold, cold/plain) by both,
the load average before and after (on a shared machine the ratios are what
count, and CPU time is the steadier figure) and checks every output against
the plain run's. The commands run with Python's bytecode cache on, as an
installed passflow does (`PYTHONDONTWRITEBYTECODE` is dropped from their
environment: compiling every module on every run is not a user's start-up).
Run:

    .venv/bin/python bench/cache.py [--functions 1000] [--rounds 5] [--mlir-opt PATH]
        [--before DIR/src]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from parallel import make_input

PIPELINE = "builtin.module(func.func(canonicalize,cse))"
TOOL = Path(sys.executable).parent / "passflow-opt"


def _environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The commands' environment: this one, with the bytecode cache on."""
    env = {**os.environ, **(extra or {})}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def timed(
    argv: list[str], output: Path, env: dict[str, str] | None = None
) -> tuple[float, float]:
    """The wall and CPU seconds of `argv` (its output to `output`)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with output.open("w") as out:
        subprocess.run(argv, stdout=out, check=True, env=_environment(env))
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mlir-opt", help="an mlir-opt to compare with")
    parser.add_argument(
        "--before", type=Path, help="a directory holding another passflow package"
    )
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="passflow-bench-cache-"))
    before = os.getloadavg()[0]
    try:
        return _bench(work, args.functions, args.rounds, args.mlir_opt, args.before)
    finally:
        shutil.rmtree(work)
        print(
            f"load average (1 min): {before:.2f} before, {os.getloadavg()[0]:.2f} after"
        )


def _bench(
    work: Path,
    functions: int,
    rounds: int,
    mlir_opt: str | None,
    before: Path | None,
) -> int:
    text = make_input(functions)
    source = work / "input.mlir"
    edited_text = text.replace(
        f"func.func @f{functions // 2}(%a: i32, %b: i32) -> i32 {{\n"
        f"  %c = arith.constant {functions // 2 % 7} : i32",
        f"func.func @f{functions // 2}(%a: i32, %b: i32) -> i32 {{\n"
        f"  %c = arith.constant 99 : i32",
    )
    assert edited_text != text
    header = f"func.func @f{functions // 2}(%a: i32, %b: i32) -> i32 {{\n"
    line_text = text.replace(header, header + "  %added = arith.constant 7 : i32\n")
    assert line_text != text
    passflow = [str(TOOL), str(source), "-p", PIPELINE]
    times: dict[str, list[float]] = {}
    cpu_times: dict[str, list[float]] = {}
    outputs: dict[str, Path] = {}
    other = None if before is None else {"PYTHONPATH": str(before)}
    for round_ in range(rounds):
        cache = work / f"cache{round_}"
        old_cache = work / f"old-cache{round_}"
        plan: list[tuple[str, str, list[str], dict[str, str] | None]] = [
            ("plain", text, passflow, None),
            ("cold", text, [*passflow, f"--cache={cache}"], None),
            ("warm", text, [*passflow, f"--cache={cache}"], None),
            ("edited", edited_text, [*passflow, f"--cache={cache}"], None),
            ("plain-edited", edited_text, passflow, None),
            ("line", line_text, [*passflow, f"--cache={cache}"], None),
            ("plain-line", line_text, passflow, None),
        ]
        if other is not None:
            plan[3:3] = [
                ("cold-before", text, [*passflow, f"--cache={old_cache}"], other),
                ("warm-before", text, [*passflow, f"--cache={old_cache}"], other),
            ]
        if mlir_opt is not None:
            command = [mlir_opt, str(source), f"--pass-pipeline={PIPELINE}"]
            plan.insert(3, ("mlir", text, command, None))
        for name, content, command, env in plan:
            source.write_text(content)
            outputs[name] = work / f"{name}.out"
            wall, cpu = timed(command, outputs[name], env)
            times.setdefault(name, []).append(wall)
            cpu_times.setdefault(name, []).append(cpu)
        shutil.rmtree(cache)
        shutil.rmtree(old_cache, ignore_errors=True)
    same = outputs["plain"].read_text()
    for name in ("cold", "warm", "cold-before", "warm-before"):
        if name in outputs and outputs[name].read_text() != same:
            print(f"{name}: output differs from the plain run", file=sys.stderr)
            return 1
    for name in ("edited", "line"):
        if outputs[name].read_text() != outputs[f"plain-{name}"].read_text():
            print(f"{name}: output differs from the plain run", file=sys.stderr)
            return 1
    median = {name: statistics.median(values) for name, values in times.items()}
    cpu = {name: statistics.median(values) for name, values in cpu_times.items()}
    print(f"{functions} functions, {PIPELINE}, median of {rounds} rounds (s):")
    print(f"  {'':<13} {'wall':>7} {'cpu':>7}")
    for name, seconds in median.items():
        print(f"  {name:<13} {seconds:7.3f} {cpu[name]:7.3f}")
    targets: list[tuple[str, str, float | None]] = [
        ("warm", "cold", 0.15),
        ("edited", "cold", 0.08),
        ("line", "cold", 0.10),
        ("cold", "plain", 1.05),
        ("warm", "mlir", 1.0),
        ("warm", "warm-before", None),
    ]
    print("ratios, wall and cpu (targets in brackets):")
    for top, bottom, target in targets:
        if bottom not in median:
            continue
        bracket = f"  [<= {target}]" if target is not None else ""
        print(
            f"  {top} / {bottom:<12} {median[top] / median[bottom]:6.3f} "
            f"{cpu[top] / cpu[bottom]:6.3f}{bracket}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
