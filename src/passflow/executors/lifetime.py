"""Forked processes that never outlive the process that forked them.

A worker blocked on a pipe whose other end its parent held never sees EOF if
the parent is killed (`kill PID`, the OOM killer): it would hold the caller's
pipes and a copy of the module forever. Every process passflow forks calls
`die_with_parent` first.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

__all__ = ["die_with_parent"]

_PR_SET_PDEATHSIG = 1  # prctl(2)


def die_with_parent(parent: int) -> None:
    """Make the kernel kill this process when `parent` dies (Linux), and exit
    now if it already did; elsewhere a closed pipe must end the process."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)
