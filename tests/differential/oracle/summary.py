"""The sweeps of this session, for its terminal summary (`conftest.py`)."""

from __future__ import annotations

from .sweep import Tally

__all__ = ["SWEEPS"]

SWEEPS: list[Tally] = []
"""Each `sweep` a test of this session ran, with what it covered and found."""
