"""A child's diagnostics and output, captured while it runs and replayed in order.

A parallel executor runs children in any order, on any thread or process, but
their diagnostics must read as after a serial run: in child order, with the
text each child wrote to `sys.stdout`/`sys.stderr` between them, where it was
written. While a child runs captured, its diagnostics are buffered
(`ChildRunState.begin_capture`) and the standard streams are routed into the
same buffer for the capturing thread only; `replay_diagnostics` emits each
child's buffer once every child is done.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Generator, Iterable, Sequence
from contextlib import contextmanager
from typing import TextIO, cast

from passflow.diagnostics import Diagnostic, Severity
from passflow.execution import ChildRunState
from passflow.executors.captured_output import CapturedOutput

__all__ = [
    "CaptureToken",
    "CapturedOutput",
    "begin_child_capture",
    "captured_output",
    "end_child_capture",
    "replay_diagnostics",
    "reset_child_capture",
]


class _StreamRouter:
    """Stands in for `sys.stdout` or `sys.stderr` while children run captured:
    text written by a capturing thread goes into its child's captured
    diagnostics, text written by any other thread to the real stream."""

    def __init__(self, name: str, target: TextIO) -> None:
        self._name = name
        self.target = target

    def write(self, text: str) -> int:
        state: ChildRunState | None = getattr(_capturing, "state", None)
        if state is None:
            return self.target.write(text)
        if text:
            state.emit(CapturedOutput(Severity.NOTE, text, stream=self._name))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if getattr(_capturing, "state", None) is None:
            self.target.flush()

    def __getattr__(self, name: str) -> object:
        return getattr(self.target, name)


_capturing = threading.local()
_routing_lock = threading.Lock()
_routing_users = 0
_routers: dict[str, _StreamRouter] = {}


def _new_routing_lock() -> None:
    """A forked child gets a free lock, whatever thread held the parent's."""
    global _routing_lock
    _routing_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_new_routing_lock)


def _route_output() -> None:
    """Put routers in place of sys.stdout and sys.stderr (counted)."""
    global _routing_users
    with _routing_lock:
        _routing_users += 1
        if _routing_users == 1:
            for name in ("stdout", "stderr"):
                current = cast(TextIO | None, getattr(sys, name))
                if current is not None and not isinstance(current, _StreamRouter):
                    router = _StreamRouter(name, current)
                    _routers[name] = router
                    setattr(sys, name, router)


def _unroute_output() -> None:
    global _routing_users
    with _routing_lock:
        _routing_users -= 1
        if _routing_users == 0:
            for name, router in _routers.items():
                if getattr(sys, name) is router:  # unless someone replaced it since
                    setattr(sys, name, router.target)
            _routers.clear()


CaptureToken = tuple["list[Diagnostic] | None", "ChildRunState | None"]
"""What `begin_child_capture` returns and `end_child_capture` needs."""


def begin_child_capture(state: ChildRunState) -> CaptureToken:
    """Start capturing, on this thread, a child's diagnostics and the text it
    writes to sys.stdout and sys.stderr, in the order they happen.

    Text written straight to a file descriptor (C code, `os.write(2, ...)`,
    subprocesses) or to a stream object taken before the run is not seen."""
    _route_output()
    sink = state.begin_capture()
    previous: ChildRunState | None = getattr(_capturing, "state", None)
    _capturing.state = state
    return sink, previous


def end_child_capture(state: ChildRunState, token: CaptureToken) -> list[Diagnostic]:
    """Stop capturing: the child's diagnostics and `CapturedOutput`, in order."""
    sink, previous = token
    _capturing.state = previous
    try:
        captured = state.end_capture(sink)
    finally:
        _unroute_output()
    merged: list[Diagnostic] = []
    for item in captured:  # one piece per stream between two diagnostics
        last = merged[-1] if merged else None
        if (
            isinstance(item, CapturedOutput)
            and isinstance(last, CapturedOutput)
            and last.stream == item.stream
        ):
            merged[-1] = CapturedOutput(
                Severity.NOTE, last.message + item.message, stream=item.stream
            )
        else:
            merged.append(item)
    return merged


class _OutputSink:
    """Where `captured_output` sends this thread's writes."""

    def __init__(self, emit: Callable[[Diagnostic], None]) -> None:
        self.emit = emit


@contextmanager
def captured_output(emit: Callable[[Diagnostic], None]) -> Generator[None]:
    """For the `with` block, text this thread writes to `sys.stdout` and
    `sys.stderr` goes to `emit` as `CapturedOutput`, in the order written (the
    batches of a sliced run, `passflow.sliced`, send it back to the parent with
    their diagnostics); other threads write to the real streams."""
    _route_output()
    previous = getattr(_capturing, "state", None)
    _capturing.state = _OutputSink(emit)
    try:
        yield
    finally:
        _capturing.state = previous
        _unroute_output()


def reset_child_capture() -> None:
    """Forget a capture this thread inherited (a forked worker: its parent may
    have forked inside a child's capture)."""
    _capturing.state = None


def replay_diagnostics(
    state: ChildRunState, per_child: Sequence[Sequence[Diagnostic] | None]
) -> None:
    """Emit buffered diagnostics in child order, as a serial run would have, and
    write each child's captured output between them where it was written."""
    for diagnostics in per_child:
        if diagnostics:
            for diagnostic in diagnostics:
                if isinstance(diagnostic, CapturedOutput):
                    stream = sys.stdout if diagnostic.stream == "stdout" else sys.stderr
                    stream.write(diagnostic.message)
                else:
                    state.emit(diagnostic)
