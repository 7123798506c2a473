"""Shared fixtures: a context that allows unregistered ops and a parser for it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from passflow import ir


@pytest.fixture
def ctx() -> ir.Context:
    return ir.default_context(allow_unregistered=True)


@pytest.fixture
def parse(ctx: ir.Context) -> Callable[[str], ir.ModuleOp]:
    def _parse(text: str) -> ir.ModuleOp:
        return ir.parse_module(text, ctx, "input.mlir")

    return _parse
