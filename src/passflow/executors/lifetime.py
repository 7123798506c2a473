"""Forked processes that never outlive the process that forked them.

A worker blocked on a pipe whose other end its parent held never sees EOF if
the parent is killed (`kill PID`, the OOM killer): it would hold the caller's
pipes and a copy of the module forever. Every process passflow forks calls
`die_with_parent` first.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

__all__ = ["become_worker", "die_with_parent", "stop_workers"]

_PR_SET_PDEATHSIG = 1  # prctl(2)


def die_with_parent(parent: int) -> None:
    """Make the kernel kill this process when `parent` dies (Linux), and exit
    now if it already did; elsewhere a closed pipe must end the process."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def become_worker(parent: int, inherited: Iterable[Connection]) -> None:
    """What a forked worker does first: die with `parent`, leave Ctrl-C to it
    (the interrupt reaches the whole process group; the parent stops its
    workers, so none prints a `KeyboardInterrupt` of its own), and close the
    parent's ends of the pipes it inherited (its own included), so that the
    parent's death is an EOF it sees."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for end in inherited:
        end.close()


def stop_workers(
    workers: Iterable[tuple[BaseProcess, Connection]], grace: float
) -> None:
    """Ask each worker to exit (`None` on its pipe), kill those still running
    after `grace` seconds, and close the pipes."""
    workers = list(workers)
    for _, conn in workers:
        with contextlib.suppress(OSError):
            conn.send(None)
    for process, conn in workers:
        process.join(grace)
        if process.is_alive():
            process.kill()
            process.join()
        conn.close()
