"""passflow-opt against xdsl-opt where most runs are: start-up and small files.

Every figure is whole processes (interpreter start-up included), passflow-opt
and its peer started alternately so that machine noise hits both alike, the
median of `--runs` runs each (10 by default). In one run it prints:

- one function (canonicalize + cse, the default executor): passflow-opt's wall
  and CPU time, xdsl-opt's, and the ratio (issue 32's target: <= 0.8);
- the corpus: every `.mlir` file of xDSL's shipped `tests/filecheck/transforms`,
  each once through both tools (alternating which goes first) with
  `--split-input-file --allow-unregistered-dialect` and canonicalize; the total
  wall of each and the ratio (target: <= 0.8), and how many files end with a
  different exit status (they did not do the same work);
- `passflow-opt --version` and `--help` (target: <= 0.15 s);
- the floors no tool goes below: an empty interpreter, `import xdsl.ir`, and
  xDSL alone (no tool, no flags, no pass) parsing and printing the one-function
  file with the dialects it uses loaded.

The children run without `PYTHONDONTWRITEBYTECODE`, so that the warm-up run
writes the bytecode of any module edited since, as an installed tool has it
(a module compiled from source on every start costs passflow-opt 20-40 ms).

`--server` adds the same one-function and corpus rows for passflow-opt
relayed to a `passflow-opt-server` this script starts (in a private temporary
directory) and stops: the client's wall time is the whole cost a test suite
sees; its CPU column is the client's alone (the run is the server's fork).

`--slicing` instead times the default run on generated files around
`passflow.tools.sliced_options.SMALL_INPUT`, sliced and whole (each forced
through that threshold), to show where slicing starts to pay. Run:

    .venv/bin/python bench/startup.py [--runs 10] [--corpus-rounds 1] [--no-corpus]
                                      [--server]
    .venv/bin/python bench/startup.py --slicing [--runs 10]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from pathlib import Path

BIN = Path(sys.executable).parent
PASSFLOW = str(BIN / "passflow-opt")
XDSL = str(BIN / "xdsl-opt")
SERVER = str(BIN / "passflow-opt-server")
PYTHON = sys.executable
CORPUS = Path(sysconfig.get_paths()["purelib"]) / "tests" / "filecheck" / "transforms"
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

ONE_FUNCTION = """\
func.func @f(%a: i32, %b: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %x = arith.addi %a, %c0 : i32
  %y = arith.muli %b, %c1 : i32
  %s1 = arith.addi %x, %y : i32
  %s2 = arith.addi %x, %y : i32
  %m = arith.muli %s1, %s2 : i32
  func.return %m : i32
}
"""

XDSL_ALONE = """
import sys
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.parser import Parser
from xdsl.printer import Printer
ctx = Context()
for dialect in (Builtin, Func, Arith):
    ctx.load_dialect(dialect)
with open(sys.argv[1]) as stream:
    module = Parser(ctx, stream.read()).parse_module()
