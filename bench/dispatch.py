"""Pass dispatch cost: 10 no-op function passes over 2,000 functions.

Prints microseconds per (pass x op) dispatch through `PassManager.run` (verifier
off, serial, no instrumentation) and the ratio to a bare loop that calls the
same pass bodies on the same ops, measured in the same process. Run:

    .venv/bin/python bench/dispatch.py [--functions N] [--passes N] [--repeat N]

With `--against CHECKOUT` (another tree of passflow, e.g. made by
`git worktree add /tmp/passflow-d4d11a7 d4d11a7`), the same `PassManager.run`
measurement runs against this tree and each other tree in turn, `--rounds`
times, alternating, each run in its own subprocess importing its tree's `src/`,
so that both see the same slow and fast spells of a shared machine:

    .venv/bin/python bench/dispatch.py --against /tmp/passflow-d4d11a7 --rounds 10

`--cpu` times in CPU time (`time.process_time`) rather than wall time, the
figure to quote on a shared machine.

Add `--instructions` to count, under valgrind's callgrind, the machine
instructions per dispatch of each tree instead (the count of `--repeat`
more runs, over the dispatches they made): slow, but a figure the load of a
shared machine does not move.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from passflow import OperationPass, PassManager, ir

sys.path.insert(0, os.path.dirname(__file__))
import callgrind

HERE = Path(__file__).resolve().parents[1]


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


def time_manager(
    module: ir.ModuleOp,
    passes: int,
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    pm = PassManager()
    pm.enable_verifier(False)
    fpm = pm.nest("func.func")
    for _ in range(passes):
        fpm.add(NoOp())
    pm.run(module)  # warm-up: finalization, caches
    samples: list[float] = []
    for _ in range(repeat):
        start = clock()
        pm.run(module)
        samples.append(clock() - start)
    return statistics.median(samples)


def time_bare_loop(module: ir.ModuleOp, passes: int, repeat: int) -> float:
    # Imported here, not at the top: `--against` runs this file's
    # `PassManager.run` measurement on older trees, which lack these internals.
    from passflow.analysis import AnalysisManager
    from passflow.diagnostics import DiagnosticEngine
    from passflow.pass_base import PassExecutionState
    from passflow.runner import RunState

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


def measure_manager(
    functions: int,
    passes: int,
    repeat: int,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """Microseconds per dispatch through `PassManager.run` (median of `repeat`)."""
    module = ir.parse_module(make_module_text(functions))
    gc.disable()
    managed = time_manager(module, passes, repeat, clock)
    gc.enable()
    return managed / (functions * passes) * 1e6


def _child_command(args: argparse.Namespace, repeat: int) -> list[str]:
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        "--child",
        f"--functions={args.functions}",
        f"--passes={args.passes}",
        f"--repeat={repeat}",
        *(["--cpu"] if args.cpu else []),
    ]


def _run_child(tree: Path, command: list[str]) -> subprocess.CompletedProcess[str]:
    """`command` run with passflow imported from `tree` (a fixed hash seed, so
    that instruction counts repeat)."""
    env = dict(os.environ, PYTHONPATH=str(tree / "src"), PYTHONHASHSEED="0")
    done = subprocess.run(
        command, env=env, cwd=tree, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the measurement failed:\n{done.stderr}")
    return done


def run_in_tree(tree: Path, args: argparse.Namespace) -> float:
    """One `measure_manager` run in a subprocess importing passflow from `tree`."""
    done = _run_child(tree, _child_command(args, args.repeat))
    result = json.loads(done.stdout)
    imported = Path(result["passflow"]).resolve()
    if not imported.is_relative_to(tree.resolve()):
        raise SystemExit(f"{tree}: the subprocess imported passflow from {imported}")
    return float(result["us_per_dispatch"])


def instructions_per_dispatch(tree: Path, args: argparse.Namespace) -> float:
    """Instructions (callgrind) of `args.repeat` more runs of `PassManager.run`
    in `tree`, per dispatch: the count with `1 + repeat` runs less the count
    with 1, so that start-up, parsing and the warm-up cancel out."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise SystemExit("--instructions needs valgrind")
    # Unmeasured first: a module compiled in only one of the two counted runs
    # (a file edited since its last import) would not cancel out.
    _run_child(tree, _child_command(args, 1))
    counts: list[int] = []
    for repeat in (1, 1 + args.repeat):
        command = [
            valgrind,
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            *_child_command(args, repeat),
        ]
        counts.append(callgrind.collected(_run_child(tree, command).stderr))
    return (counts[1] - counts[0]) / (args.repeat * args.functions * args.passes)


def compare_instructions(args: argparse.Namespace) -> None:
    trees = [HERE, *(Path(t).resolve() for t in args.against)]
    print(
        f"functions={args.functions} passes={args.passes}: instructions per "
        f"dispatch (callgrind, {args.repeat} runs)"
    )
    counts = {tree: instructions_per_dispatch(tree, args) for tree in trees}
    for tree, count in counts.items():
        label = f"{tree} ({_commit(tree)})"
        print(f"{label:<45} {count:8.0f}  ({count / counts[HERE]:.3f}x this tree)")


def compare(args: argparse.Namespace) -> None:
    trees = [HERE, *(Path(t).resolve() for t in args.against)]
    results: dict[Path, list[float]] = {tree: [] for tree in trees}
    for round_ in range(args.rounds):
        # Alternate, and swap who goes first each round.
        order = trees if round_ % 2 == 0 else list(reversed(trees))
        for tree in order:
            results[tree].append(run_in_tree(tree, args))
    dispatches = args.functions * args.passes
    print(
        f"functions={args.functions} passes={args.passes} dispatches={dispatches} "
        f"rounds={args.rounds} (median of {args.repeat} runs each), us/dispatch "
        f"({'CPU' if args.cpu else 'wall'} time), load {os.getloadavg()[0]:.1f}"
    )
    for tree, values in results.items():
        ordered = sorted(values)
        label = f"{tree} ({_commit(tree)})"
        print(
            f"{label:<45} min {ordered[0]:.3f}  median {statistics.median(ordered):.3f}"
            f"  max {ordered[-1]:.3f}   all: {' '.join(f'{v:.3f}' for v in values)}"
        )
    # A shared machine's load moves both trees of a round alike: the ratio
    # within each round is steadier than either figure.
    for tree in trees[1:]:
        ratios = sorted(
            mine / theirs
            for mine, theirs in zip(results[HERE], results[tree], strict=True)
        )
        print(
            f"this tree / {tree.name}, per round: median "
            f"{statistics.median(ratios):.3f} (range {ratios[0]:.3f}-{ratios[-1]:.3f})"
        )


def _commit(tree: Path) -> str:
    done = subprocess.run(
        ["git", "-C", str(tree), "describe", "--always", "--dirty"],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout.strip() or "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--functions", type=int, default=2000)
    parser.add_argument("--passes", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument(
        "--against",
        action="append",
        default=[],
        metavar="CHECKOUT",
        help="another passflow tree to measure, alternating with this one",
    )
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="with --against: count instructions per dispatch (valgrind)",
    )
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="time in CPU time (time.process_time), steadier on a shared machine",
    )
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child:
        import passflow

        clock = time.process_time if args.cpu else time.perf_counter
        per = measure_manager(args.functions, args.passes, args.repeat, clock)
        print(json.dumps({"us_per_dispatch": per, "passflow": passflow.__file__}))
        return
    if args.against:
        if args.instructions:
            compare_instructions(args)
        else:
            compare(args)
        return

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
