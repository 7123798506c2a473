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
  edited-served, line-served
          edited and line again (on a copy of the cache as cold left it),
          relayed to a passflow-opt-server this script starts: the edit loop
          with the per-user server (`PASSFLOW_SERVER=auto`, docs/guide.md)
  floor   xDSL alone in a fresh interpreter on the edited function: imports,
          parse, canonicalize, cse, print. No in-process run that must run one
          function can take less; only a server's run can
  cold-before, warm-before
          cold and warm with another passflow's source (--before DIR: a
          directory holding its `passflow` package, e.g. made with
          `git archive main src | tar -x -C DIR`), to compare two versions
          in the same rounds

It prints the median of each over the rounds, wall time and CPU time (user
and system, of the command and the processes it waited for), the targets'
ratios (warm/cold, warm/mlir-opt, edited/cold and line/cold in the run's own
process and served, floor/cold, cold/plain) by both,
the load average before and after (on a shared machine the ratios are what
count, and CPU time is the steadier figure) and checks every passflow-opt output against
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
from startup import served

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
    function = work / "function.mlir"
    function.write_text(_function(edited_text, functions // 2))
    bench = _Bench(work, work / "input.mlir")
    other = None if before is None else {"PYTHONPATH": str(before)}
    with served() as server:
        for round_ in range(rounds):
            bench.round(
                round_,
                (text, edited_text, line_text),
                function,
                mlir_opt,
                other,
                server,
            )
    return bench.report(functions, rounds)


def _function(text: str, index: int) -> str:
    """Function `@f{index}` of generated `text`, alone."""
    start = text.index(f"func.func @f{index}(")
    end = text.index("\n}\n", start) + 3
    return text[start:end]


FLOOR = """
import sys
from xdsl.context import Context
from xdsl.dialects import arith, builtin, func
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import (
    CommonSubexpressionElimination,
)
ctx = Context()
for dialect in (builtin.Builtin, func.Func, arith.Arith):
    ctx.load_dialect(dialect)
with open(sys.argv[1]) as source:
    module = Parser(ctx, source.read()).parse_module()
CanonicalizePass().apply(ctx, module)
CommonSubexpressionElimination().apply(ctx, module)
Printer(stream=sys.stdout).print_op(module)
"""
"""xDSL alone on one function, in a fresh interpreter: the `floor` row."""


class _Bench:
    """The rounds' commands, outputs and times."""

    def __init__(self, work: Path, source: Path) -> None:
        self.work, self.source = work, source
        self.outputs: dict[str, Path] = {}
        self.times: dict[str, list[float]] = {}
        self.cpu_times: dict[str, list[float]] = {}

    def round(
        self,
        round_: int,
        texts: tuple[str, str, str],
        function: Path,
        mlir_opt: str | None,
        other: dict[str, str] | None,
        server: dict[str, str],
    ) -> None:
        """Each command once, in the order of the table."""
        text, edited_text, line_text = texts
        passflow = [str(TOOL), str(self.source), "-p", PIPELINE]
        cache = self.work / f"cache{round_}"
        old_cache = self.work / f"old-cache{round_}"
        served_cache = self.work / f"served-cache{round_}"
        plan: list[tuple[str, str, list[str], dict[str, str] | None]] = [
            ("plain", text, passflow, None),
            ("cold", text, [*passflow, f"--cache={cache}"], None),
            ("warm", text, [*passflow, f"--cache={cache}"], None),
            ("edited", edited_text, [*passflow, f"--cache={cache}"], None),
            ("plain-edited", edited_text, passflow, None),
            ("line", line_text, [*passflow, f"--cache={cache}"], None),
            ("plain-line", line_text, passflow, None),
            (
                "edited-served",
                edited_text,
                [*passflow, f"--cache={served_cache}"],
                server,
            ),
            ("line-served", line_text, [*passflow, f"--cache={served_cache}"], server),
            ("floor", edited_text, [sys.executable, "-c", FLOOR, str(function)], None),
        ]
        if other is not None:
            plan[3:3] = [
                ("cold-before", text, [*passflow, f"--cache={old_cache}"], other),
                ("warm-before", text, [*passflow, f"--cache={old_cache}"], other),
            ]
        if mlir_opt is not None:
            command = [mlir_opt, str(self.source), f"--pass-pipeline={PIPELINE}"]
            plan.insert(3, ("mlir", text, command, None))
        for name, content, command, env in plan:
            self.source.write_text(content)
            self.outputs[name] = self.work / f"{name}.out"
            wall, cpu = timed(command, self.outputs[name], env)
            self.times.setdefault(name, []).append(wall)
            self.cpu_times.setdefault(name, []).append(cpu)
            if name == "cold":  # the served runs start from the cold run's cache
                shutil.copytree(cache, served_cache)
        for directory in (cache, old_cache, served_cache):
            shutil.rmtree(directory, ignore_errors=True)

    def report(self, functions: int, rounds: int) -> int:
        """Check the outputs, print the table and the ratios: the exit status."""
        outputs = self.outputs
        same = outputs["plain"].read_text()
        for name in ("cold", "warm", "cold-before", "warm-before"):
            if name in outputs and outputs[name].read_text() != same:
                print(f"{name}: output differs from the plain run", file=sys.stderr)
                return 1
        for name, plain in (
            ("edited", "plain-edited"),
            ("line", "plain-line"),
            ("edited-served", "plain-edited"),
            ("line-served", "plain-line"),
        ):
            if outputs[name].read_text() != outputs[plain].read_text():
                print(f"{name}: output differs from the plain run", file=sys.stderr)
                return 1
        median = {name: statistics.median(v) for name, v in self.times.items()}
        cpu = {name: statistics.median(v) for name, v in self.cpu_times.items()}
        print(f"{functions} functions, {PIPELINE}, median of {rounds} rounds (s):")
        print(f"  {'':<13} {'wall':>7} {'cpu':>7}")
        for name, seconds in median.items():
            print(f"  {name:<13} {seconds:7.3f} {cpu[name]:7.3f}")
        print("  (a served run's CPU is its client's: the server's fork does the work)")
        targets: list[tuple[str, str, float | None]] = [
            ("warm", "cold", 0.15),
            ("edited", "cold", 0.08),
            ("line", "cold", 0.10),
            ("edited-served", "cold", 0.08),
            ("line-served", "cold", 0.10),
            ("floor", "cold", None),
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
                f"  {top + ' / ' + bottom:<22} {median[top] / median[bottom]:6.3f} "
                f"{cpu[top] / cpu[bottom]:6.3f}{bracket}"
            )
        return 0


if __name__ == "__main__":
    sys.exit(main())
