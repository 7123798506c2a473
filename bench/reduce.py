"""passflow-reduce on a seeded bug: one crashing function among many.

Generates a module of N functions of 20 arith ops (21 ops each with the
function's constant), one of which holds the op `test-pass-crash-on-op`
crashes on, and reduces the four-pass pipeline and the module with 1 job and
with 2, in the same process of measurement. Prints, per job count, the time,
the number of tests, the reduced size, and the ratio of the 2-job time to the
1-job time. The issue's target: at 1,000 functions, one function of at most
five ops and one pass, within 60 s. Run:

    .venv/bin/python bench/reduce.py [--functions 1000] [--jobs 1 2]
"""

from __future__ import annotations

import argparse
import time

from passflow import ir
from passflow.reduce import Candidate, Reducer, RunSettings, default_test, parse_input
from passflow.testing.seeded_bugs import PIPELINE, seeded_module


def main() -> None:
    parser = argparse.ArgumentParser(description="passflow-reduce on a seeded bug")
    parser.add_argument("--functions", type=int, default=1000)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    functions: int = args.functions
    text = seeded_module(functions, culprit=functions * 2 // 3)
    print(f"seeded crash in 1 of {functions} functions, pipeline {PIPELINE}")
    times: dict[int, float] = {}
    for jobs in args.jobs:
        started = time.perf_counter()
        current = parse_input(text, "seeded.mlir")
        test = default_test(Candidate(ir.clone(current.top), PIPELINE), RunSettings())
        reducer = Reducer(test, jobs=jobs)
        reduction = reducer.reduce(current, PIPELINE, "seeded.mlir", checked=True)
        times[jobs] = time.perf_counter() - started
        print(
            f"jobs={jobs}: {times[jobs]:6.1f} s (parse and first run included), "
            f"{reduction.tests} tests, {reduction.original} -> {reduction.reduced}"
        )
    if 1 in times:
        for jobs, seconds in times.items():
            if jobs != 1:
                print(f"jobs={jobs} vs jobs=1: {times[1] / seconds:.2f}x")


if __name__ == "__main__":
    main()
