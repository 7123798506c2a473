"""Pass-manager overhead against xDSL's own: 50 trivial function passes over
1,000 functions.

passflow: a `PassManager` with `func.func(no-op x 50)` (verifier off, serial,
no instrumentation), each pass calling one no-op body on its function. xDSL:
a `PassPipeline` of 50 `ModulePass`es, each walking the module's functions and
calling the same body on each: what an xDSL user writes for a function pass.
Both run on the same parsed module in the same process, with the bare loop
(below), each once a round, in an order rotated from round to round (each
side follows each other side equally often); the figure is the median per
pass visit (one pass on one function), and the ratio passflow / xDSL. Run:

    .venv/bin/python bench/pass_overhead.py [--functions N] [--passes N] [--rounds N]

Add `--cpu` to time CPU time (`time.process_time`) instead of wall time, the
figure to quote on a shared machine. Add `--verify` to keep passflow's verifier on (MLIR's default; xDSL's
pipeline does not verify between passes), and `--instructions` to count, under
valgrind's callgrind, the machine instructions per visit of each side
instead: slow, but a figure the load of a shared machine does not move.
"""

from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, func
from xdsl.passes import ModulePass, PassPipeline

from passflow import OperationPass, PassManager, ir

sys.path.insert(0, os.path.dirname(__file__))
import callgrind


def body(op: ir.Operation) -> None:
    """What every trivial pass does with its function: nothing."""


class NoOp(OperationPass):
    """A trivial passflow function pass."""

    argument = "no-op"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        body(self.get_operation())
        self.mark_all_analyses_preserved()


@dataclass(frozen=True)
class XNoOp(ModulePass):
    """The same pass as xDSL users write it: a module pass over the functions."""

    name = "no-op"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for child in op.body.block.ops:
            if isinstance(child, func.FuncOp):
                body(child)


def module_text(functions: int) -> str:
    return "".join(
        f"func.func @f{i}(%a: i32) -> i32 {{\n  func.return %a : i32\n}}\n"
        for i in range(functions)
    )


def passflow_manager(passes: int, verify: bool) -> PassManager:
    pm = PassManager()
    pm.enable_verifier(verify)
    nested = pm.nest("func.func")
    for _ in range(passes):
        nested.add(NoOp())
    return pm


def xdsl_pipeline(passes: int) -> PassPipeline:
    return PassPipeline(tuple(XNoOp() for _ in range(passes)))


def bare_loop(module: builtin.ModuleOp, passes: int) -> Callable[[], None]:
    """The floor under any pass manager: each pass pointed at each function
    and its `run_on_operation` called, nothing checked (as bench/dispatch.py's
    bare loop)."""
    from passflow.analysis import AnalysisManager  # internals: this tree's only
    from passflow.diagnostics import DiagnosticEngine
    from passflow.pass_base import PassExecutionState
    from passflow.runner import RunState

    run = RunState(ir.default_context(), DiagnosticEngine(), None, verify=False)
    am = AnalysisManager.for_root(module)
    functions = ir.direct_children(module)
    pairs = [(NoOp(), PassExecutionState(module, am, run)) for _ in range(passes)]

    def loop() -> None:
        for op in functions:
            for pass_, state in pairs:
                state.op = op
                pass_.execution_state = state
                pass_.run_on_operation()
                pass_.execution_state = None

    return loop


def measure(args: argparse.Namespace) -> None:
    module = ir.parse_module(module_text(args.functions))
    pm = passflow_manager(args.passes, args.verify)
    pipeline = xdsl_pipeline(args.passes)
    context = ir.default_context()
    pm.run(module)  # warm-up: finalization, caches
    pipeline.apply(context, module)
    clock = time.process_time if args.cpu else time.perf_counter
    floor = bare_loop(module, args.passes)
    sides: list[Callable[[], None]] = [
        lambda: pm.run(module),
        lambda: pipeline.apply(context, module),
        floor,
    ]
    times: list[list[float]] = [[], [], []]
    gc.disable()
    for round_ in range(args.rounds):
        # Each side follows each other side equally often: a side run right
        # after another finds the caches as that one left them.
        for k in range(len(sides)):
            side = (round_ + k) % len(sides)
            start = clock()
            sides[side]()
            times[side].append(clock() - start)
    gc.enable()
    ours, theirs, bare = times
    visits = args.functions * args.passes
    a = statistics.median(ours) / visits * 1e6
    b = statistics.median(theirs) / visits * 1e6
    c = statistics.median(bare) / visits * 1e6
    load = os.getloadavg()[0]
    verify = "on" if args.verify else "off"
    print(
        f"{args.passes} trivial function passes x {args.functions} functions, "
        f"median of {args.rounds} rounds, order rotated, load {load:.1f} "
        f"({os.cpu_count()} CPUs), {'CPU' if args.cpu else 'wall'} time, "
        f"passflow verifier {verify}"
    )
    print(f"  passflow PassManager : {a:.3f} us per pass visit")
    print(f"  xDSL PassPipeline    : {b:.3f} us per pass visit")
    print(f"  ratio                : {a / b:.2f}x")
    print(f"  bare loop (floor)    : {c:.3f} us per pass visit ({c / b:.2f}x xDSL)")


def child(args: argparse.Namespace) -> None:
    """Run one side `args.repeat` times (the callgrind measurement)."""
    module = ir.parse_module(module_text(args.functions))
    gc.disable()
    if args.child == "passflow":
        pm = passflow_manager(args.passes, args.verify)
        pm.run(module)
        for _ in range(args.repeat):
            pm.run(module)
    else:
        pipeline = xdsl_pipeline(args.passes)
        context = ir.default_context()
        pipeline.apply(context, module)
        for _ in range(args.repeat):
            pipeline.apply(context, module)


def instructions(side: str, repeat: int, args: argparse.Namespace) -> int:
    return callgrind.instructions(
        [
            sys.executable,
            __file__,
            f"--child={side}",
            f"--repeat={repeat}",
            f"--functions={args.functions}",
            f"--passes={args.passes}",
            *(["--verify"] if args.verify else []),
        ]
    )


def count(args: argparse.Namespace) -> None:
    visits = args.functions * args.passes
    per_visit: dict[str, float] = {}
    for side in ("passflow", "xdsl"):
        few, more = instructions(side, 1, args), instructions(side, 3, args)
        per_visit[side] = (more - few) / (2 * visits)
    verify = "on" if args.verify else "off"
    print(
        f"{args.passes} trivial function passes x {args.functions} functions, "
        f"callgrind instructions per pass visit (3 runs minus 1), "
        f"passflow verifier {verify}"
    )
    print(f"  passflow PassManager : {per_visit['passflow']:.0f}")
    print(f"  xDSL PassPipeline    : {per_visit['xdsl']:.0f}")
    print(f"  ratio                : {per_visit['passflow'] / per_visit['xdsl']:.2f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--passes", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--verify", action="store_true")
    parser.add_argument("--cpu", action="store_true")
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--child", choices=("passflow", "xdsl"), help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
    elif args.instructions:
        count(args)
    else:
        measure(args)


if __name__ == "__main__":
    main()
