"""passflow-opt against xdsl-opt: canonicalize + cse on generated modules.

Both tools run as separate processes on the same generated input (functions of ~20
arith ops with foldable and duplicated work), alternating, so machine noise hits
both alike. Prints the median wall time and the median peak resident memory of
each (the child's `ru_maxrss`), their ratios, and the memory per op above a run
of the same tool on one function; `--best` prints each tool's fastest run
instead of its median time (on a noisy machine, the best of 5 or more runs is
the steadier figure). Run:

    .venv/bin/python bench/opt_vs_xdsl.py [--sizes 100 1000 5000] [--repeat 3] [--best]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

BIN = os.path.dirname(sys.executable)
PASSFLOW = [os.path.join(BIN, "passflow-opt")]
PASSFLOW_PIPELINE = "--pass-pipeline=builtin.module(func.func(canonicalize,cse))"
XDSL = [os.path.join(BIN, "xdsl-opt")]
XDSL_PIPELINE = ["-p", "canonicalize,cse"]


def function_text(index: int) -> str:
    """One function of 20 arith ops: constants to fold, identities, duplicates."""
    return f"""func.func @f{index}(%a: i32, %b: i32) -> i32 {{
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c3 = arith.constant 3 : i32
  %k = arith.addi %c2, %c3 : i32
  %x = arith.addi %a, %c0 : i32
  %y = arith.muli %b, %c1 : i32
  %s1 = arith.addi %x, %y : i32
  %s2 = arith.addi %x, %y : i32
  %m1 = arith.muli %s1, %k : i32
  %m2 = arith.muli %s2, %k : i32
  %d = arith.subi %m1, %m2 : i32
  %e = arith.addi %d, %m1 : i32
  %f = arith.xori %e, %c0 : i32
  %g = arith.andi %f, %f : i32
  %h = arith.ori %g, %c0 : i32
  %i = arith.addi %h, %k : i32
  %j = arith.muli %i, %c2 : i32
  %unused = arith.muli %j, %c3 : i32
  func.return %j : i32
}}
"""


def make_input(functions: int, directory: str) -> str:
    path = os.path.join(directory, f"bench_{functions}.mlir")
    with open(path, "w") as stream:
        stream.write("".join(function_text(i) for i in range(functions)))
    return path


OPS_PER_FUNCTION = 21  # the function op, 19 arith ops, the return


def measured(command: list[str]) -> tuple[float, int]:
    """Wall seconds and peak resident kilobytes of one run of `command`."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise subprocess.CalledProcessError(process.returncode, command)
    return seconds, usage.ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--passflow-flag",
        action="append",
        default=[],
        help="extra passflow-opt flag (repeatable)",
    )
    parser.add_argument(
        "--best",
        action="store_true",
        help="print each tool's fastest run, not the median time",
    )
    args = parser.parse_args()
    pick = min if args.best else statistics.median

    print(
        f"{'functions':>9}  {'passflow-opt':>12}  {'xdsl-opt':>9}  {'ratio':>6}"
        f"  {'peak MB':>15}  {'ratio':>6}  {'KB/op':>11}"
    )
    with tempfile.TemporaryDirectory() as directory:
        empty = make_input(1, directory)  # xdsl-opt refuses an empty file
        # A real file, not /dev/null: both tools pay for writing their output.
        output = os.path.join(directory, "output.mlir")
        base_ours = measured([*PASSFLOW, empty, "-o", output])[1]
        base_theirs = measured([*XDSL, empty, "-o", output])[1]
        for size in args.sizes:
            path = make_input(size, directory)
            ours: list[tuple[float, int]] = []
            theirs: list[tuple[float, int]] = []
            for _ in range(args.repeat):
                ours.append(
                    measured(
                        [
                            *PASSFLOW,
                            path,
                            PASSFLOW_PIPELINE,
                            *args.passflow_flag,
                            "-o",
                            output,
                        ]
                    )
                )
                theirs.append(measured([*XDSL, path, *XDSL_PIPELINE, "-o", output]))
            a = pick(t for t, _ in ours)
            b = pick(t for t, _ in theirs)
            ma = statistics.median(m for _, m in ours)
            mb = statistics.median(m for _, m in theirs)
            ops = size * OPS_PER_FUNCTION
            per_a = (ma - base_ours) / ops
            per_b = (mb - base_theirs) / ops
            print(
                f"{size:>9}  {a:>11.2f}s  {b:>8.2f}s  {a / b:>5.2f}x"
                f"  {ma / 1024:>6.0f} vs {mb / 1024:>4.0f}  {ma / mb:>5.2f}x"
                f"  {per_a:>4.2f} vs {per_b:>4.2f}"
            )


if __name__ == "__main__":
    main()
