"""Running the user's test command so that nothing of it outlives the test.

A test command may hang, or start children of its own (`sh -c 'sleep 100; …'`)
and exit. Killing the command alone leaves its children running, and killing
the process that waits for it (the reducer kills a trial that overruns its
timeout, and the kernel kills trials when the reducer dies) leaves the command
too. So each command runs under a *supervisor*, a process forked for that one
run, which

- writes the candidate file into the reducer's private directory and removes
  it after the run;
- starts the command as the leader of a new session, hence of its own process
  group, with stdin, stdout and stderr on /dev/null;
- waits until the command exits, `timeout` seconds pass, or its own parent
  (the process testing the candidate) goes: that parent holds the write end of
  a pipe, the *lifeline*, that the supervisor watches, and the kernel closes it
  whatever ends the parent (SIGKILL included), so parent death needs no signal
  and has no race;
- then kills the whole group (SIGKILL), reaps the command and, being the
  children's subreaper (Linux), every process of the group orphaned under it,
  and only then reports.

So when a test returns, or its parent is gone and the supervisor has exited,
no process of the group remains. The command is also killed by the kernel if
the supervisor itself is killed (a parent-death signal). A process the command
moves out of its group (`setsid`, `setpgid`) is out of reach.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import weakref
from collections.abc import Callable, Generator, Sequence
from typing import NoReturn

from passflow.executors.lifetime import die_with_parent

__all__ = ["CommandNotRunError", "ScratchDirectory", "command_succeeds"]

POLL = 0.1
"""Seconds a wait may block before it looks again: `call_with_deep_stack`
raises Ctrl-C's `KeyboardInterrupt` in the waiting thread, which sees it only
between two blocking calls."""

_SUPERVISED = hasattr(os, "fork") and hasattr(os, "waitid")
_PR_SET_CHILD_SUBREAPER = 36  # prctl(2)
_SUCCESS = b"0"
_FAILURE = b"1"
_NOT_RUN = b"E"


class CommandNotRunError(Exception):
    """The test command could not be started (the message says why)."""


class ScratchDirectory:
    """A private temporary directory (`tempfile.mkdtemp`: mode 0700) named
    `passflow-reduce-*`, removed by `close()`, or else when this object is
    collected or the process that made it exits (never by a forked child)."""

    def __init__(self) -> None:
        self.path = tempfile.mkdtemp(prefix="passflow-reduce-")
        self._remove = weakref.finalize(self, _remove_tree, self.path, os.getpid())

    def close(self) -> None:
        self._remove()


def _remove_tree(path: str, owner: int) -> None:
    if os.getpid() == owner:
        shutil.rmtree(path, ignore_errors=True)


def command_succeeds(
    argv: Sequence[str], content: str, directory: str, timeout: float | None
) -> bool:
    """Whether `argv` followed by the path of a file holding `content` (in
    `directory`) exits with status 0 within `timeout` seconds; nothing it
    started is left when this returns or raises. Raises `CommandNotRunError`
    if the command cannot start or the file cannot be written."""
    if not _SUPERVISED:  # pragma: no cover - no fork: kill the command only
        return _run_unsupervised(argv, content, directory, timeout)
    subreaper = _subreaper_setter()
    lifeline, lifeline_end = os.pipe()
    report_end, report = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the supervisor's side is seen in its report
        os.close(lifeline_end)
        os.close(report_end)
        _supervise(argv, content, directory, timeout, lifeline, report, subreaper)
    try:
        os.close(lifeline)
        os.close(report)
        answer = _read_to_end(report_end)
    finally:
        os.close(lifeline_end)  # if interrupted: the supervisor stops the command
        os.close(report_end)
        _reap(pid)
    if answer.startswith(_NOT_RUN):
        raise CommandNotRunError(answer[1:].decode(errors="replace"))
    return answer == _SUCCESS


def _read_to_end(fd: int) -> bytes:
    chunks: list[bytes] = []
    while True:
        ready, _, _ = select.select([fd], [], [], POLL)
        if ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


@functools.cache
def _subreaper_setter() -> Callable[[], None]:
    """What makes the calling process its orphaned descendants' reaper
    (Linux; elsewhere nothing), resolved before forking."""
    if not sys.platform.startswith("linux"):
        return lambda: None
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    return lambda: prctl(_PR_SET_CHILD_SUBREAPER, 1)


# --- the supervisor -----------------------------------------------------------


def _supervise(
    argv: Sequence[str],
    content: str,
    directory: str,
    timeout: float | None,
    lifeline: int,
    report: int,
    become_subreaper: Callable[[], None],
) -> NoReturn:  # pragma: no cover - runs in the forked supervisor
    """The supervisor's whole life: it never returns and prints nothing."""
    answer = _FAILURE
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # its parent decides
        become_subreaper()
        answer = _run_supervised(argv, content, directory, timeout, lifeline)
    except BaseException:
        answer = _FAILURE
    finally:
        try:
            os.write(report, answer)
        finally:
            os._exit(0)


