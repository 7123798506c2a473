"""xDSL's own filecheck tests, run through xdsl-opt and passflow-opt, compared.

One test per applicable RUN line (`path:line` of xDSL's `tests/filecheck/`); the
counts over all of them are printed at the end of the session (conftest.py).
How it works and the current counts: docs/differential.md.
"""

from __future__ import annotations

import pytest
from xdsl.transforms import get_all_passes
from xdsl.utils.arg_spec import parse_pipeline

from passflow import registry

from .corpus import CORPUS, Case, discover
from .harness import run_case
from .known import CAUSES, KNOWN
from .summary import SUMMARY
from .tools import NATIVE, passflow_argv

CASES, NOT_APPLICABLE = discover()
SUMMARY.not_applicable = NOT_APPLICABLE


def test_the_corpus_is_there() -> None:
    """The xdsl wheel ships its tests; an empty corpus would pass vacuously."""
    assert CORPUS.is_dir(), CORPUS
    assert len(CASES) > 200, f"only {len(CASES)} applicable RUN lines in {CORPUS}"


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_case(case: Case) -> None:
    result = run_case(case)
    SUMMARY.cases.append(result)
    assert not result.problems, "\n".join(result.problems)


def test_every_table_entry_names_an_applicable_run_line() -> None:
    ids = {case.id for case in CASES}
    unknown = sorted({entry.case for entry in KNOWN} - ids)
    assert not unknown, (
        f"tests/differential/known.py names RUN lines not run: {unknown}"
    )
    unused = [cause.reason for cause in CAUSES if all(e.cause != cause for e in KNOWN)]
    assert not unused, f"causes no entry uses: {unused}"


def test_every_pass_of_the_corpus_has_a_passflow_name() -> None:
    """Each xDSL pass name resolves in passflow: natively (`NATIVE`) or through
    the xDSL adapter."""
    xdsl_names = get_all_passes()
    missing: set[str] = set()
    for case in CASES:
        for spec in parse_pipeline(case.pipeline):
            if spec.name not in xdsl_names:
                continue  # xdsl-opt rejects it too; the case compares the errors
            name = NATIVE.get(spec.name, spec.name)
            if registry.lookup(name) is None:
                missing.add(spec.name)
    assert not missing, sorted(missing)


def test_native_passes_replace_xdsl_ones_by_their_passflow_names() -> None:
    case = next(c for c in CASES if c.pipeline == "licm")
    assert "--pass-pipeline=builtin.module(loop-invariant-code-motion)" in (
        passflow_argv(case)
    )
