"""Would early cutoff pay (rustc's red/green, docs/cache.md "Early cutoff")?

Early cutoff keys each function's state after the first pass of a nested
pipeline as well, so that an edit the first pass undoes (a comment, a dead op
canonicalize erases, a renamed value) finds the rest of the pipeline in the
cache. Its cost, on every cold run: printing each function after the first
pass with its locations (the later passes' diagnostics cite them) and hashing
it. Its gain, on such an edit: the edited function still parses and runs the
first pass, and skips the rest and the final print.

This times those phases in one process on bench/parallel.py's functions with
`builtin.module(func.func(canonicalize,cse))` and prints:

  cost  (cold with the extra state keys) / (cold today)        [<= 1.05]
  gain  (edited function with cutoff) / (its cold time today)  [<= 0.2]

The cold time here is the in-process work (parse, passes, print) without the
process's start, the scan and the store, which only lowers the cost ratio of
a real run. Run:

    .venv/bin/python bench/early_cutoff.py [--functions 1000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from parallel import make_input

from passflow import PassManager, ir
from passflow.pipeline_text import parse_pass_pipeline
from passflow.print_options import PrintOptions
from passflow.sliced.scan import scan_slices

_STATE = PrintOptions(debug_info=True, local_scope=True)
"""How a function's state after a pass would be keyed: printed with its
locations."""


def _timed(work: Callable[[], object]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def _pass(pipeline: str) -> PassManager:
    pm = PassManager("builtin.module", ir.default_context())
    pm.assign(parse_pass_pipeline(f"builtin.module(func.func({pipeline}))"))
    return pm


def _round(text: str) -> dict[str, float]:
    """Each phase over every function, each function parsed from its own text
    and run in its own module, as a sliced run's batches run them."""
    context = ir.default_context()
    canonicalize, cse = _pass("canonicalize"), _pass("cse")
    slices = scan_slices(text)
    assert slices is not None
    pieces = [slices.piece_text(i) for i in range(len(slices.pieces))]
    modules: list[ir.ModuleOp] = []
    times: dict[str, float] = {}
    times["parse"] = _timed(
        lambda: modules.extend(
            ir.parse_module(p.text, context, "in.mlir", first_line=p.first_line)
            for p in pieces
        )
    )
    times["canonicalize"] = _timed(lambda: [canonicalize.run(m) for m in modules])
    times["state keys"] = _timed(
        lambda: [
            hashlib.sha256(ir.print_op(op, options=_STATE).encode()).hexdigest()
            for m in modules
            for op in ir.direct_children(m)
        ]
    )
    times["cse"] = _timed(lambda: [cse.run(m) for m in modules])
    times["print"] = _timed(lambda: [ir.print_op(m) for m in modules])
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    text = make_input(args.functions)
    before = os.getloadavg()[0]
    gc.disable()  # as passflow-opt runs
    rounds = [_round(text) for _ in range(args.rounds)]
    median = {name: statistics.median(r[name] for r in rounds) for name in rounds[0]}
    cold = median["parse"] + median["canonicalize"] + median["cse"] + median["print"]
    cutoff = median["parse"] + median["canonicalize"] + median["state keys"]
    print(
        f"{args.functions} functions, func.func(canonicalize,cse), "
        f"median of {args.rounds} rounds (s):"
    )
    for name, seconds in median.items():
        print(f"  {name:<13} {seconds:7.3f}")
    print(f"  cost  {(cold + median['state keys']) / cold:.3f}  [<= 1.05]")
    print(f"  gain  {cutoff / cold:.3f}  [<= 0.2]")
    print(f"load average (1 min): {before:.2f} before, {os.getloadavg()[0]:.2f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())
