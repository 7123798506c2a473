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

import pytest

from ..tools import Outcome
from . import sweep as sweep_module
from .inputs import FIRST_SEED, LONG, SWEEP_PROGRAMS, SWEEP_SHARE
from .passes import PASSES, OraclePass
from .summary import SWEEPS
from .sweep import check_block, jobs, passes_of, sweep

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


def test_a_wrong_output_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    # The sweep's own judges: passflow-opt's output replaced by one that
    # computes something else, one that does not verify, and a failure.
    real = sweep_module.run_passflow_text
    checksum = "arith.constant 17 : i64"
    wrong = {
        "cse": (checksum, checksum.replace("17", "18")),
        # A result type `func.return` does not give.
        "sccp": ("-> i64 attributes", "-> i32 attributes"),
    }

    def run(argv: list[str], text: str) -> Outcome:
        outcome = real(argv, text)
        for name, (old, new) in wrong.items():
            if outcome.output is not None and f"({name})" in " ".join(argv):
                assert old in outcome.output
                return Outcome(outcome.output.replace(old, new), None)
        return outcome

    monkeypatch.setattr(sweep_module, "run_passflow_text", run)
    failing = OraclePass("no-such-pass", "no-such-pass")
    tally = check_block(range(0, 3), (*_PASSES, failing), share=1)
    found = {
        (finding.origin, finding.pass_name, finding.kind) for finding in tally.findings
    }
    assert found == {
        ("program:0", "cse", "different"),
        ("program:1", "sccp", "invalid"),
        ("program:1", "sccp", "different"),  # MLIR cannot run it either
        ("program:2", "no-such-pass", "failed"),
    }
