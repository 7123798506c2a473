"""The action log (`--log-actions-to`): one line when an action begins, one when
it completes, in mlir-opt's words.

    [thread passflow-opt] begins (no breakpoint) Action `pass-execution` running `CSE` on Operation `func.func` (func.func @f() {...})`
    [thread passflow-opt] completed `pass-execution`

Lines nest as the actions did: the nested-pipeline adaptor's action begins
before, and completes after, the actions of the passes it runs. A skipped action
logs `skipping` instead of `begins` and no completion. Location filters
(`--log-mlir-actions-filter`) restrict the log to actions on ops from given
source locations.
"""

from __future__ import annotations

import threading
from typing import TextIO

from passflow.actions import (
    ActionActiveStack,
    Breakpoint,
    BreakpointManager,
    ExecutionObserver,
    describe_ir_unit,
    thread_name,
)

__all__ = ["ActionLogger"]


class ActionLogger(ExecutionObserver):
    """Logs actions to `stream` (MLIR's `tracing::ActionLogger`).

    `print_actions` describes each action (else only its tag),
    `print_breakpoints` says which breakpoint it hit, and `print_ir_units`
    shows the ops it touches, regions elided. With breakpoint managers added,
    only actions that hit one of their breakpoints are logged.
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        print_actions: bool = True,
        print_breakpoints: bool = True,
        print_ir_units: bool = True,
    ) -> None:
        self.stream = stream
        self.print_actions = print_actions
        self.print_breakpoints = print_breakpoints
        self.print_ir_units = print_ir_units
        self.breakpoint_managers: list[BreakpointManager] = []
        self._lock = threading.Lock()

    def add_breakpoint_manager(self, manager: BreakpointManager) -> None:
        """Log only actions that hit a breakpoint of `manager` (or of another
        manager added)."""
        self.breakpoint_managers.append(manager)

    def should_log(self, stack: ActionActiveStack) -> bool:
        managers = self.breakpoint_managers
        if not managers:
            return True
        return any(m.match(stack.action) is not None for m in managers)

    def before_execute(
        self,
        stack: ActionActiveStack,
        breakpoint: Breakpoint | None,
        will_execute: bool,
    ) -> None:
        if not self.should_log(stack):
            return
        action = stack.action
        parts = [f"[thread {thread_name()}] "]
        parts.append("begins " if will_execute else "skipping ")
        if self.print_breakpoints:
            parts.append(
                f"(on breakpoint: {breakpoint}) "
                if breakpoint is not None
                else "(no breakpoint) "
            )
        parts.append("Action ")
        parts.append(str(action) if self.print_actions else action.tag)
        if self.print_ir_units:
            units = ", ".join(describe_ir_unit(op) for op in action.ir_units)
            parts.append(f" ({units})")
        parts.append("`\n")
        self._write("".join(parts))

    def after_execute(self, stack: ActionActiveStack) -> None:
        if not self.should_log(stack):
            return
        self._write(f"[thread {thread_name()}] completed `{stack.action.tag}`\n")

    def _write(self, text: str) -> None:
        with self._lock:
            self.stream.write(text)
