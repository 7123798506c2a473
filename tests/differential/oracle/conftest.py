"""Print what the oracle's sweeps covered at the end of the pytest session."""

from __future__ import annotations

import pytest

from .summary import SWEEPS


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not SWEEPS:
        return
    terminalreporter.section("validity oracle: generated programs")
    for tally in SWEEPS:
        terminalreporter.write_line(tally.line())
