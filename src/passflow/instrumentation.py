"""Pass instrumentation: seven hooks around pipelines, passes and analyses.

Hooks fire in MLIR's order: "before" hooks in registration order, "after" hooks in
reverse (so instrumentations nest like a stack), and every call is serialized under
one re-entrant lock, so an instrumentation never needs its own locking even when
children run on worker threads. An exception raised inside a hook is the
instrumentation's fault: it surfaces as `InstrumentationError` naming the
instrumentation and hook, never as a failure of the pass being observed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from passflow.diagnostics import PassflowError
from passflow.ir import Operation

if TYPE_CHECKING:
    from passflow.pass_base import Pass, PassPipeline

__all__ = [
    "InstrumentationError",
    "PassInstrumentation",
    "PassInstrumentor",
    "PipelineParentInfo",
]


@dataclass(frozen=True)
class PipelineParentInfo:
    """Who spawned a nested pipeline: the thread it was spawned from and the pass
    (the adaptor for nested pipelines, the calling pass for dynamic ones), and
    for a dynamic pipeline the pipeline itself, which reports name with
    `parent_pass.pipeline_label`."""

    parent_thread_id: int
    parent_pass: Pass
    pipeline: PassPipeline | None = None


class InstrumentationError(PassflowError):
    """A hook of a `PassInstrumentation` raised; the pass it observed is not blamed."""


class PassInstrumentation:
    """Override any of the hooks; all default to doing nothing.

    `op_name` in the pipeline hooks is the anchor of the nested pipeline, or None
    for an op-agnostic (`any`) pipeline. To veto or fail a pass from a hook, call
    `pass_.signal_pass_failure()` in `run_before_pass` or `run_after_pass`.
    """

    def run_before_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        pass

    def run_after_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        pass

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        pass

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        pass

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        pass

    def run_before_analysis(self, name: str, analysis: type, op: Operation) -> None:
        pass

    def run_after_analysis(self, name: str, analysis: type, op: Operation) -> None:
        pass


_HOOKS = (
    "run_before_pipeline",
    "run_after_pipeline",
    "run_before_pass",
    "run_after_pass",
    "run_after_pass_failed",
    "run_before_analysis",
    "run_after_analysis",
)


class PassInstrumentor:
    """Calls the registered instrumentations; skips those that override no hook."""

    def __init__(self) -> None:
        self._instrumentations: list[PassInstrumentation] = []
        self._lock = threading.RLock()
        self._by_hook: dict[str, list[PassInstrumentation]] = {h: [] for h in _HOOKS}

    def add(self, instrumentation: PassInstrumentation, *, first: bool = False) -> None:
        """Register `instrumentation` last (or `first`: its before-hooks run first
        and its after-hooks last, as mlir-opt registers its crash reproducer)."""
        with self._lock:
            position = 0 if first else len(self._instrumentations)
            self._instrumentations.insert(position, instrumentation)
            for hook in _HOOKS:
                if getattr(type(instrumentation), hook) is not getattr(
                    PassInstrumentation, hook
                ):
                    targets = self._by_hook[hook]
                    targets.insert(0 if first else len(targets), instrumentation)

    @property
    def instrumentations(self) -> tuple[PassInstrumentation, ...]:
        return tuple(self._instrumentations)

    def __bool__(self) -> bool:
        """False when no registered instrumentation overrides any hook, so the
        runner can skip hook dispatch altogether."""
        return any(self._by_hook.values())

    def _call(self, hook: str, reverse: bool, *args: object) -> None:
        targets = self._by_hook[hook]
        if not targets:
            return
        with self._lock:
            for inst in reversed(targets) if reverse else targets:
                try:
                    getattr(inst, hook)(*args)
                except PassflowError:
                    raise
                except Exception as err:
                    raise InstrumentationError(
                        f"instrumentation {type(inst).__name__}.{hook} raised "
                        f"{type(err).__name__}: {err}"
                    ) from err

    def run_before_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        self._call("run_before_pipeline", False, op_name, parent)

    def run_after_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        self._call("run_after_pipeline", True, op_name, parent)

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        self._call("run_before_pass", False, pass_, op)

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        self._call("run_after_pass", True, pass_, op)

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        self._call("run_after_pass_failed", True, pass_, op)

    def run_before_analysis(self, name: str, analysis: type, op: Operation) -> None:
        self._call("run_before_analysis", False, name, analysis, op)

    def run_after_analysis(self, name: str, analysis: type, op: Operation) -> None:
        self._call("run_after_analysis", True, name, analysis, op)
