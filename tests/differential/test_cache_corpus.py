"""The result cache on xDSL's shipped filecheck corpus: every run with
`--cache`, cold then warm, prints byte for byte what the run without it
prints (stdout, stderr, exit status). docs/cache.md gives the counts.

Two sweeps: every `.mlir` file of the corpus through
`builtin.module(func.func(canonicalize,cse))`, in a process of its own
(`cache_driver.py`, where the warm path answers), and every applicable RUN
line's own pipeline (xDSL's passes, mostly module passes the cache lets run
whole), in this process. `make test` runs a sample of each, spread over the
corpus; `PASSFLOW_FUZZ=long` (`make fuzz`) runs all of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from .cache_driver import run
from .corpus import CORPUS, Case, discover
from .tools import passflow_pipeline

T = TypeVar("T")

WHOLE = os.environ.get("PASSFLOW_FUZZ", "") == "long"
"""Run the whole corpus, not a sample."""

SAMPLE = 40
"""Files, and RUN lines, that `make test` runs."""

FILES = sorted(CORPUS.rglob("*.mlir"))
CASES, _ = discover()


def spread(items: Sequence[T]) -> list[T]:
    """All of `items` for the whole corpus, else `SAMPLE` of them spread
    evenly over it (every part of the corpus has its say)."""
    if WHOLE or len(items) <= SAMPLE:
        return list(items)
    step = len(items) / SAMPLE
    return [items[int(i * step)] for i in range(SAMPLE)]


def test_every_file_runs_the_same_cold_and_warm(tmp_path: Path) -> None:
    files = spread(FILES)
    assert len(files) >= min(SAMPLE, 500 if WHOLE else 0)
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).with_name("cache_driver.py")),
            str(tmp_path / "cache"),
            "builtin.module(func.func(canonicalize,cse))",
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        timeout=3600,
        check=True,
        env={k: v for k, v in os.environ.items() if k != "PASSFLOW_CACHE_DIR"},
    )
    report = json.loads(done.stdout)
    print(f"cache corpus: {report}")
    assert report["files"] == len(files)
    assert report["different"] == []
    # The warm path answers every file whose every piece the full path
    # found; the others ran whole (a parse or verifier error, a chunk the
    # scan cannot cut, duplicate symbols...) and stored nothing, or missed.
    assert report["warm_answers"] > 0
    assert report["unanswered"] == []
    assert len(report["unstable"]) <= 2  # docs/cache.md names them


@pytest.mark.parametrize("case", spread(CASES), ids=lambda case: case.id)
def test_every_run_line_runs_the_same_cold_and_warm(
    case: Case, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PASSFLOW_CACHE_DIR", raising=False)
    argv = [
        str(case.input),
        f"--pass-pipeline={passflow_pipeline(case.pipeline)}",
        "--mlir-disable-threading",
    ]
    argv += ["--split-input-file"] * case.split
    argv += ["--allow-unregistered-dialect"] * case.allow_unregistered
    argv += ["--mlir-print-op-generic"] * case.generic
    plain = run(argv)
    if run(argv) != plain:  # `transform-interpreter-match` prints addresses
        pytest.skip("two runs without the cache print different text")
    cache = f"--cache={tmp_path / 'cache'}"
    assert run([*argv, cache]) == plain
    assert run([*argv, cache]) == plain
