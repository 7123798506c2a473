"""`CapturedOutput`: text a child wrote to the standard streams, kept among its
diagnostics.

It is data only (no capture machinery, no IR), so that what replays a run's
events (passflow-opt, the result cache's warm path) can read it without
loading the executors.
"""

from __future__ import annotations

from dataclasses import dataclass

from passflow.diagnostics import Diagnostic

__all__ = ["CapturedOutput"]


@dataclass
class CapturedOutput(Diagnostic):
    """Text written to `sys.stdout` or `sys.stderr` (`stream`) while a child ran
    on a parallel executor, as `message`.

    It travels in the child's list of captured diagnostics, where it was
    written, so that `replay_diagnostics` writes it between the same diagnostics
    as a serial run would have; it is never emitted as a diagnostic."""

    stream: str = "stderr"
