"""Every pass on many generated programs, in parallel (`sweep`): mlir-opt accepts
every output, and each optimisation keeps `@main`'s results.

`make test` sweeps `SWEEP_PROGRAMS` (2) programs with two passes on two forked
workers, so that the parallel path is the one tested; `make fuzz` sweeps 10,000
(`500 x FUZZ_SCALE`) with all of `passes.PASSES` on one worker per CPU, and the
session's summary prints what it covered (docs/conformance.md).
"""

from __future__ import annotations

import os
from pathlib import Path

from .inputs import FIRST_SEED, LONG, SWEEP_PROGRAMS
from .passes import PASSES
from .summary import SWEEPS
from .sweep import jobs, sweep

_SHORT = tuple(p for p in PASSES if p.name in ("cse", "sccp"))


def test_every_output_is_valid_and_keeps_its_results() -> None:
    log = os.environ.get("PASSFLOW_ORACLE_LOG")
    tally = sweep(
        FIRST_SEED,
        SWEEP_PROGRAMS,
        workers=jobs() if LONG else 2,
        log=Path(log) if log else None,
        block=25 if LONG else 1,
        passes=PASSES if LONG else _SHORT,
    )
    SWEEPS.append(tally)
    assert tally.programs == SWEEP_PROGRAMS
    assert tally.outputs_judged == SWEEP_PROGRAMS * tally.passes
    optimisations = sum(1 for p in PASSES if p.optimisation) if LONG else 2
    assert tally.runs_after == SWEEP_PROGRAMS * optimisations
    assert not tally.findings, (
        "\n\n".join(
            f"{finding.origin} ({finding.pass_name}): {finding.kind}: {finding.detail}"
            for finding in tally.findings[:3]
        )
        + f"\n({len(tally.findings)} in all; {tally.line()})"
    )
