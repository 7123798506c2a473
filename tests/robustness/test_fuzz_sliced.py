"""Sliced runs against whole runs on generated text: the same exit status,
stdout and stderr, byte for byte, for every valid spelling of a module the
generator makes (`mlir_variants.modules`) and for near misses of them; the
valid ones also through the result cache (`--cache`), cold and warm; and
through the cache again after an edit (`mlir_variants.edits`: a function's
body, an alias, a line above (also under pipelines that report diagnostics in
some functions or all, and with `--mlir-print-debuginfo`), two ops swapped,
an option, a flag, a plugin's source, an installed xDSL file), against a run
without it: a line added moves the functions below it, which hit with their
diagnostics re-based.

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
import shutil
import tempfile
from collections import Counter
from collections.abc import Generator
from datetime import timedelta
from pathlib import Path

import pytest
import xdsl
from hypothesis import event, given, settings

from passflow import registry
from passflow.cache import sources
from passflow.cache.store import ResultCache
from passflow.executors import ProcessExecutor, make_executor
from passflow.sliced import Fallback, SlicedOutcome
from passflow.sliced import run as sliced_run
from passflow.tools import (
    opt,
    pass_manager_options,
    plugin_options,
    sliced_options,
)

from .mlir_variants import Edit, edits, modules, near_misses
from .support import fuzz_settings, time_bound

SLICED_DEADLINE = timedelta(seconds=60)
"""Each example runs passflow-opt six times: a loaded machine may take more
than the suite's usual deadline (hangs are still caught by `time_bound`)."""

VALID_EXAMPLES = 40
NEAR_MISS_EXAMPLES = 30
SLICED_LONG_FACTOR = 25.0
"""`make fuzz` runs 25 times its scale here: 40 x 20 x 25 valid inputs,
each through the three pipelines and twice through the cache, and 30 x 20 x
25 near misses through the three pipelines: 145,000 comparisons. `make test`
runs 290 of them (each example runs passflow-opt six times, the slowest
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

    real = sliced_run.run_sliced_on
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pass_manager_options, "make_executor", executor)
        patch.setattr(sliced_run, "run_sliced_on", recording)
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
            fuzz_settings(VALID_EXAMPLES, long_factor=SLICED_LONG_FACTOR),
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
            fuzz_settings(NEAR_MISS_EXAMPLES, long_factor=SLICED_LONG_FACTOR),
            deadline=SLICED_DEADLINE,
        )
        @given(near_misses())
        def check(text: str) -> None:
            compare(path, text, seen)

        check()
    assert seen["sliced"] > 0, seen


EDIT_EXAMPLES = 50
"""Edited modules in `make test`; `make fuzz` runs 10,000 (`EDIT_LONG_FACTOR`)."""

EDIT_LONG_FACTOR = 10.0

EDIT_PIPELINES = [
    "builtin.module(func.func({tag}canonicalize{options},cse))",
    "builtin.module(func.func({tag}canonicalize{options},"
    "test-pass-failure{{gen-diagnostics=true}}))",
]
"""One pipeline that prints the IR, one that reports an error at every
function (so that a stale position shows)."""

OPTION_EDITS = [
    "{max-iterations=1}",
    "{top-down=false}",
    "{region-simplify=disabled}",
    "{test-convergence=true}",
]

FLAG_EDITS = [
    "--mlir-disable-threading",
    "--split-input-file",
    "--verify-each=false",
    "--mlir-print-op-generic",
    "--mlir-print-debuginfo",
]

DIAGNOSTIC_PIPELINES = [
    "builtin.module(func.func(test-pass-failure{gen-diagnostics=true}))",
    "builtin.module(func.func(canonicalize,test-pass-crash-on-op{op=func.call}))",
    "builtin.module(func.func(cse,test-pass-crash-on-op{op=arith.constant}))",
]
"""Pipelines that report diagnostics in some functions or all (`line-diagnostics`)."""

EDIT_PLUGIN = """
from xdsl.dialects.builtin import UnitAttr

from passflow import OperationPass, register_pass


@register_pass
class Tag(OperationPass):
    argument = "test-fuzz-edit-tag"
    op_name = "func.func"

    def run_on_operation(self):
        self.get_operation().attributes["tagged"] = UnitAttr()