Printer().print_op(module)
print()
"""
"""The floor of a tool on xDSL: parse and print the file, nothing else."""

FORCED = """
import sys
from passflow.tools import sliced_options
from passflow.tools.opt import main
sliced_options.SMALL_INPUT = int(sys.argv.pop(1))
sys.exit(main())
"""
"""passflow-opt with `SMALL_INPUT` set from the first argument (0: every file
may slice; a huge number: every file runs whole)."""


@dataclass
class Run:
    wall: float
    cpu: float
    status: int


Env = dict[str, str]


def run(command: Sequence[str], env: Env = ENV) -> Run:
    """One whole process: its wall and CPU seconds and its exit status."""
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    return Run(wall, usage.ru_utime + usage.ru_stime, os.waitstatus_to_exitcode(status))


def alternate(
    a: Sequence[str], b: Sequence[str], runs: int, env_a: Env = ENV
) -> tuple[list[Run], list[Run]]:
    """`runs` runs of each, A B B A A B ...: neither always goes first."""
    ours: list[Run] = []
    theirs: list[Run] = []
    run(a, env_a)  # warm the file cache and the bytecode
    run(b)
    for index in range(runs):
        if index % 2 == 0:
            ours.append(run(a, env_a))
            theirs.append(run(b))
        else:
            theirs.append(run(b))
            ours.append(run(a, env_a))
    return ours, theirs


@contextlib.contextmanager
def served() -> Generator[Env]:
    """A passflow-opt-server for the block: the environment that uses it."""
    with tempfile.TemporaryDirectory() as directory:  # mode 0700
        socket = str(Path(directory) / "socket")
        server = subprocess.Popen(
            [SERVER, socket],
            stdout=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            env=ENV,  # the clients' interpreter variables, or it refuses them
        )
        try:
            assert server.stdout is not None
            if not server.stdout.readline().startswith(
                "passflow-opt-server: listening"
            ):
                raise SystemExit("passflow-opt-server did not start")
            env = {**ENV, "PASSFLOW_SERVER": socket}
            probe = subprocess.run(
                [PASSFLOW, "--version"], env=env, capture_output=True, text=True
            )
            if probe.stderr:  # a note: the server did not run it
                raise SystemExit(probe.stderr)
            yield env
        finally:
            server.terminate()
            server.wait()


def median_wall(runs: list[Run]) -> float:
    return statistics.median(r.wall for r in runs)


def median_cpu(runs: list[Run]) -> float:
    return statistics.median(r.cpu for r in runs)


def row(name: str, ours: list[Run], theirs: list[Run] | None, target: str) -> None:
    a_wall, a_cpu = median_wall(ours), median_cpu(ours)
    if theirs is None:
        print(f"{name:<34} {a_wall:>8.3f} s {a_cpu:>8.3f} s {'':>22}  {target}")
        return
    b_wall, b_cpu = median_wall(theirs), median_cpu(theirs)
    print(
        f"{name:<34} {a_wall:>8.3f} s {a_cpu:>8.3f} s {b_wall:>8.3f} s "
        f"{b_cpu:>8.3f} s  {a_wall / b_wall:>5.2f}x {a_cpu / b_cpu:>5.2f}x  {target}"
    )


def corpus(rounds: int, env: Env = ENV, label: str = "corpus") -> None:
    files = sorted(CORPUS.rglob("*.mlir"))
    if not files:
        print(f"corpus: no .mlir files under {CORPUS}")
        return
    flags = ["--split-input-file", "--allow-unregistered-dialect"]
    ours_totals: list[float] = []
    theirs_totals: list[float] = []
    ours_cpu: list[float] = []
    theirs_cpu: list[float] = []
    differ = 0
    for round_ in range(rounds):
        ours = theirs = ours_c = theirs_c = 0.0
        for index, path in enumerate(files):
            a = [
                PASSFLOW,
                str(path),
                *flags,
                "--pass-pipeline=builtin.module(canonicalize)",
            ]
            b = [XDSL, str(path), *flags, "-p", "canonicalize"]
            if (index + round_) % 2 == 0:
                mine, peer = run(a, env), run(b)
            else:
                peer, mine = run(b), run(a, env)
            ours += mine.wall
            theirs += peer.wall
            ours_c += mine.cpu
            theirs_c += peer.cpu
            if round_ == 0 and (mine.status == 0) != (peer.status == 0):
                differ += 1
        ours_totals.append(ours)
        theirs_totals.append(theirs)
        ours_cpu.append(ours_c)
        theirs_cpu.append(theirs_c)
    a, b = statistics.median(ours_totals), statistics.median(theirs_totals)
    ac, bc = statistics.median(ours_cpu), statistics.median(theirs_cpu)
    name = f"{label}: {len(files)} files, total"
    print(
        f"{name:<34} {a:>8.2f} s {ac:>8.2f} s {b:>8.2f} s {bc:>8.2f} s  "
        f"{a / b:>5.2f}x {ac / bc:>5.2f}x  <= 0.8x"
    )
    print(
        f"{'':<34} {differ} of {len(files)} files end with another exit status "
        f"(median of {rounds} round{'s' * (rounds > 1)})"
    )


def startup(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as directory:
        one = Path(directory) / "one.mlir"
        one.write_text(ONE_FUNCTION)
        print(
            f"{'':<34} {'passflow-opt':>21} {'xdsl-opt':>21}  {'ratio':>12}\n"
            f"{'median of ' + str(args.runs) + ' runs':<34} {'wall':>10} {'cpu':>10} "
            f"{'wall':>10} {'cpu':>10}  {'wall':>6} {'cpu':>5}  target"
        )
        ours, theirs = alternate(
            [PASSFLOW, str(one), "-p", "builtin.module(func.func(canonicalize,cse))"],
            [XDSL, str(one), "-p", "canonicalize,cse"],
            args.runs,
        )
        row("one function, canonicalize,cse", ours, theirs, "<= 0.8x")
        if args.corpus:
            corpus(args.corpus_rounds)
        if args.server:
            with served() as env:
                ours, theirs = alternate(
                    [
                        PASSFLOW,
                        str(one),
                        "-p",
                        "builtin.module(func.func(canonicalize,cse))",
                    ],
                    [XDSL, str(one), "-p", "canonicalize,cse"],
                    args.runs,
                    env_a=env,
                )
                row("  served (passflow-opt-server)", ours, theirs, "")
                if args.corpus:
                    corpus(args.corpus_rounds, env, "  served corpus")
        for flag in ("--version", "--help"):
            ours, theirs = alternate([PASSFLOW, flag], [XDSL, flag], args.runs)
            row(f"{flag}", ours, theirs, "passflow-opt <= 0.15 s")
        print("floors:")
        empty, xdsl_ir = alternate(
            [PYTHON, "-c", "pass"], [PYTHON, "-c", "import xdsl.ir"], args.runs
        )
        row("  empty interpreter", empty, None, "")
        row("  python -c 'import xdsl.ir'", xdsl_ir, None, "")
        alone, _ = alternate(
            [PYTHON, "-c", XDSL_ALONE, str(one)], [PYTHON, "-c", "pass"], args.runs
        )
        row("  xDSL parses + prints the file", alone, None, "")


def generated(functions: int) -> str:
    return "".join(
        ONE_FUNCTION.replace("@f(", f"@f{index}(") for index in range(functions)
    )


def slicing(args: argparse.Namespace) -> None:
    print(
        f"{'functions':>9} {'KiB':>6}  {'sliced':>8} {'whole':>8}  {'ratio':>5}"
        f"   (median wall of {args.runs}, default executor, canonicalize,cse)"
    )
    with tempfile.TemporaryDirectory() as directory:
        for functions in args.sizes:
            path = Path(directory) / f"f{functions}.mlir"
            path.write_text(generated(functions))
            pipeline = "--pass-pipeline=builtin.module(func.func(canonicalize,cse))"
            sliced, whole = alternate(
                [PYTHON, "-c", FORCED, "0", str(path), pipeline],
                [PYTHON, "-c", FORCED, str(1 << 40), str(path), pipeline],
                args.runs,
            )
            size = path.stat().st_size / 1024
            a, b = median_wall(sliced), median_wall(whole)
            print(f"{functions:>9} {size:>6.1f}  {a:>7.3f}s {b:>7.3f}s  {a / b:>4.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of each (>= 10)")
    parser.add_argument("--corpus-rounds", type=int, default=1)
    parser.add_argument("--no-corpus", dest="corpus", action="store_false")
    parser.add_argument(
        "--server",
        action="store_true",
        help="also time passflow-opt relayed to a passflow-opt-server",
    )
    parser.add_argument(
        "--slicing", action="store_true", help="sliced vs whole around SMALL_INPUT"
    )
    parser.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=[10, 30, 60, 120, 250, 500, 1000],
        help="functions per generated file, with --slicing",
    )
    args = parser.parse_args()
    if args.slicing:
        slicing(args)
    else:
        startup(args)


if __name__ == "__main__":
    main()
