"""A sample of xDSL's shipped lit suite passes with `xdsl-opt` pointing at
passflow-xdsl-opt (the whole suite, beside the real xdsl-opt: `make xdsl-suite`)."""

from __future__ import annotations

from pathlib import Path

from .suite import PASSFLOW, SAMPLE, SUITE, run_suite


def test_sample_files_exist() -> None:
    missing = [name for name in SAMPLE if not (SUITE / name).is_file()]
    assert missing == []


def test_sample_passes_with_passflow_xdsl_opt(tmp_path: Path) -> None:
    results = run_suite(tmp_path, PASSFLOW, SAMPLE)
    failed = {name: result for name, result in results.items() if result != "PASS"}
    assert failed == {}
    assert sorted(results) == sorted(SAMPLE)


def test_the_link_is_what_lit_runs(tmp_path: Path) -> None:
    """The scratch folder's `xdsl-opt` is the program under test, and lit's
    output stays in the scratch folder, not in site-packages."""
    results = run_suite(tmp_path, Path("/bin/false"), ["version.mlir"])
    assert results == {"version.mlir": "FAIL"}
    assert (tmp_path / "bin" / "xdsl-opt").resolve() == Path("/bin/false").resolve()
    assert not (SUITE / "Output").exists()
