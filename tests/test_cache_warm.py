"""passflow-opt's warm path (`passflow.tools.warm_cache`): a run the cache
holds in full is printed from it, before the IR loads, byte for byte as the
run without the cache prints it; and everything the key covers still makes it
miss on that path (an edited pass, an option's default, an edited xDSL).

Each run is a process of its own (the warm path is about what a fresh process
loads), started through a small driver that records whether the warm path
answered and whether the IR was loaded.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import xdsl
from test_cache import GENERATED
from test_sliced import module

import passflow
from passflow.cache.store import DATABASE

CANONICALIZE_CSE = "builtin.module(func.func(canonicalize,cse))"
FAILING = "builtin.module(func.func(test-pass-failure{gen-diagnostics=true}))"

DRIVER = """
import json, sys
from passflow.tools import opt, warm_cache

report, *argv = sys.argv[1:]
answered = []
replay = warm_cache.replay_from_cache
scans = []
scan = warm_cache.scan_text

def scanning(*args):
    scans.append(args)
    return scan(*args)

warm_cache.scan_text = scanning

def recording(inv):
    status = replay(inv)
    answered.append(status is not None)
    return status

warm_cache.replay_from_cache = recording
status = opt.main(argv)
sys.stdout.flush()
sys.stderr.flush()
with open(report, "w") as stream:
    json.dump(
        {"warm": answered == [True], "ir": "passflow.ir" in sys.modules,
         "scans": len(scans)},
        stream,
    )
