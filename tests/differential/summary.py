"""The session's results, printed by `conftest.pytest_terminal_summary`."""

from __future__ import annotations

from .harness import Summary

__all__ = ["SUMMARY"]

SUMMARY = Summary()
