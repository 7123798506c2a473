"""The action profile (`--profile-actions-to`): a Chrome trace of actions.

Each action that runs becomes a begin ("B") and an end ("E") event, in
mlir-opt's layout, one event per line:

    [{"name": "pass-execution", "cat": "PERF", "ph": "B", "pid": 0, "tid": 4711, "ts": 12, "args": {"desc": "`pass-execution` running `CSE` on Operation `func.func`"}},
    {"name": "pass-execution", "cat": "PERF", "ph": "E", "pid": 0, "tid": 4711, "ts": 20}]

`tid` is the OS thread id and `ts` microseconds since the profiler started.
Load it in Perfetto or chrome://tracing. Unlike `--timing-trace` (one complete
slice per pass per op from the instrumentation), this follows the action
handler: a skipped action has no events.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

from passflow.actions import ActionActiveStack, Breakpoint, ExecutionObserver

__all__ = ["ActionProfiler"]


class ActionProfiler(ExecutionObserver):
    """Writes begin/end events of actions to `stream` (MLIR's `ActionProfiler`).

    The opening `[` is written now; call `close()` when the run is over to write
    the closing `]`. `clock` returns nanoseconds (replaceable for tests).
    """

    def __init__(
        self, stream: TextIO, clock: Callable[[], int] = time.perf_counter_ns
    ) -> None:
        self.stream = stream
        self._clock = clock
        self._start = clock()
        self._first = True
        self._closed = False
        self._lock = threading.Lock()
        stream.write("[")

    def before_execute(
        self,
        stack: ActionActiveStack,
        breakpoint: Breakpoint | None,
        will_execute: bool,
    ) -> None:
        if will_execute:  # MLIR writes a "B" with no "E"; the trace stays nested
            self._event(stack, "B")

    def after_execute(self, stack: ActionActiveStack) -> None:
        self._event(stack, "E")

    def _event(self, stack: ActionActiveStack, phase: str) -> None:
        import json  # only while profiling, not at every start-up

        action = stack.action
        ts = (self._clock() - self._start) // 1000
        text = (
            f'{{"name": {json.dumps(action.tag)}, "cat": "PERF", "ph": "{phase}", '
            f'"pid": 0, "tid": {threading.get_native_id()}, "ts": {ts}'
        )
        if phase == "B":
            desc = json.dumps(str(action), ensure_ascii=False)
            text += f', "args": {{"desc": {desc}}}'
        text += "}"
        with self._lock:
            if self._closed:
                return
            if not self._first:
                text = ",\n" + text
            self._first = False
            self.stream.write(text)

    def close(self) -> None:
        """Write the closing `]` (once)."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self.stream.write("]")
