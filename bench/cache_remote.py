"""The remote cache tier on the benchmark module (1,000 functions,
`builtin.module(func.func(canonicalize,cse))`), with a real redis-server (or
nginx as an HTTP cache) started for the run.

A "CI" run fills the remote; then, side by side and alternated round by round:

  second machine   an empty local cache, the same remote and key, read-only
                   (its hits are read back with --cache-stats, untimed)
  mlir-opt         the peer, on the same module
  edited, down     one function edited (a local miss, so the remote is asked)
                   with the remote down (nothing listens on its port)
  edited, no remote
                   the same edit and local cache, without a remote

Each figure is the median of wall time and of CPU time (user and system of
the command and what it waited for). The commands run with Python's bytecode
cache on, as an installed passflow does. Printed: each median, the second
machine's hits, its ratio to mlir-opt, and what a dead remote adds. Run:

    .venv/bin/python bench/cache_remote.py --mlir-opt PATH [--backend redis|http]
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from opt_vs_xdsl import function_text  # noqa: E402
from remote_servers import free_port, http_cache, redis_server  # noqa: E402

PIPELINE = "builtin.module(func.func(canonicalize,cse))"
TOOL = [str(Path(sys.executable).parent / "passflow-opt")]
ENVIRONMENT = {
    name: value
    for name, value in os.environ.items()
    if name != "PYTHONDONTWRITEBYTECODE"
}


def timed(argv: list[str]) -> tuple[float, float, str]:
    """The wall and CPU seconds of `argv`, and what it printed."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        argv, capture_output=True, text=True, check=True, env=ENVIRONMENT
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mlir-opt", default="mlir-opt")
    parser.add_argument("--backend", choices=("redis", "http"), default="redis")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="passflow-remote-bench-"))
    try:
        _bench(work, args)
    finally:
        shutil.rmtree(work)


def _bench(work: Path, args: argparse.Namespace) -> None:
    source = work / "input.mlir"
    text = "".join(function_text(i) for i in range(args.functions))
    middle = f"func.func @f{args.functions // 2}("
    edited = text.replace(middle, f"func.func @edited{args.functions // 2}(")
    key = work / "team.key"
    key.write_text("bench-key-0123456789abcdef")
    key.chmod(0o600)
    start = redis_server if args.backend == "redis" else http_cache
    load = os.getloadavg()[0]
    with start(work) as url:
        common = [str(source), f"--pass-pipeline={PIPELINE}", "-o", os.devnull]
        remote = [f"--cache-remote={url}", f"--cache-remote-key-file={key}"]
        down_url = (
            f"redis://127.0.0.1:{free_port()}/0"
            if args.backend == "redis"
            else f"http://127.0.0.1:{free_port()}/team"
        )
        down = [f"--cache-remote={down_url}", f"--cache-remote-key-file={key}"]
        source.write_text(text)
        ci = work / "ci"
        subprocess.run([*TOOL, *common, f"--cache={ci}", *remote], check=True)
        wall: dict[str, list[float]] = {}
        cpu: dict[str, list[float]] = {}
        hits = ""
        for round_ in range(args.rounds):
            laptop = work / f"laptop{round_}"
            source.write_text(text)
            plan: list[tuple[str, list[str]]] = [
                ("second machine", [*TOOL, *common, f"--cache={laptop}", *remote,
                                    "--cache-remote-read-only"]),
                ("mlir-opt", [args.mlir_opt, *common]),
            ]  # fmt: skip
            for name, command in plan:
                seconds, cpu_seconds, _ = timed(command)
                wall.setdefault(name, []).append(seconds)
                cpu.setdefault(name, []).append(cpu_seconds)
            stats = timed([*TOOL, f"--cache={laptop}", "--cache-stats"])[2]
            hits = next(line for line in stats.splitlines() if "lookups" in line)
            source.write_text(edited)
            for name, flags in (("edited, down", down), ("edited, no remote", [])):
                local = work / f"local{round_}-{len(flags)}"
                shutil.copytree(ci, local)
                seconds, cpu_seconds, _ = timed(
                    [*TOOL, *common, f"--cache={local}", *flags]
                )
                wall.setdefault(name, []).append(seconds)
                cpu.setdefault(name, []).append(cpu_seconds)
    after = os.getloadavg()[0]
    median = {name: statistics.median(values) for name, values in wall.items()}
    cpu_median = {name: statistics.median(values) for name, values in cpu.items()}
    print(f"{args.functions} functions, {PIPELINE}, {args.backend} remote, "
          f"median of {args.rounds} rounds (s), load {load:.1f} -> {after:.1f}")  # fmt: skip
    print(f"  {'':<20} {'wall':>7} {'cpu':>7}")
    for name, value in median.items():
        print(f"  {name:<20} {value:7.3f} {cpu_median[name]:7.3f}")
    print(f"second machine: {hits}")
    second = "second machine"
    print(
        f"second machine / mlir-opt: {median[second] / median['mlir-opt']:.2f}x wall, "
        f"{cpu_median[second] / cpu_median['mlir-opt']:.2f}x cpu  [<= 2]"
    )
    added = median["edited, down"] - median["edited, no remote"]
    added_cpu = cpu_median["edited, down"] - cpu_median["edited, no remote"]
    print(f"a dead remote adds {added:+.3f} s wall, {added_cpu:+.3f} s cpu  [<= 0.1]")


if __name__ == "__main__":
    main()
