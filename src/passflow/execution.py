"""How the children of an op run their nested pipelines: serially, or on an executor.

The nested-pipeline adaptor collects the direct children that some pipeline accepts
(`ChildWork.items`, in program order) and hands them to the run's `ChildExecutor`.
Whatever the executor, the outcome must be what a serial run gives: the same IR,
the same diagnostics in child order, every child processed after a failure,
statistics summed over worker clones, instrumentation hooks serialized.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING

from passflow.instrumentation import PipelineParentInfo
from passflow.ir import Operation

if TYPE_CHECKING:
    from passflow.analysis import AnalysisManager
    from passflow.manager import OpToOpPassAdaptor
    from passflow.runner import RunState

__all__ = ["ChildExecutor", "ChildWork", "SerialExecutor"]


@dataclass(eq=False)
class ChildWork:
    """One adaptor run: the children to process and what they run in.

    `items` pairs each child with the index (in `adaptor.managers`) of the pipeline
    that runs on it. `am` is the adaptor's op's analysis manager; each child's is
    `am.nest(child)`. `parent_info` is what the nested pipelines' hooks receive.
    """

    adaptor: OpToOpPassAdaptor
    op: Operation
    am: AnalysisManager
    state: RunState
    items: list[tuple[int, Operation]]
    parent_info: PipelineParentInfo

    def run_serially(self) -> bool:
        """Run every item in order on this thread; False if any child failed."""
        from passflow.runner import run_pipeline

        managers = self.adaptor.managers
        ok = True
        for index, child in self.items:
            if not run_pipeline(
                managers[index],
                child,
                self.am.nest(child),
                self.state,
                self.parent_info,
            ):
                ok = False
        return ok


class ChildExecutor(ABC):
    """Runs an adaptor's children; `run` returns False if any child failed."""

    name: str = "executor"

    @abstractmethod
    def run(self, work: ChildWork) -> bool: ...

    def close(self) -> None:  # noqa: B027  (optional hook: most executors hold nothing)
        """Release workers; called when the pass manager is done with the executor."""


class SerialExecutor(ChildExecutor):
    """Every child on the calling thread, in program order: the fast path."""

    name = "serial"

    def run(self, work: ChildWork) -> bool:
        return work.run_serially()
