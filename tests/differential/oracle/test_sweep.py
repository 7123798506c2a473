"""Generated programs, each judged by passes in turn, in parallel (`sweep`):
mlir-opt accepts every output, and each optimisation keeps `@main`'s results.

`make test` sweeps `SWEEP_PROGRAMS` (2) programs over two passes on two forked
workers, so that the parallel path is the one tested; `make fuzz` sweeps 10,000
(`500 x FUZZ_SCALE`) over all of `passes.PASSES`, `SWEEP_SHARE` passes each, on one
worker per CPU, and the session's summary prints what it covered
(docs/conformance.md).
"""

from __future__ import annotations

import os
from pathlib import Path

from .inputs import FIRST_SEED, LONG, SWEEP_PROGRAMS, SWEEP_SHARE
from .passes import PASSES
from .summary import SWEEPS
from .sweep import jobs, passes_of, sweep

_PASSES = PASSES if LONG else tuple(p for p in PASSES if p.name in ("cse", "sccp"))


def test_every_output_is_valid_and_keeps_its_results() -> None:
    log = os.environ.get("PASSFLOW_ORACLE_LOG")
    tally = sweep(
        FIRST_SEED,
        SWEEP_PROGRAMS,
        workers=jobs() if LONG else 2,
        log=Path(log) if log else None,
        block=25 if LONG else 1,
        passes=_PASSES,
        share=SWEEP_SHARE,
    )
    SWEEPS.append(tally)
    chosen = [
        pass_
        for seed in range(FIRST_SEED, FIRST_SEED + SWEEP_PROGRAMS)
        for pass_ in passes_of(seed, SWEEP_SHARE, _PASSES)
    ]
    assert tally.programs == SWEEP_PROGRAMS
    assert tally.outputs_judged == len(chosen) - len(tally.findings)
    assert tally.runs_after == sum(1 for p in chosen if p.optimisation)
    assert not tally.findings, (
        "\n\n".join(
            f"{finding.origin} ({finding.pass_name}): {finding.kind}: {finding.detail}"
            for finding in tally.findings[:3]
        )
        + f"\n({len(tally.findings)} in all; {tally.line()})"
    )


def test_consecutive_programs_take_every_pass_in_turn() -> None:
    names = [p.name for p in PASSES]
    for share in (1, 3, len(PASSES)):
        chosen = [
            pass_.name
            for seed in range(1000, 1000 + len(PASSES))
            for pass_ in passes_of(seed, share, PASSES)
        ]
        assert sorted(chosen) == sorted(names * share)
