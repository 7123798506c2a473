"""The contract between a nested-pipeline adaptor and the executor of its children.

The runner (`passflow.runner.run_adaptor`) collects the children of an
adaptor's op that some pipeline of the adaptor accepts (`ChildWork.items`, in
program order) and hands them to the run's `ChildExecutor`. Whatever the executor, the outcome must be
what a serial run gives: the same IR, the same diagnostics in child order (with
the text children wrote to stdout/stderr between them, where a serial run
writes it), every child processed after a failure, the same statistics (each
child's effect on them applied in child order), instrumentation hooks
serialized.

This module is only that contract: the work, what an executor may use of the
run (`ChildRunState`), and the executor interface. The runner hands the
executors `run_pipeline` as a callable (`ChildWork.run_pipeline`), so this
contract, below the runner, never imports it. The executors themselves live in
`passflow.executors`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Protocol

from passflow.analysis import AnalysisManager
from passflow.diagnostics import Diagnostic
from passflow.instrumentation import PassInstrumentor, PipelineParentInfo
from passflow.ir import Context, Operation
from passflow.pass_base import Pass, PassPipeline

if TYPE_CHECKING:  # an annotation: a run without remarks does not load them
    from passflow.remarks import RemarkEngine

__all__ = [
    "ChildExecutor",
    "ChildRunState",
    "ChildWork",
    "PipelineRunner",
]


class ChildRunState(Protocol):
    """What an executor may use of the run its children belong to
    (`passflow.runner.RunState`)."""

    @property
    def context(self) -> Context: ...

    @property
    def verify(self) -> bool: ...

    @property
    def instrumentor(self) -> PassInstrumentor | None: ...

    @property
    def remarks(self) -> RemarkEngine | None: ...

    def emit(self, diagnostic: Diagnostic) -> None: ...

    def begin_capture(self) -> list[Diagnostic] | None: ...

    def end_capture(self, previous: list[Diagnostic] | None) -> list[Diagnostic]: ...


PipelineRunner = Callable[[PassPipeline, Operation, AnalysisManager], bool]
"""Runs a pipeline (an original or a worker's clone) on one child with the
child's analysis manager, in the run the work belongs to; False on failure."""


@dataclass(eq=False)
class ChildWork:
    """One adaptor run: the children to process and what they run in.

    `items` pairs each child with the index (in `pipelines`) of the pipeline
    that runs on it. `am` is the adaptor's op's analysis manager; each child's
    is `am.nest(child)`. `parent_info` is what the nested pipelines' hooks
    receive, and `run_pipeline` runs a pipeline on a child with them;
    `run_in_order` runs every item on this thread, in program order (the
    serial run's loop over an adaptor's children, `run_serially`).
    """

    adaptor: Pass
    op: Operation
    am: AnalysisManager
    state: ChildRunState
    items: list[tuple[int, Operation]]
    parent_info: PipelineParentInfo
    run_pipeline: PipelineRunner
    run_in_order: Callable[[ChildWork], bool]

    @property
    def pipelines(self) -> Sequence[PassPipeline]:
        """The adaptor's pipelines (the originals)."""
        return self.adaptor.nested_pipelines()

    def run_item(
        self,
        position: int,
        am: AnalysisManager | None = None,
        pipelines: Sequence[PassPipeline] | None = None,
    ) -> bool:
        """Run item `position` on this thread: with the original pipelines (or
        `pipelines`, a worker's clones) and `am` (default: a new nested one)."""
        index, child = self.items[position]
        chosen = self.pipelines if pipelines is None else pipelines
        return self.run_pipeline(
            chosen[index], child, self.am.nest(child) if am is None else am
        )

    def run_serially(self) -> bool:
        """Run every item in order on this thread; False if any child failed:
        what `run_item` for each gives (`run_in_order`)."""
        return self.run_in_order(self)

    def pipeline_text(self, position: int) -> str:
        """The textual pipeline item `position` runs (`func.func(cse)`), for
        messages."""
        return str(self.pipelines[self.items[position][0]])

    @property
    def in_process_only(self) -> bool:
        """Whether the work must stay in this process: instrumentations observe
        the passes and ops of this process (IR printing, timing, reproducers),
        so an instrumented run never ships children elsewhere."""
        return self.state.instrumentor is not None


class ChildExecutor(ABC):
    """Runs an adaptor's children; `run` returns False if any child failed.

    Executors may hold workers: `close()` them (or use the executor as a context
    manager) when the pass manager is done. `threading_disabled` says whether
    nested pipelines run serially on the calling thread, which module-scope IR
    printing and local crash reproducers require.
    """

    name: str = "executor"

    @property
    def threading_disabled(self) -> bool:
        """Whether every child runs on the calling thread, in program order."""
        return False

    @abstractmethod
    def run(self, work: ChildWork) -> bool: ...

    def close(self) -> None:  # noqa: B027  (optional hook: most executors hold nothing)
        """Release workers; called when the pass manager is done with the executor."""

    def __enter__(self) -> ChildExecutor:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
