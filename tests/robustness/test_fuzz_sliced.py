"""Sliced runs against whole runs on generated text: the same exit status,
stdout and stderr, byte for byte, for every valid spelling of a module the
generator makes (`mlir_variants.modules`) and for near misses of them; the
valid ones also through the result cache (`--cache`), cold and warm.

passflow-opt runs each input twice in this process: whole and serially
(`--mlir-disable-threading`), and sliced on the process executor with an
unbounded serial budget, so that the parent runs every batch itself (the
batches, their boundaries and references, the shell and the stitching are
those of a forked run; `tests/test_sliced.py` forks). The pipelines are a
nested one, one with a module pass after the nest, and one that fails in
every function. Each test also checks that most valid inputs really ran
sliced, so a scan that gives up on everything would not pass.
"""

from __future__ import annotations

import contextlib
import gc
import io
import math
import tempfile
from collections import Counter
from collections.abc import Generator
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import event, given, settings

from passflow.executors import ProcessExecutor, make_executor
from passflow.sliced import Fallback, SlicedOutcome
from passflow.tools import chunk, opt, pass_manager_options, sliced_options

from .mlir_variants import modules, near_misses
from .support import fuzz_settings, time_bound

SLICED_DEADLINE = timedelta(seconds=60)
"""Each example runs passflow-opt six times: a loaded machine may take more
than the suite's usual deadline (hangs are still caught by `time_bound`)."""

SLICED_LONG_FACTOR = 10.0
"""`make fuzz` runs 10 times its scale here: 100 x 20 x 10 valid inputs,
each through the three pipelines and twice through the cache, and 75 x 20 x
10 near misses through the three pipelines: 145,000 comparisons. `make test`
runs 725 of them (each example runs passflow-opt six times, the slowest
examples of the suite: more would keep it from ten minutes)."""

PIPELINES = [
    "builtin.module(func.func(canonicalize,cse))",
    "builtin.module(func.func(cse),symbol-privatize)",
    "builtin.module(func.func(test-pass-failure{gen-diagnostics=true}))",
]


@contextlib.contextmanager
def sliced_in_process(seen: Counter[str]) -> Generator[None]:
    """passflow-opt's process executor runs every batch in this process, and
    slices inputs of any size (`SMALL_INPUT` would run these small ones
    whole); `seen` counts sliced runs and fallbacks."""

    def executor(
        kind: str, jobs: int | None = None, scheduler: str | None = None
    ) -> object:
        if kind == "process":
            return ProcessExecutor(2, serial_budget=math.inf)
        return make_executor(kind, jobs, scheduler)

    def recording(*args: object, **kwargs: object) -> SlicedOutcome | Fallback:
        outcome = real(*args, **kwargs)  # type: ignore[arg-type]
        seen["sliced" if isinstance(outcome, SlicedOutcome) else "fallback"] += 1
        return outcome

    real = chunk.run_sliced_on
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pass_manager_options, "make_executor", executor)
        patch.setattr(chunk, "run_sliced_on", recording)
        patch.setattr(sliced_options, "SMALL_INPUT", 0)
        yield


def run_tool(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    collecting = gc.isenabled()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = opt.main(argv)
    finally:
        if collecting:  # passflow-opt turns the collector off for its process
            gc.enable()
    return status, out.getvalue(), err.getvalue()


def compare(
    path: Path, text: str, seen: Counter[str], cache: Path | None = None
) -> None:
    """`text` through every pipeline, whole and sliced (and, with a `cache`
    directory, sliced with the result cache, cold then warm, for the first
    pipeline): the same result."""
    path.write_bytes(text.encode("utf-8", "surrogatepass"))
    for pipeline in PIPELINES:
        common = [str(path), f"--pass-pipeline={pipeline}"]
        common.append("--allow-unregistered-dialect")
        with time_bound(text):
            whole = run_tool([*common, "--mlir-disable-threading"])
            before = seen["sliced"]
            with sliced_in_process(seen):
                sliced = run_tool([*common, "--executor=process", "--jobs=2"])
        assert sliced == whole, (pipeline, text)
        if cache is not None and pipeline == PIPELINES[0]:
            with time_bound(text), sliced_in_process(seen):
                for _ in ("cold", "warm"):
                    cached = run_tool([*common, f"--cache={cache}"])
                    assert cached == whole, (pipeline, "cache", text)
        if seen["sliced"] > before:
            event(f"sliced, status {whole[0]}")
        seen["status 0" if whole[0] == 0 else "status 1"] += 1


def test_valid_spellings_run_the_same_sliced_and_whole() -> None:
    seen: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "in.mlir"

        @settings(
            fuzz_settings(100, long_factor=SLICED_LONG_FACTOR),
            deadline=SLICED_DEADLINE,
        )
        @given(modules())
        def check(text: str) -> None:
            compare(path, text, seen, Path(directory) / "cache")

        check()
    # Most generated modules are valid and most valid runs slice.
    assert seen["status 0"] > seen["status 1"] / 3, seen
    assert seen["sliced"] > seen["fallback"], seen


def test_near_misses_run_the_same_sliced_and_whole() -> None:
    seen: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "in.mlir"

        @settings(
            fuzz_settings(75, long_factor=SLICED_LONG_FACTOR),
            deadline=SLICED_DEADLINE,
        )
        @given(near_misses())
        def check(text: str) -> None:
            compare(path, text, seen)

        check()
    assert seen["sliced"] > 0, seen