sys.exit(status)
"""


@dataclass(frozen=True)
class Run:
    """What one passflow-opt process did."""

    status: int
    out: str
    err: str
    warm: bool
    """The warm path answered."""
    ir_loaded: bool
    scans: int
    """Texts the warm path scanned."""

    @property
    def printed(self) -> tuple[int, str, str]:
        return self.status, self.out, self.err


def run(
    argv: list[str],
    tmp_path: Path,
    *,
    source: Path | None = None,
    stdin: str | None = None,
) -> Run:
    """passflow-opt `argv` in a process of its own; `source`: a directory
    holding the `passflow` or `xdsl` package to run instead of the installed
    one."""
    env = {k: v for k, v in os.environ.items() if k != "PASSFLOW_CACHE_DIR"}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    done, seen = _driven(DRIVER, argv, tmp_path, env, stdin)
    return Run(
        done.returncode, done.stdout, done.stderr, seen["warm"], seen["ir"],
        seen["scans"],
    )  # fmt: skip


def _driven(
    driver: str, argv: list[str], tmp_path: Path, env: dict[str, str], stdin: str | None
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """`driver` (its first argument the report's file) run with `argv` in a
    process of its own: the process, and the report it wrote."""
    report = tmp_path / "report.json"
    report.unlink(missing_ok=True)
    done = subprocess.run(
        [sys.executable, "-c", driver, str(report), *argv],
        capture_output=True,
        text=True,
        env=env,
        input=stdin,
        timeout=600,
        check=False,
    )
    return done, json.loads(report.read_text())


def uncached(argv: list[str], tmp_path: Path, source: Path | None = None) -> Run:
    return run([*argv, "--mlir-disable-threading"], tmp_path, source=source)


def test_a_warm_run_is_printed_before_the_ir_loads(tmp_path: Path) -> None:
    path = tmp_path / "input.mlir"
    path.write_text(module(12) + "// -----\n" + module(5))
    cache = f"--cache={tmp_path / 'cache'}"
    for pipeline in (CANONICALIZE_CSE, FAILING):
        argv = [str(path), "-p", pipeline, "--split-input-file"]
        plain = uncached(argv, tmp_path)
        cold = run([*argv, cache], tmp_path)
        warm = run([*argv, cache], tmp_path)
        assert cold.printed == warm.printed == plain.printed
        assert not cold.warm and cold.ir_loaded
        assert warm.warm and not warm.ir_loaded
    assert "error:" in plain.err and plain.status == 1
    output = tmp_path / "out.mlir"
    argv = [str(path), "-p", CANONICALIZE_CSE, "--split-input-file"]
    assert run([*argv, "-o", str(output), cache], tmp_path).warm
    assert output.read_text() == uncached(argv, tmp_path).out


def test_a_text_the_store_saw_is_not_scanned_again(tmp_path: Path) -> None:
    """The store keeps the keys of the last texts it saw: a warm run of one
    of them prints the run without scanning it; a kept scan that is damaged
    is scanned again; an edited text's keys are kept by its first run."""
    path = tmp_path / "input.mlir"
    path.write_text(module(12) + "// -----\n" + module(5))
    argv = [str(path), "-p", CANONICALIZE_CSE, "--split-input-file"]
    plain = uncached(argv, tmp_path)
    cache = tmp_path / "cache"
    argv.append(f"--cache={cache}")
    cold = run(argv, tmp_path)
    warm = run(argv, tmp_path)
    assert cold.printed == warm.printed == plain.printed
    assert warm.warm and warm.scans == 0
    with contextlib.closing(sqlite3.connect(cache / DATABASE)) as db, db:
        db.execute("UPDATE scans SET value = value || ' '")
    damaged = run(argv, tmp_path)
    assert damaged.warm and damaged.scans == 2 and damaged.printed == plain.printed
    assert run(argv, tmp_path).scans == 0  # kept again
    path.write_text(module(13) + "// -----\n" + module(5))
    assert run(argv, tmp_path).printed == uncached(argv[:-1], tmp_path).printed
    again = run(argv, tmp_path)  # the edited text's keys, kept by the run before
    assert again.warm and again.scans == 0


@pytest.mark.parametrize("index", range(len(GENERATED)))
def test_generated_modules_are_answered_as_they_run(index: int, tmp_path: Path) -> None:
    """An explicit module, aliases, comments with brackets, a crash in one
    function, mutual recursion: the warm path prints what the run prints."""
    path = tmp_path / "input.mlir"
    path.write_text(GENERATED[index])
    pipeline = "builtin.module(func.func(test-pass-crash-on-op{op=test.crash},cse))"
    argv = [str(path), "-p", pipeline, "--allow-unregistered-dialect"]
    plain = uncached(argv, tmp_path)
    cache = f"--cache={tmp_path / 'cache'}"
    assert run([*argv, cache], tmp_path).printed == plain.printed
    warm = run([*argv, cache], tmp_path)
    assert warm.printed == plain.printed
    assert warm.warm


def test_what_the_warm_path_cannot_vouch_for_runs(tmp_path: Path) -> None:
    """A miss, standard input, an xDSL pass (keyed by its code: the full path
    hits) and flags that fail outside the key run as without the warm path."""
    path = tmp_path / "input.mlir"
    text = module(10)
    path.write_text(text)
    cache = f"--cache={tmp_path / 'cache'}"
    argv = [str(path), "-p", CANONICALIZE_CSE, cache]
    run(argv, tmp_path)
    edited_text = text.replace("arith.constant 0", "arith.constant 3", 1)
    path.write_text(edited_text)
    edited = run(argv, tmp_path)
    assert not edited.warm and edited.printed == uncached(argv[:3], tmp_path).printed
    assert run(argv, tmp_path).warm

    for piped in ("-", "/dev/stdin"):  # a pipe read twice would be empty
        run([piped, *argv[1:]], tmp_path, stdin=text)
        changed = run([piped, *argv[1:]], tmp_path, stdin=edited_text)
        assert not changed.warm and changed.out == edited.out and edited.out

    xdsl_pass = [str(path), "-p", "builtin.module(func.func(cse,dce))", cache]
    run(xdsl_pass, tmp_path)
    again = run(xdsl_pass, tmp_path)
    assert not again.warm
    assert again.printed == uncached(xdsl_pass[:3], tmp_path).printed

    local = [*argv, "--mlir-pass-pipeline-local-reproducer"]
    assert run([*local, "--jobs=1"], tmp_path).status == 0
    refused = run([*local, "--jobs=2"], tmp_path)
    assert not refused.warm and refused.status == 1
    assert "Local crash reproduction" in refused.err


def _package_copy(package: ModuleType, tmp_path: Path) -> Path:
    """A copy of an installed package's tree, to edit; its parent directory."""
    source = tmp_path / "src"
    root = Path(package.__file__ or ".").parent
    shutil.copytree(
        root, source / root.name, ignore=shutil.ignore_patterns("__pycache__")
    )
    return source


def _comment(text: str) -> str:
    return text + "\n# edited\n"


def _no_rewrites_by_default(text: str) -> str:
    return text.replace(
        "max_num_rewrites = Option(\n        -1,",
        "max_num_rewrites = Option(\n        0,",
    )


EDITS: dict[str, tuple[str, Callable[[str], str]]] = {
    "a comment in a pass's module": ("transforms/cse.py", _comment),
    "an option's default in the pass class": (
        "transforms/canonicalize.py",
        _no_rewrites_by_default,
    ),
}


@pytest.mark.parametrize("edit", EDITS)
def test_an_edit_to_passflow_misses_on_the_warm_path(edit: str, tmp_path: Path) -> None:
    source = _package_copy(passflow, tmp_path)
    path = tmp_path / "input.mlir"
    path.write_text(module(6))
    argv = [str(path), "-p", CANONICALIZE_CSE, f"--cache={tmp_path / 'cache'}"]
    run(argv, tmp_path, source=source)
    assert run(argv, tmp_path, source=source).warm
    relative, change = EDITS[edit]
    edited = source / "passflow" / relative
    before = edited.read_text()
    edited.write_text(change(before))
    assert edited.read_text() != before
    after = run(argv, tmp_path, source=source)
    assert not after.warm
    assert after.printed == uncached(argv[:3], tmp_path, source=source).printed
    assert run(argv, tmp_path, source=source).warm


FUNC_PRINTER = "    def print(self, printer: Printer):\n"


@pytest.mark.parametrize(
    "pipeline", [CANONICALIZE_CSE, "builtin.module(func.func(cse,dce))"]
)
def test_an_edit_to_installed_xdsl_misses(pipeline: str, tmp_path: Path) -> None:
    """A one-line edit of xDSL's `func.func` printer (in a copy of the
    installed package, first on the path) misses on the warm path (passflow's
    passes) and on the full path (an xDSL pass): the output is the edited
    xDSL's, then warm again."""
    source = _package_copy(xdsl, tmp_path)
    path = tmp_path / "input.mlir"
    path.write_text(module(6))
    argv = [str(path), "-p", pipeline, f"--cache={tmp_path / 'cache'}"]
    run(argv, tmp_path, source=source)
    assert run(argv, tmp_path, source=source).warm == (pipeline == CANONICALIZE_CSE)
    printer = source / "xdsl" / "dialects" / "func.py"
    text = printer.read_text()
    assert text.count(FUNC_PRINTER) == 1
    printer.write_text(
        text.replace(FUNC_PRINTER, FUNC_PRINTER + '        printer.print_string(" ")\n')
    )
    after = run(argv, tmp_path, source=source)
    assert not after.warm and "func.func  @f0" in after.out
    assert after.printed == uncached(argv[:3], tmp_path, source=source).printed
    assert run(argv, tmp_path, source=source).printed == after.printed


@pytest.mark.parametrize(
    "flag",
    [
        "--mlir-pass-statistics",
        "--mlir-timing",
        "--mlir-print-ir-after-all",
        "--report=REPORT",
    ],
)
def test_the_warm_path_refuses_pass_manager_flags_and_reports(
    flag: str, tmp_path: Path
) -> None:
    """A run the cache holds in full, asked for with a flag that observes the
    run or changes what it checks, runs as without the warm path: a report is
    written, statistics and timing are printed."""
    path = tmp_path / "input.mlir"
    path.write_text(module(4))
    argv = [str(path), "-p", CANONICALIZE_CSE, f"--cache={tmp_path / 'cache'}"]
    run(argv, tmp_path)
    assert run(argv, tmp_path).warm
    flag = flag.replace("REPORT", str(tmp_path / "report.html"))
    run([*argv, flag], tmp_path)  # the flag is in the key: stored anew, if at all
    (tmp_path / "report.html").unlink(missing_ok=True)
    observed = run([*argv, flag], tmp_path)
    assert not observed.warm and observed.status == 0
    if flag.startswith("--report"):
        assert (tmp_path / "report.html").read_text().startswith("<!")
    else:
        assert observed.err


FORK_DRIVER = """
import json, os, sys
from passflow.cache import keys
from passflow.tools import invocation, opt, warm_cache, warm_fork

report, crash, *argv = sys.argv[1:]
parent = os.getpid()
seen = {"forked": "no", "keyed_here": 0, "read_here": 0}
beside = warm_fork.look_up_beside_the_run
compute = keys._run_keys
look_up = warm_cache.look_up

def recording(*args):
    found = beside(*args)
    if found is not None and os.getpid() == parent:
        seen["forked"] = "handed" if found.status is None else "answered"
    return found

def counting(*args):
    if os.getpid() == parent:
        seen["keyed_here"] += 1
    return compute(*args)

def crashing(*args):
    if crash == "child" and os.getpid() != parent:
        raise RuntimeError("a crash in the child's lookup")
    return look_up(*args)

def reading(module):
    read = module.read_input

    def counted(*args):
        seen["read_here"] += os.getpid() == parent
        return read(*args)

    module.read_input = counted

warm_fork.look_up_beside_the_run = recording
keys._run_keys = counting
warm_cache.look_up = crashing
reading(warm_cache)
reading(invocation)  # before the run's modules take it by name
status = opt.main(argv)
sys.stdout.flush()
sys.stderr.flush()
with open(report, "w") as stream:
    json.dump(seen, stream)
sys.exit(status)
"""


@dataclass(frozen=True)
class ForkedRun:
    """What one passflow-opt process did with the forked lookup."""

    status: int
    out: str
    err: str
    forked: str
    """"no" (looked up in the process), "handed" (the child handed its
    lookup back) or "answered" (the child printed the run)."""
    keyed_here: int
    """How often the parent computed a run's keys."""
    read_here: int
    """How often the parent read the input."""

    @property
    def printed(self) -> tuple[int, str, str]:
        return self.status, self.out, self.err


def forked_run(argv: list[str], tmp_path: Path, *, crash: str = "") -> ForkedRun:
    """passflow-opt `argv` in a process of its own, with no make jobserver
    (the child is a worker of the run's budget); `crash="child"`: the
    child's lookup raises."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PASSFLOW_CACHE_DIR", "MAKEFLAGS", "MFLAGS")
    }
    done, seen = _driven(FORK_DRIVER, [crash, *argv], tmp_path, env, None)
    return ForkedRun(
        done.returncode, done.stdout, done.stderr, seen["forked"],
        seen["keyed_here"], seen["read_here"],
    )  # fmt: skip


def test_an_edited_run_is_looked_up_while_the_run_loads(tmp_path: Path) -> None:
    """A run whose input changed since the cache last held it in full is
    looked up in a child while passflow-opt loads the full run; the child
    hands its scan, keys and entries over (the parent keys nothing, and reads
    the input once), and the
    run prints what it prints without the cache. The next run of the same
    text is guessed warm and looked up in the process."""
    path = tmp_path / "input.mlir"
    text = module(12) + "// -----\n" + module(5)
    path.write_text(text)
    cache = f"--cache={tmp_path / 'cache'}"
    for pipeline in (CANONICALIZE_CSE, FAILING):
        argv = [str(path), "-p", pipeline, "--split-input-file", "--jobs=2"]
        path.write_text(text)
        forked_run([*argv, cache], tmp_path)
        path.write_text(text.replace("arith.constant 0", "arith.constant 3", 1))
        plain = uncached(argv, tmp_path)
        edited = forked_run([*argv, cache], tmp_path)
        assert edited.forked == "handed" and edited.keyed_here == 0
        assert edited.read_here == 1  # the run takes the text the lookup read
        assert edited.printed == plain.printed
        again = forked_run([*argv, cache], tmp_path)
        assert again.forked == "no" and again.printed == plain.printed
    assert "error:" in plain.err and plain.status == 1


def test_a_run_guessed_to_miss_that_hits_is_printed_by_the_child(
    tmp_path: Path,
) -> None:
    """Blank lines added above the functions change the text but no piece:
    the child finds the run in full and prints it (diagnostics moved to the
    lines they now stand on), and the parent ends with its status."""
    path = tmp_path / "input.mlir"
    text = module(12)
    cache = f"--cache={tmp_path / 'cache'}"
    for pipeline in (CANONICALIZE_CSE, FAILING):
        argv = [str(path), "-p", pipeline, "--jobs=2"]
        path.write_text(text)
        forked_run([*argv, cache], tmp_path)
        path.write_text("\n\n" + text)
        moved = forked_run([*argv, cache], tmp_path)
        assert moved.forked == "answered"
        assert moved.printed == uncached(argv, tmp_path).printed
        assert run([*argv, cache], tmp_path).warm  # remembered as answered
    assert "error:" in moved.err and moved.status == 1


def test_the_lookup_forks_only_beside_a_run_that_may_use_two_processes(
    tmp_path: Path,
) -> None:
    """One job, or a serial executor, keeps the lookup in the process; a
    child whose lookup fails says nothing, and the parent runs the run."""
    path = tmp_path / "input.mlir"
    text = module(10)
    path.write_text(text)
    cache = f"--cache={tmp_path / 'cache'}"
    argv = [str(path), "-p", CANONICALIZE_CSE]
    forked_run([*argv, cache, "--jobs=2"], tmp_path)
    edits = iter(range(1, 10))
    for flags in (["--jobs=1"], ["--mlir-disable-threading"], ["--executor=serial"]):
        path.write_text(
            text.replace("arith.constant 0", f"arith.constant {next(edits)}", 1)
        )
        alone = forked_run([*argv, cache, *flags], tmp_path)
        assert alone.forked == "no" and alone.keyed_here > 0
        assert alone.printed == uncached(argv, tmp_path).printed
    path.write_text(text.replace("arith.constant 0", "arith.constant 42", 1))
    crashed = forked_run([*argv, cache, "--jobs=2"], tmp_path, crash="child")
    assert crashed.forked == "handed" and crashed.keyed_here > 0
    assert crashed.printed == uncached(argv, tmp_path).printed
