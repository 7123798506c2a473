"""Every child on the calling thread, in program order."""

from __future__ import annotations

from passflow.execution import ChildExecutor, ChildWork

__all__ = ["SerialExecutor"]


class SerialExecutor(ChildExecutor):
    """Every child on the calling thread, in program order: the fast path for
    small inputs, and what `--mlir-disable-threading` asks for."""

    name = "serial"

    @property
    def threading_disabled(self) -> bool:
        return True

    def run(self, work: ChildWork) -> bool:
        return work.run_serially()
