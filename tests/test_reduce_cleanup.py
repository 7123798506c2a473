"""passflow-reduce leaves no process and no file behind.

A test command is the user's program: it may hang, or start children of its
own and exit. Whatever it does, once a test is over (answered, overran
`--timeout`, or was stopped because the reduction moved on), and once the
reducer is gone (done, failed, interrupted or killed), no process of the
command remains and no temporary file either.

Processes are found by a marker in their command line (a `sleep` of a unique
number of seconds, in the script `sh -c` runs), files by pointing TMPDIR at a
directory of the test's own.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from passflow.reduce import Candidate, CommandStatus
from passflow.testing.seeded_bugs import seeded_module

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="counts processes through /proc"
)

REDUCE = Path(sys.executable).parent / "passflow-reduce"
PIPELINE = "builtin.module(cse)"
CLEANUP = 10.0
"""Seconds allowed for the processes to go (a bound, not a measured time)."""


def _marked(marker: str) -> list[int]:
    """The live processes whose command line holds `marker` (a zombie's
    command line is empty)."""
    found: list[int] = []
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in cmdline:
            found.append(int(entry.name))
    return found


def _eventually(condition: Callable[[], bool], seconds: float = CLEANUP) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.fixture
def marker() -> Iterator[str]:
    """A `sleep` argument no other process has; whatever still runs with it
    at the end of the test is killed (by pid) so that a failing test leaves
    nothing behind either."""
    value = f"300.{secrets.randbelow(10**9):09d}"
    yield value
    for pid in _marked(value):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def tmpdir_env(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """An empty TMPDIR, and the environment that names it."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    return scratch, {**os.environ, "TMPDIR": str(scratch)}


def _command(script: str) -> list[str]:
    """`--test-command` arguments running `script` with `sh -c` ($1: FILE)."""
    return ["--test-command", "sh", "--test-arg=-c", f"--test-arg={script}", *_NAME]


_NAME = ["--test-arg=passflow-test"]
"""`sh -c SCRIPT NAME FILE` gives SCRIPT NAME as $0 and FILE as $1."""


def _reduce(
    where: Path, env: dict[str, str], *arguments: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(REDUCE), "in.mlir", "-p", PIPELINE, "-o", "out.mlir", *arguments],
        capture_output=True,
        text=True,
        cwd=where,
        env=env,
        check=False,
        timeout=300,
    )


def _assert_nothing_left(marker: str, scratch: Path) -> None:
    _eventually(lambda: not _marked(marker))
    left = _marked(marker)
    assert left == [], f"{len(left)} processes left"
    files = sorted(p.name for p in scratch.iterdir())
    assert files == [], f"{len(files)} files left"


HANGS = 'grep -q arith.remui "$1" && exit 0; sleep {marker}; exit 1'
"""Interesting while the culprit stays; any other candidate hangs."""

LEAVES_A_CHILD = 'sleep {marker} & grep -q arith.remui "$1"'
"""Answers at once, leaving a background grandchild running."""


@pytest.mark.parametrize("script", [HANGS, LEAVES_A_CHILD], ids=["hangs", "child"])
def test_a_reduction_leaves_no_test_command_and_no_file(
    tmp_path: Path,
    marker: str,
    tmpdir_env: tuple[Path, dict[str, str]],
    script: str,
) -> None:
    scratch, env = tmpdir_env
    (tmp_path / "in.mlir").write_text(seeded_module(3, culprit=1, ops=2))
    reduced = _reduce(
        tmp_path,
        env,
        *_command(script.format(marker=marker)),
        "--skip-pipeline",
        "--timeout=0.5",
        "-j",
        "2",
    )
    assert reduced.returncode == 0, reduced.stderr
    assert "arith.remui" in (tmp_path / "out.mlir").read_text()
    _assert_nothing_left(marker, scratch)


@pytest.mark.parametrize("mode", [[], ["--bisect"]], ids=["reduce", "bisect"])
def test_a_command_that_overruns_the_timeout_is_stopped_with_its_children(
    tmp_path: Path,
    marker: str,
    tmpdir_env: tuple[Path, dict[str, str]],
    mode: list[str],
) -> None:
    scratch, env = tmpdir_env
    (tmp_path / "in.mlir").write_text(seeded_module(2, culprit=1, ops=2))
    hangs = _command(f"sleep {marker} & sleep {marker}; exit 0")
    failed = _reduce(tmp_path, env, *hangs, "--timeout=0.5", *mode)
    assert failed.returncode == 1
    assert "the input does not show the failure" in failed.stderr
    _assert_nothing_left(marker, scratch)


_WITH_CTRL_C = (
    "import os, signal, sys\n"
    "signal.signal(signal.SIGINT, signal.SIG_DFL)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)
"""Runs its arguments with SIGINT's default action (a job started in the
background, as pytest may be, inherits SIGINT ignored)."""


@pytest.mark.parametrize(
    ("stop", "status"),
    [(signal.SIGKILL, -signal.SIGKILL), (signal.SIGINT, 130)],
    ids=["killed", "interrupted"],
)
def test_a_reducer_stopped_mid_test_takes_its_test_command_with_it(
    tmp_path: Path,
    marker: str,
    tmpdir_env: tuple[Path, dict[str, str]],
    stop: signal.Signals,
    status: int,
) -> None:
    scratch, env = tmpdir_env
    (tmp_path / "in.mlir").write_text(seeded_module(2, culprit=1, ops=2))
    hangs = _command(f"sleep {marker} & sleep {marker}; exit 0")
    reducer = subprocess.Popen(
        [sys.executable, "-c", _WITH_CTRL_C, REDUCE, "in.mlir", "-p", PIPELINE, *hangs],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # sh and its two sleeps: the test command and its children are running
        assert _eventually(lambda: len(_marked(marker)) >= 3, 60)
        reducer.send_signal(stop)
        _, stderr = reducer.communicate(timeout=60)
    finally:
        if reducer.poll() is None:
            reducer.kill()
            reducer.wait()
    assert reducer.returncode == status, stderr
    if stop == signal.SIGKILL:
        # The reducer had no chance to remove its private directory; the
        # command's supervisor still removed the candidate file in it.
        _eventually(lambda: all(not list(d.iterdir()) for d in scratch.iterdir()))
        for entry in scratch.iterdir():
            assert entry.name.startswith("passflow-reduce-")
            entry.rmdir()  # fails unless empty
    _assert_nothing_left(marker, scratch)


def test_a_test_command_run_in_process_leaves_nothing(
    marker: str,
    tmpdir_env: tuple[Path, dict[str, str]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Called directly (no forked trial around it), the test returns only once
    the command and its children are gone."""
    scratch, env = tmpdir_env
    monkeypatch.setenv("TMPDIR", env["TMPDIR"])
    monkeypatch.setattr("tempfile.tempdir", None)
    module = seeded_module(1, culprit=0, ops=1)
    for script, timeout, answer in (
        (f"sleep {marker} & exit 0", 60.0, True),
        (f"sleep {marker}; exit 0", 0.5, False),
    ):
        with CommandStatus(["sh", "-c", script], timeout) as test:
            assert test(Candidate(module, "builtin.module()")) is answer
            assert _marked(marker) == []  # at once: no wait
    assert sorted(p.name for p in scratch.iterdir()) == []
