"""Print the differential suite's counts at the end of the pytest session."""

from __future__ import annotations

import pytest

from .summary import SUMMARY


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not SUMMARY.cases:
        return
    terminalreporter.section("xDSL corpus: xdsl-opt vs passflow-opt")
    for line in SUMMARY.lines():
        terminalreporter.write_line(line)
