"""Bisection: the first pass execution after which the failure shows.

LLVM's `-opt-bisect-limit` for pipelines: pass executions are numbered as
`--mlir-debug-counter=pass-execution-count=N` numbers them (serially, nested
pipeline adaptors included), and a binary search over N finds the smallest
limit at which the test holds. That execution — a pass on one op — is where the
failure starts. With `jobs` > 1 each round tries that many limits at once, so
the search takes log(jobs + 1) of the range per round instead of one bit.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace

from passflow import ir
from passflow.reduce.candidates import CandidateRunner
from passflow.reduce.interesting import (
    Interestingness,
    NotInterestingError,
    RunSettings,
)
from passflow.reduce.outcome import Candidate, CandidateMaker, Execution

__all__ = ["Bisection", "bisect"]

_NO_LIMIT = 1 << 62


@dataclass(frozen=True)
class Bisection:
    """The first pass execution (1-based, of `total`) after which the test
    holds, and what finding it cost."""

    index: int
    total: int
    execution: Execution
    tests: int
    seconds: float


def _with_limit(candidate: Candidate, limit: int, *, in_place: bool) -> Candidate:
    """`candidate` with an execution limit; the run changes IR given as a
    module, so a copy of it unless in a forked trial."""
    copy = candidate.ir
    if not in_place and not isinstance(copy, str):
        copy = ir.clone(copy)
    return replace(candidate, ir=copy, execution_limit=limit)


def _limited(candidate: Candidate, limit: int) -> CandidateMaker:
    return lambda in_place: _with_limit(candidate, limit, in_place=in_place)


def bisect(
    candidate: Candidate,
    test: Interestingness,
    settings: RunSettings,
    *,
    jobs: int = 1,
    timeout: float | None = None,
) -> Bisection:
    """Bisect `candidate`'s pipeline; raises `NotInterestingError` if the whole
    run does not show the failure or the input shows it before any pass."""
    started = time.monotonic()
    runner = CandidateRunner(test, jobs, timeout)
    total = settings.run(_with_limit(candidate, _NO_LIMIT, in_place=False)).executions
    ends = [_limited(candidate, n) for n in (0, total)]
    if runner.first_interesting([ends[1]]) is None:
        raise NotInterestingError(
            f"the input does not show the failure: no {test.description}"
        )
    if runner.first_interesting([ends[0]]) is not None:
        raise NotInterestingError(
            f"the failure shows before any pass runs ({test.description}), "
            "so no pass execution causes it"
        )
    low, high = 0, total  # the test fails at `low` and holds at `high`
    while high - low > 1:
        step = max(1, (high - low) // (jobs + 1))
        limits = list(range(low + step, high, step))[:jobs]
        found = runner.first_interesting(_limited(candidate, n) for n in limits)
        if found is None:
            low = limits[-1]
        else:
            high = limits[found]
            low = limits[found - 1] if found > 0 else low
    execution = settings.run(
        _with_limit(candidate, high, in_place=False)
    ).last_execution
    assert execution is not None  # `high` >= 1 executions ran
    return Bisection(high, total, execution, runner.tests, time.monotonic() - started)
