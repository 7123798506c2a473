"""The remote cache tier on the benchmark module (1,000 functions,
`builtin.module(func.func(canonicalize,cse))`), with a real redis-server (or
nginx as an HTTP cache) started for the run.

A "CI" run fills the remote; then, side by side and alternated round by round:
a second "machine" (an empty local cache, the same remote and key,
read-only), mlir-opt on the same module (the peer), a warm local run with
the remote down (nothing listens on its port) and the same warm run without a
remote. Printed: each median, the second machine's hits, its ratio to
mlir-opt, and what a dead remote adds. Run:

    .venv/bin/python bench/cache_remote.py --mlir-opt PATH [--backend redis|http]
"""

from __future__ import annotations

import argparse
import os
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
TOOL = [
    sys.executable,
    "-c",
    "import sys; from passflow.tools.opt_client import main; sys.exit(main())",
]


def timed(argv: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    return time.perf_counter() - start, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--mlir-opt", default="mlir-opt")
    parser.add_argument("--backend", choices=("redis", "http"), default="redis")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="passflow-remote-bench-"))
    source = work / "input.mlir"
    source.write_text("".join(function_text(i) for i in range(args.functions)))
    key = work / "team.key"
    key.write_text("bench-key-0123456789abcdef")
    key.chmod(0o600)
    start = redis_server if args.backend == "redis" else http_cache
    with start(work) as url:
        common = [str(source), f"--pass-pipeline={PIPELINE}", "-o", os.devnull]
        remote = [f"--cache-remote={url}", f"--cache-remote-key-file={key}"]
        subprocess.run([*TOOL, *common, f"--cache={work / 'ci'}", *remote], check=True)
        down = [
            f"--cache-remote=redis://127.0.0.1:{free_port()}/0",
            f"--cache-remote-key-file={key}",
        ]
        warm = [*TOOL, *common, f"--cache={work / 'ci'}"]
        samples: dict[str, list[float]] = {
            "second machine": [],
            "mlir-opt": [],
            "warm, remote down": [],
            "warm, no remote": [],
        }
        hits = ""
        for round_ in range(args.rounds):
            laptop = work / f"laptop{round_}"
            seconds, _ = timed(
                [*TOOL, str(source), f"--pass-pipeline={PIPELINE}", f"--cache={laptop}",
                 *remote, "--cache-remote-read-only", "-o", os.devnull]
            )  # fmt: skip
            samples["second machine"].append(seconds)
            out = timed([*TOOL, f"--cache={laptop}", "--cache-stats"])[1]
            hits = next(line for line in out.splitlines() if line.startswith("lookups"))
            samples["mlir-opt"].append(
                timed(
                    [
                        args.mlir_opt,
                        str(source),
                        f"--pass-pipeline={PIPELINE}",
                        "-o",
                        os.devnull,
                    ]
                )[0]
            )
            samples["warm, remote down"].append(timed([*warm, *down])[0])
            samples["warm, no remote"].append(timed(warm)[0])
    medians = {name: statistics.median(values) for name, values in samples.items()}
    print(f"{args.functions} functions, {PIPELINE}, {args.backend} remote, "
          f"{args.rounds} rounds, load {os.getloadavg()[0]:.1f}")  # fmt: skip
    for name, value in medians.items():
        print(f"{name:<20} median {value:6.3f} s")
    print(f"second machine: {hits}")
    print(
        f"second machine / mlir-opt: {medians['second machine'] / medians['mlir-opt']:.2f}x; "
        f"a dead remote adds {medians['warm, remote down'] - medians['warm, no remote']:+.3f} s"
    )


if __name__ == "__main__":
    main()