def _run_supervised(
    argv: Sequence[str],
    content: str,
    directory: str,
    timeout: float | None,
    lifeline: int,
) -> bytes:  # pragma: no cover - runs in the forked supervisor
    try:
        with _candidate_file(directory, content) as path:
            try:
                command = subprocess.Popen(
                    [*argv, path],
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                    preexec_fn=_command_setup(os.getpid()),
                )
            except OSError as err:
                raise CommandNotRunError(_cannot_run(argv, err)) from err
            try:
                exited = _wait_for(command.pid, lifeline, timeout)
            finally:
                _stop_group(command.pid)
            return _SUCCESS if exited else _FAILURE
    except CommandNotRunError as err:
        return _NOT_RUN + str(err).encode()


@contextlib.contextmanager
def _candidate_file(directory: str, content: str) -> Generator[str]:
    """The path of a new file in `directory` holding `content`, removed after."""
    try:
        handle, path = tempfile.mkstemp(dir=directory, suffix=".mlir")
    except OSError as err:
        raise CommandNotRunError(f"cannot write the candidate: {err}") from err
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(content)
        yield path
    finally:
        os.unlink(path)


def _cannot_run(argv: Sequence[str], err: OSError) -> str:
    return f"cannot run the test command '{argv[0]}': {err.strerror}"


def _command_setup(supervisor: int) -> Callable[[], None]:
    """What the command's process does before `exec`: die with the
    supervisor, and take Ctrl-C's default action (the supervisor ignores it)."""

    def setup() -> None:
        die_with_parent(supervisor)
        signal.signal(signal.SIGINT, signal.SIG_DFL)

    return setup


def _wait_for(pid: int, lifeline: int, timeout: float | None) -> bool:
    """Whether the command `pid` exited with status 0 before `timeout` and
    before the lifeline closed. The command is left unreaped (a zombie keeps
    its process group's id from being reused)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    exit_fd = _exit_fd(pid)
    try:
        while True:
            wait = None if deadline is None else deadline - time.monotonic()
            if wait is not None and wait <= 0:
                return False
            if exit_fd is None:
                wait = POLL if wait is None else min(wait, POLL)
            watched = [lifeline] if exit_fd is None else [lifeline, exit_fd]
            ready, _, _ = select.select(watched, [], [], wait)
            if lifeline in ready:  # EOF: the parent is gone or gave up
                return False
            flags = os.WEXITED | os.WNOHANG | os.WNOWAIT
            exited = os.waitid(os.P_PID, pid, flags)
            if exited is not None and exited.si_pid == pid:
                return exited.si_code == os.CLD_EXITED and exited.si_status == 0
    finally:
        if exit_fd is not None:
            os.close(exit_fd)


def _exit_fd(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux 5.3's
    pidfd), or None: then the wait polls."""
    if not hasattr(os, "pidfd_open"):
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def _stop_group(leader: int) -> None:
    """Kill the process group of `leader` (not reaped yet, so the group's id
    is still its own) and reap every member that is this process's child."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(leader, signal.SIGKILL)
    while True:
        try:
            os.waitpid(-leader, 0)
        except ChildProcessError:
            return


# --- without fork -------------------------------------------------------------


def _run_unsupervised(
    argv: Sequence[str], content: str, directory: str, timeout: float | None
) -> bool:  # pragma: no cover - platforms without fork
    with _candidate_file(directory, content) as path:
        try:
            status = subprocess.run(
                [*argv, path],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=timeout,
                check=False,
            ).returncode
        except subprocess.TimeoutExpired:
            return False
        except OSError as err:
            raise CommandNotRunError(_cannot_run(argv, err)) from err
        return status == 0
