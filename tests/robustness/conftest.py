"""Warm-up for the robustness suite, so the per-example deadline measures the
input and not a first import (xDSL's pass modules, dialects, passflow-opt)."""

from __future__ import annotations

import pytest

from passflow import ir, registry
from passflow.tools import opt

from .grammar import NATIVE_PASSES, PIPELINES, XDSL_PASSES
from .support import gc_kept


@pytest.fixture(scope="session", autouse=True)
def warm(tmp_path_factory: pytest.TempPathFactory) -> None:
    for name in NATIVE_PASSES + PIPELINES + XDSL_PASSES:
        registry.lookup(name)
    ir.parse_module("func.func @f() { func.return }", ir.default_context())
    source = tmp_path_factory.mktemp("warm") / "in.mlir"
    source.write_text("func.func @f() { func.return }\n")
    with gc_kept():
        opt.main([str(source), "--mlir-disable-threading", "-o", f"{source}.out"])
