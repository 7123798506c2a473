"""A live progress bar for long runs (`passflow-opt --progress`).

Built on rich's progress display, as an instrumentation: it shows the pass that is
running, how many ops its pipeline has finished out of the ops it was given, and
the elapsed time. It draws only when its stream is a terminal, so logs, pipes and
lit tests stay byte-for-byte clean.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from passflow import ir
from passflow.instrumentation import PassInstrumentation
from passflow.ir import Operation
from passflow.manager import OpToOpPassAdaptor
from passflow.pass_base import Pass

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

__all__ = ["ProgressBar"]


class ProgressBar(PassInstrumentation):
    """Counts (pass, op) steps of the pipelines nested under the root op.

    When an adaptor starts on the root op, the total grows by the number of passes
    each child will go through; every pass finished on a child advances the bar.
    """

    def __init__(self, stream: TextIO | None = None, *, force: bool = False) -> None:
        # rich costs 54 modules and about 4 MB at start-up; only a bar needs it.
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        out = stream if stream is not None else sys.stderr
        self.enabled = force or out.isatty()
        self._progress: Progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=out, force_terminal=force or None),
            transient=True,
        )
        self._task: TaskID | None = None
        self._root: Operation | None = None
        self._total = 0

    def start(self, root: Operation) -> None:
        """Begin drawing for a run on `root`."""
        self._root = root
        self._total = 0
        if self.enabled:
            self._progress.start()
            self._task = self._progress.add_task("starting", total=0)

    def stop(self) -> None:
        """Stop drawing; the next `start` draws a new bar, not beside this one."""
        if self.enabled:
            self._progress.stop()
            if self._task is not None:
                self._progress.remove_task(self._task)
        self._task = None

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        if self._task is None:
            return
        if isinstance(pass_, OpToOpPassAdaptor):
            if op is self._root:
                self._total += _steps(pass_, op)
                self._progress.update(self._task, total=self._total)
            return
        self._progress.update(self._task, description=pass_.name)

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        self._advance(op)

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        self._advance(op)

    def _advance(self, op: Operation) -> None:
        if self._task is not None and op.parent_op() is self._root:
            self._progress.advance(self._task)


def _steps(adaptor: OpToOpPassAdaptor, op: Operation) -> int:
    steps = 0
    for child in ir.direct_children(op):
        index = adaptor.manager_index_for(ir.operation_name(child))
        if index is not None:
            steps += len(adaptor.managers[index].passes)
    return steps
