"""Each optimisation keeps the meaning of generated programs: `@main` returns the
same for every argument before and after the pass, run by MLIR's ExecutionEngine
(docs/conformance.md, "The validity oracle").

`make test` runs `PROGRAMS` programs through every optimisation of
`passes.PASSES`; `make fuzz` runs `PROGRAMS_LONG` (other seeds each scale).
"""

from __future__ import annotations

from functools import cache

import pytest

from .inputs import passflow_output, programs
from .jit import Result, results
from .passes import PASSES, OraclePass

OPTIMISATIONS = tuple(p for p in PASSES if p.optimisation)


def _programs() -> list[tuple[str, str]]:
    return [(item.origin, item.text) for item in programs()]


@cache
def _before() -> list[Result]:
    return results([text for _, text in _programs()])


@cache
def _after() -> dict[str, list[Result]]:
    """Every optimisation's outputs, run in one batch (one child process)."""
    outputs = [
        _output(pass_, text) for pass_ in OPTIMISATIONS for _, text in _programs()
    ]
    found = results(outputs)
    count = len(_programs())
    return {
        pass_.name: found[index * count : (index + 1) * count]
        for index, pass_ in enumerate(OPTIMISATIONS)
    }


def _output(pass_: OraclePass, text: str) -> str:
    outcome = passflow_output(pass_.element, text)
    return text if outcome.output is None else outcome.output


def test_the_programs_run() -> None:
    # The reference itself: every program runs, and they compute different things.
    found = _before()
    failed = [
        (origin, result)
        for (origin, _), result in zip(_programs(), found, strict=True)
        if isinstance(result, str)
    ]
    assert not failed, failed[:5]
    assert len(set(found)) > len(found) // 2


@pytest.mark.parametrize("pass_", OPTIMISATIONS, ids=[p.name for p in OPTIMISATIONS])
def test_the_pass_keeps_every_result(pass_: OraclePass) -> None:
    problems: list[str] = []
    for origin, text in _programs():
        outcome = passflow_output(pass_.element, text)
        if outcome.output is None:
            problems.append(f"{origin}: passflow-opt failed: {outcome.details}")
    for (origin, text), was, now in zip(
        _programs(), _before(), _after()[pass_.name], strict=True
    ):
        if was != now:
            output = _output(pass_, text)
            problems.append(
                f"{origin}: {pass_.element} changed the result from {was} to {now}"
                f"\n--- before:\n{text}\n--- after:\n{output}"
            )
    assert not problems, "\n\n".join(problems[:3]) + f"\n({len(problems)} in all)"
