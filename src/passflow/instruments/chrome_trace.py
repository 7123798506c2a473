"""A Chrome trace of a run (`--timing-trace=FILE`, beyond mlir-opt).

The timing report sums a pass over every op; the trace keeps each execution:
one complete ("X") event per pass per op, per nested pipeline and per analysis,
on one track per thread, so that Perfetto (ui.perfetto.dev) or chrome://tracing
shows which function was slow and how workers were kept busy. Events on a track
nest as the execution did: a pass inside its pipeline, an analysis inside its
pass. A slice is named like its timing-report line (`CSE`,
`'func.func' Pipeline`, `(A) DominanceInfo`, `Pipeline Collection : [...]`); the
op it ran on is in `args` (`op`, and `symbol` when the op has a symbol name).

The format is the Trace Event Format's JSON object form: `{"traceEvents": [...]}`
with microsecond timestamps from `time.perf_counter_ns`.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TextIO

from passflow import ir
from passflow.instrumentation import PassInstrumentation, PipelineParentInfo
from passflow.ir import Operation
from passflow.output_file import write_output
from passflow.pass_base import Pass

__all__ = ["ChromeTrace"]

_get_ident = threading.get_ident

TraceEvent = dict[str, object]


@dataclass(eq=False, slots=True)
class _Open:
    """A slice that has begun: what its event will say, and who closes it."""

    name: str
    category: str
    start: int
    args: dict[str, object]
    pass_: Pass | None = None


class ChromeTrace(PassInstrumentation):
    """Records a trace-event timeline of passes, pipelines and analyses.

    `clock` returns nanoseconds (replaceable for tests). Call `write` after the
    run, also after a failed one: slices of failed passes carry
    `"failed": true` in their args.
    """

    def __init__(self, clock: Callable[[], int] = time.perf_counter_ns) -> None:
        self._clock = clock
        self._base = clock()
        self._pid = os.getpid()
        self._events: list[TraceEvent] = []
        self._stacks: dict[int, list[_Open]] = {}
        self._tracks: dict[int, int] = {}

    # --- recording ------------------------------------------------------------

    def _stack(self) -> tuple[int, list[_Open]]:
        """This thread's track number and stack of open slices."""
        ident = _get_ident()
        stack = self._stacks.get(ident)
        if stack is None:
            stack = self._stacks[ident] = []
            track = self._tracks[ident] = len(self._tracks) + 1
            self._events.append(
                {
                    "name": "thread_name",
                    "ph": "M",
                    "pid": self._pid,
                    "tid": track,
                    "args": {"name": threading.current_thread().name},
                }
            )
        return self._tracks[ident], stack

    def _close(self, track: int, slice_: _Open, end: int) -> None:
        self._events.append(
            {
                "name": slice_.name,
                "cat": slice_.category,
                "ph": "X",
                "ts": (slice_.start - self._base) / 1000,
                "dur": (end - slice_.start) / 1000,
                "pid": self._pid,
                "tid": track,
                "args": slice_.args,
            }
        )

    def run_before_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        _, stack = self._stack()
        anchor = op_name or "any"
        stack.append(
            _Open(f"'{anchor}' Pipeline", "pipeline", self._clock(), {"anchor": anchor})
        )

    def run_after_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        end = self._clock()
        track, stack = self._stack()
        while stack:
            slice_ = stack.pop()
            self._close(track, slice_, end)
            if slice_.category == "pipeline":
                return

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        _, stack = self._stack()
        args: dict[str, object] = {"op": ir.operation_name(op).name}
        symbol = ir.symbol_name(op)
        if symbol is not None:
            args["symbol"] = f"@{symbol}"
        if stack and stack[-1].category == "pipeline" and "op" not in stack[-1].args:
            stack[-1].args.update(args)
        if pass_.is_adaptor:
            name, category = pass_.display_name, "adaptor"
        else:
            name, category = pass_.display_name, "pass"
            args["argument"] = pass_.argument
        stack.append(_Open(name, category, self._clock(), args, pass_))

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        self._end_pass(pass_, failed=False)

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        self._end_pass(pass_, failed=True)

    def _end_pass(self, pass_: Pass, failed: bool) -> None:
        """Close the pass's slice (and anything left open in it); a failed pass
        also ends its pipeline, which gets no `run_after_pipeline`."""
        end = self._clock()
        track, stack = self._stack()
        while stack:
            slice_ = stack.pop()
            if slice_.pass_ is pass_ and failed:
                slice_.args["failed"] = True
            self._close(track, slice_, end)
            if slice_.pass_ is pass_:
                break
        if failed and stack and stack[-1].category == "pipeline":
            self._close(track, stack.pop(), end)

    def run_before_analysis(self, name: str, analysis: type, op: Operation) -> None:
        _, stack = self._stack()
        stack.append(_Open(f"(A) {name}", "analysis", self._clock(), {}))

    def run_after_analysis(self, name: str, analysis: type, op: Operation) -> None:
        end = self._clock()
        track, stack = self._stack()
        if stack:
            self._close(track, stack.pop(), end)

    # --- output ---------------------------------------------------------------

    @property
    def events(self) -> list[TraceEvent]:
        """Recorded events: thread-name metadata and completed slices."""
        return list(self._events)

    def to_json(self) -> str:
        import json  # only when a trace is written, not at every start-up

        return json.dumps({"traceEvents": self._events, "displayTimeUnit": "ms"})

    def write(self, target: str | TextIO) -> None:
        """Write the trace to a path or an open text stream."""
        if isinstance(target, str):
            write_output(target, self.to_json())
        else:
            target.write(self.to_json())
