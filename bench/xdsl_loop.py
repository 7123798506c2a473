"""What the pass manager costs over an xDSL project's hand-written loop.

xDSL projects run their passes as `for p in passes: p.apply(ctx, module)`;
porting that loop to a `PassManager` (docs/guide.md, "xDSL passes as they are")
adds verification after each pass, instrumentation hooks and failure handling.
This times the same xDSL passes (xDSL's own canonicalize, CSE and DCE, as
instances added with `pm.add`) on the same generated module both ways, in this
process, alternately, and prints the median of each and their ratio, for the
manager as it runs by default (verifying after each pass, as the loop does not)
and with `enable_verifier(False)`. Run:

    .venv/bin/python bench/xdsl_loop.py [--functions N] [--repeat N]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.transforms.canonicalize import CanonicalizePass
from xdsl.transforms.common_subexpression_elimination import (
    CommonSubexpressionElimination,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from passflow import PassManager, ir

FUNCTION = """\
func.func @f{index}(%a: i32, %b: i32) -> i32 {{
  %c0 = arith.constant 0 : i32
  %x = arith.addi %a, %b : i32
  %y = arith.addi %a, %b : i32
  %z = arith.addi %x, %c0 : i32
  %dead = arith.muli %y, %y : i32
  %r = arith.muli %z, %y : i32
  func.return %r : i32
}}
"""


def passes() -> list[ModulePass]:
    return [CanonicalizePass(), CommonSubexpressionElimination(), DeadCodeElimination()]


def timed(run: Callable[[ir.ModuleOp], None], text: str) -> tuple[float, str]:
    module = ir.parse_module(text)
    start = time.perf_counter()
    run(module)
    return time.perf_counter() - start, ir.print_op(module)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--functions", type=int, default=300)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    text = "".join(FUNCTION.format(index=i) for i in range(args.functions))

    def loop(module: ir.ModuleOp) -> None:
        ctx = ir.default_context()
        for pass_ in passes():
            pass_.apply(ctx, module)

    def manager(verify: bool) -> Callable[[ir.ModuleOp], None]:
        def run(module: ir.ModuleOp) -> None:
            pm = PassManager()
            for pass_ in passes():
                pm.add(pass_)
            pm.enable_verifier(verify)
            pm.run(module)

        return run

    runs = {
        "loop": loop,
        "PassManager": manager(True),
        "PassManager, no verifier": manager(False),
    }
    times: dict[str, list[float]] = {name: [] for name in runs}
    printed: dict[str, str] = {}
    for _ in range(args.repeat):
        for name, run in runs.items():
            seconds, printed[name] = timed(run, text)
            times[name].append(seconds)
    assert len(set(printed.values())) == 1, "the three runs printed different IR"
    base = statistics.median(times["loop"])
    print(f"{args.functions} functions, canonicalize + cse + dce, {args.repeat} runs")
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<26} {median * 1e3:8.1f} ms  {median / base:5.2f}x the loop")


if __name__ == "__main__":
    main()
