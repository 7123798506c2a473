"""A pass manager's diagnostic engine that also shows each diagnostic to an
observer (the run report, the IR history), so that it lands beside the pass
that made it; delivery to the handlers is unchanged."""

from __future__ import annotations

from typing import Protocol

from passflow.diagnostics import Diagnostic, DiagnosticEngine

__all__ = ["DiagnosticObserver", "ObservedDiagnostics"]


class DiagnosticObserver(Protocol):
    """What watches diagnostics as they are delivered."""

    def observe(self, diagnostic: Diagnostic) -> None: ...


class ObservedDiagnostics(DiagnosticEngine):
    """`inner`'s handlers (shared, not copied), plus `observer`."""

    def __init__(self, inner: DiagnosticEngine, observer: DiagnosticObserver) -> None:
        super().__init__()
        self.handlers = inner.handlers
        self.observer = observer

    def deliver(self, diagnostic: Diagnostic) -> None:
        self.observer.observe(diagnostic)
        super().deliver(diagnostic)
