"""What MLIR's verifier (`passflow.verifier`) costs: canonicalize + cse on 1,000
generated functions, serial, with the verifier as it is against the same run with
only xDSL's op verifiers (`passflow.ir.verify`, the checks before issue 40).

Both run as separate processes on the same input (`opt_vs_xdsl.make_input`),
alternating, so machine noise hits both alike; the second swaps the verifier for
xDSL's half before passflow-opt starts. Prints the median (or, with `--best`, the
fastest) wall time of each and their ratio. Run:

    .venv/bin/python bench/verifier_cost.py [--functions 1000] [--repeat 5] [--best]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile

from opt_vs_xdsl import PASSFLOW, PASSFLOW_PIPELINE, make_input, measured

XDSL_HALF_ONLY = (
    "import sys\n"
    "from passflow import ir, verifier\n"
    "verifier.verify = lambda op, recursive=True: ir.verify(op, recursive=recursive)\n"
    "from passflow.tools.opt import main\n"
    "sys.argv[0] = 'passflow-opt'\n"
    "sys.exit(main())\n"
)
"""passflow-opt with the checks MLIR's verifier adds to xDSL's switched off."""


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--best", action="store_true", help="fastest run, not median")
    args = parser.parse_args()
    pick = min if args.best else statistics.median
    with tempfile.TemporaryDirectory() as directory:
        path = make_input(args.functions, directory)
        output = os.path.join(directory, "output.mlir")
        flags = [path, PASSFLOW_PIPELINE, "--mlir-disable-threading", "-o", output]
        full: list[float] = []
        half: list[float] = []
        for _ in range(args.repeat):
            full.append(measured([*PASSFLOW, *flags])[0])
            half.append(measured([sys.executable, "-c", XDSL_HALF_ONLY, *flags])[0])
        a, b = pick(full), pick(half)
        print(
            f"{'functions':>9}  {'MLIR verifier':>13}  {'xDSL half':>9}  {'ratio':>6}"
        )
        print(f"{args.functions:>9}  {a:>12.2f}s  {b:>8.2f}s  {a / b:>5.2f}x")


if __name__ == "__main__":
    main()
