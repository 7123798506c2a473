"""Pass dispatch cost: 10 no-op function passes over 2,000 functions.

Prints microseconds per (pass x op) dispatch through `PassManager.run` (verifier
off, no instrumentation) and the ratio to a bare loop that calls the same pass
bodies on the same ops, measured in the same process. Run:

    .venv/bin/python bench/dispatch.py [--functions N] [--passes N] [--repeat N]
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time

from passflow import OperationPass, PassManager, ir
from passflow.analysis import AnalysisManager
from passflow.diagnostics import DiagnosticEngine
from passflow.pass_base import PassExecutionState
from passflow.runner import RunState


class NoOp(OperationPass):
    """Does nothing and says so: the cheapest pass a manager can dispatch."""

    argument = "no-op"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


def make_module_text(functions: int) -> str:
    return "".join(
        f"func.func @f{i}(%a: i32) -> i32 {{\n  func.return %a : i32\n}}\n"
        for i in range(functions)
    )


def time_manager(module: ir.ModuleOp, passes: int, repeat: int) -> float:
    pm = PassManager()
    pm.enable_verifier(False)
    fpm = pm.nest("func.func")
    for _ in range(passes):
        fpm.add(NoOp())
    pm.run(module)  # warm-up: finalization, caches
    samples: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        pm.run(module)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def time_bare_loop(module: ir.ModuleOp, passes: int, repeat: int) -> float:
    # Each body gets the one state it needs once; the loop only points it at
    # the next op, the least any manager must do per dispatch.
    run = RunState(ir.default_context(), DiagnosticEngine(), None, verify=False)
    am = AnalysisManager.for_root(module)
    bodies = [NoOp() for _ in range(passes)]
    states = [PassExecutionState(module, am, run) for _ in bodies]
    for body, state in zip(bodies, states, strict=True):
        body.execution_state = state
    pairs = list(zip(bodies, states, strict=True))
    samples: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        for op in ir.direct_children(module):
            for body, state in pairs:
                state.op = op
                body.run_on_operation()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--functions", type=int, default=2000)
    parser.add_argument("--passes", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()

    module = ir.parse_module(make_module_text(args.functions))
    gc.disable()
    managed = time_manager(module, args.passes, args.repeat)
    bare = time_bare_loop(module, args.passes, args.repeat)
    gc.enable()
    dispatches = args.functions * args.passes
    per_dispatch = managed / dispatches * 1e6
    per_bare = bare / dispatches * 1e6
    print(f"functions={args.functions} passes={args.passes} dispatches={dispatches}")
    print(f"PassManager.run : {managed * 1e3:8.2f} ms  {per_dispatch:6.3f} us/dispatch")
    print(f"bare loop       : {bare * 1e3:8.2f} ms  {per_bare:6.3f} us/dispatch")
    print(f"ratio           : {managed / bare:6.2f}x the bare loop")
    print(f"overhead        : {per_dispatch - per_bare:6.3f} us/dispatch")


if __name__ == "__main__":
    main()