"""


@contextlib.contextmanager
def registry_restored() -> Generator[None]:
    """What a plugin loaded in the block registers is gone after it."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(registry, "_plugins", registry.loaded_plugins())
        patch.setattr(registry, "_passes", dict(registry._passes))  # pyright: ignore[reportPrivateUsage]
        patch.setattr(plugin_options, "_registered", set[object]())
        yield


def _hits(cache: Path) -> int:
    with contextlib.closing(ResultCache(cache)) as store:
        return store.stats().hits


class EditRun:
    """One test's files: the input, the cache, the plugin and a copy of
    xDSL's source that the key reads in place of the installed one."""

    def __init__(self, directory: Path) -> None:
        self.path = directory / "in.mlir"
        self.cache = directory / "cache"
        self.plugin = directory / "edit_plugin.py"
        self.plugin.write_text(EDIT_PLUGIN)
        self.xdsl = directory / "xdsl"
        shutil.copytree(
            Path(xdsl.__file__ or ".").parent,
            self.xdsl,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
        self.xdsl_files = sorted(self.xdsl.rglob("*.py"))
        self.edits = 0

    def check(self, edit: Edit, seen: Counter[str]) -> None:
        """Run `edit.text` cached, apply the edit, run it cached twice (cold,
        warm) and uncached: the same status, stdout and stderr. An edit of
        code (a plugin, xDSL) hits nothing."""
        self.path.write_text(edit.text)
        tag = "test-fuzz-edit-tag," if edit.kind == "plugin" else ""
        plugin = [f"--load-pass-plugin={self.plugin}"] if tag else []
        template = EDIT_PIPELINES[edit.choice // 7 % len(EDIT_PIPELINES)]
        pipeline = template.format(tag=tag, options="")
        flags = ["--allow-unregistered-dialect", *plugin]
        if edit.kind == "line-diagnostics":
            pipeline = DIAGNOSTIC_PIPELINES[edit.choice % len(DIAGNOSTIC_PIPELINES)]
        elif edit.kind == "line-debuginfo":
            flags.append("--mlir-print-debuginfo")
        self._cached(pipeline, flags, seen)
        self.edits += 1
        if edit.kind == "option":
            options = OPTION_EDITS[edit.choice % len(OPTION_EDITS)]
            pipeline = template.format(tag=tag, options=options)
        elif edit.kind == "flag":
            flags.append(FLAG_EDITS[edit.choice % len(FLAG_EDITS)])
        elif edit.kind == "plugin":
            self.plugin.write_text(EDIT_PLUGIN + f"# edit {self.edits}\n")
        elif edit.kind == "xdsl":
            edited = self.xdsl_files[edit.choice % len(self.xdsl_files)]
            edited.write_text(edited.read_text() + f"# edit {self.edits}\n")
        self.path.write_text(edit.edited)
        hits = _hits(self.cache)
        after = self._cached(pipeline, flags, seen)
        if edit.kind in ("plugin", "xdsl"):
            assert _hits(self.cache) == hits, (edit.kind, "a stale hit")
        with time_bound(edit.edited):
            whole = run_tool(
                [str(self.path), "-p", pipeline, *flags, "--mlir-disable-threading"]
            )
        assert after == whole, (edit, "cold")
        assert self._cached(pipeline, flags, seen) == whole, (edit, "warm")
        event(f"edit: {edit.kind}")

    def _cached(
        self, pipeline: str, flags: list[str], seen: Counter[str]
    ) -> tuple[int, str, str]:
        argv = [str(self.path), "-p", pipeline, *flags, f"--cache={self.cache}"]
        with time_bound(argv), sliced_in_process(seen), registry_restored():
            return run_tool(argv)


def test_edits_between_cached_runs_give_the_fresh_result() -> None:
    seen: Counter[str] = Counter()
    with tempfile.TemporaryDirectory() as directory:
        run = EditRun(Path(directory))

        @settings(
            fuzz_settings(EDIT_EXAMPLES, long_factor=EDIT_LONG_FACTOR),
            deadline=SLICED_DEADLINE,
        )
        @given(edits())
        def check(edit: Edit) -> None:
            run.check(edit, seen)

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sources, "xdsl_source", lambda: run.xdsl)
            check()
    assert seen["sliced"] > seen["fallback"], seen
