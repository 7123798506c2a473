"""The lookup beside the run (`passflow.tools.warm_fork`) on generated
edits: a module run with the cache, edited (a body, an alias, a line, two
functions swapped, a line under a pipeline that reports diagnostics), then
run with the cache again in a process of its own whose lookup forks: the
same status, stdout and stderr as the run without the cache, and the next
run (looked up in the process) too.

Each run is a process (the fork only happens where the full run's modules
are still to load), so `make test` runs a few edits and `make fuzz`
(`PASSFLOW_FUZZ=long`) many more.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import event, given, settings
from test_cache_warm import forked_run

from .mlir_variants import Edit, edits
from .support import fuzz_settings
from .test_fuzz_sliced import DIAGNOSTIC_PIPELINES, EDIT_PIPELINES, SLICED_DEADLINE

EXAMPLES = 2
"""Generated edits in `make test` (three processes each)."""

LONG_FACTOR = 25.0
"""`make fuzz` runs this many times the long scale's share."""


def _pipeline(edit: Edit) -> str:
    if edit.kind == "line-diagnostics":
        return DIAGNOSTIC_PIPELINES[edit.choice % len(DIAGNOSTIC_PIPELINES)]
    template = EDIT_PIPELINES[edit.choice // 7 % len(EDIT_PIPELINES)]
    return template.format(tag="", options="")


def test_an_edit_looked_up_beside_the_run_gives_the_fresh_result() -> None:
    with tempfile.TemporaryDirectory() as directory:
        work = Path(directory)
        path = work / "in.mlir"
        caches = iter(range(1 << 30))  # a cache of its own for each example

        @settings(
            fuzz_settings(EXAMPLES, long_factor=LONG_FACTOR), deadline=SLICED_DEADLINE
        )
        @given(edits())
        def check(edit: Edit) -> None:
            if edit.edited == edit.text:  # not an edit of the text: never forks
                return
            pipeline = _pipeline(edit)
            cache = f"--cache={work / f'cache{next(caches)}'}"
            argv = [str(path), "-p", pipeline, "--allow-unregistered-dialect"]
            path.write_text(edit.text)
            forked_run([*argv, cache, "--jobs=2"], work)
            path.write_text(edit.edited)
            whole = forked_run([*argv, "--mlir-disable-threading"], work)
            after = forked_run([*argv, cache, "--jobs=2"], work)
            assert after.forked != "no", edit
            assert after.printed == whole.printed, (edit, "forked")
            again = forked_run([*argv, cache, "--jobs=2"], work)
            assert again.printed == whole.printed, (edit, "again")
            event(f"edit: {edit.kind}, {after.forked}")

        check()
