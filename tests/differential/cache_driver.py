"""Run `.mlir` files through passflow-opt without the cache, then cold and warm
with it, all in this one process, and print a JSON report on stdout.

`tests/differential/test_cache_corpus.py` starts it in a process of its own:
the warm path (`passflow.tools.warm_cache`) answers only in a process whose
registry holds passflow's passes alone, which pytest's own process does not
promise. Usage: `python cache_driver.py CACHE_DIR PIPELINE FILE...`.
"""

from __future__ import annotations

import contextlib
import gc
import io
import json
import sys
import warnings
from pathlib import Path

from passflow.cache.store import ResultCache
from passflow.sliced.scan import scan_text
from passflow.tools import opt, warm_cache
from passflow.tools.invocation import split_chunks

Printed = tuple[int, str, str]


def run(argv: list[str]) -> Printed:
    out, err = io.StringIO(), io.StringIO()
    with (
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")  # xDSL's, printed once per process
        try:
            status = opt.main(argv)
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 1
        finally:
            gc.enable()  # main turns the collector off for its process
    return status, out.getvalue(), err.getvalue()


def every_chunk_scans(text: str) -> bool:
    """Whether the scan cuts every chunk (else that chunk runs whole, and
    the warm path, which answers for the whole file or not at all, cannot)."""
    return all(
        not isinstance(scan_text(chunk, line), str)
        for chunk, line in split_chunks(text, "// -----")
    )


def main(argv: list[str]) -> int:
    cache, pipeline, *files = argv
    answered: list[bool] = []
    replay = warm_cache.replay_from_cache

    def recording(inv: opt.Invocation) -> int | None:
        status = replay(inv)
        answered.append(status is not None)
        return status

    warm_cache.replay_from_cache = recording
    different: list[str] = []
    unanswered: list[str] = []
    unstable: list[str] = []
    warm_answers = 0
    store = ResultCache(Path(cache))
    for file in files:
        common = [
            file,
            f"--pass-pipeline={pipeline}",
            "--allow-unregistered-dialect",
            "--split-input-file",
            "--mlir-disable-threading",
        ]
        plain = run(common)
        if run(common) != plain:  # dense_resource names, numbered per process
            unstable.append(file)
            continue
        cold = run([*common, f"--cache={cache}"])
        before = store.stats()
        answered.clear()
        warm = run([*common, f"--cache={cache}"])
        after = store.stats()
        if answered == [True]:
            warm_answers += 1
        elif (
            after.hits > before.hits
            and after.misses == before.misses
            and every_chunk_scans(Path(file).read_text())
        ):
            unanswered.append(file)  # the full path found every piece
        for name, printed in (("cold", cold), ("warm", warm)):
            if printed != plain:
                different.append(f"{file}: {name}")
        gc.collect()
    store.close()
    report = {
        "files": len(files),
        "warm_answers": warm_answers,
        "different": different,
        "unanswered": unanswered,
        "unstable": unstable,
    }
    sys.stdout.write(json.dumps(report) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
