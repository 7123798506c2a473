"""Test passes mirroring MLIR's `test-*` passes, and MLIR's `test` dialect;
registered with the built-ins.

As with `passflow.transforms`, `register()` registers the passes and pipelines by
name only (and the `test` dialect, in place of xDSL's); their modules are
imported when a pipeline names one, an input uses the dialect, or a class is
taken from this package. Importing this package registers nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from passflow import ir
from passflow.registry import register_lazy

if TYPE_CHECKING:
    from passflow.testing.passes import (
        TestBusyWorkPass,
        TestDynamicPipelinePass,
        TestEnum,
        TestFailurePass,
        TestFunctionPass,
        TestInterfacePass,
        TestInvalidIRPass,
        TestInvalidParentPass,
        TestLivenessPass,
        TestModulePass,
        TestOptionsPass,
        TestOptionsPipelineOptions,
        TestOptionsSuperPass,
        TestOptionsSuperPipelineOptions,
        TestPassCrash,
        TestPatternDriver,
        TestStatisticPass,
    )
    from passflow.testing.remark_passes import TestRemarkPass

__all__ = [
    "TestBusyWorkPass",
    "TestDynamicPipelinePass",
    "TestEnum",
    "TestFailurePass",
    "TestFunctionPass",
    "TestInterfacePass",
    "TestInvalidIRPass",
    "TestInvalidParentPass",
    "TestLivenessPass",
    "TestModulePass",
    "TestOptionsPass",
    "TestOptionsPipelineOptions",
    "TestOptionsSuperPass",
    "TestOptionsSuperPipelineOptions",
    "TestPassCrash",
    "TestPatternDriver",
    "TestRemarkPass",
    "TestStatisticPass",
]

_PASSES = "passflow.testing.passes"
_REMARK_PASSES = "passflow.testing.remark_passes"

_REGISTERED: dict[str, tuple[str, str]] = {
    "test-module-pass": (_PASSES, "TestModulePass"),
    "test-function-pass": (_PASSES, "TestFunctionPass"),
    "test-interface-pass": (_PASSES, "TestInterfacePass"),
    "test-pass-crash": (_PASSES, "TestPassCrash"),
    "test-pass-crash-on-op": (_PASSES, "TestPassCrashOnOp"),
    "test-pass-failure": (_PASSES, "TestFailurePass"),
    "test-busy-work": (_PASSES, "TestBusyWorkPass"),
    "test-pass-create-invalid-ir": (_PASSES, "TestInvalidIRPass"),
    "test-pass-invalid-parent": (_PASSES, "TestInvalidParentPass"),
    "test-stats-pass": (_PASSES, "TestStatisticPass"),
    "test-dynamic-pipeline": (_PASSES, "TestDynamicPipelinePass"),
    "test-options-pass": (_PASSES, "TestOptionsPass"),
    "test-options-super-pass": (_PASSES, "TestOptionsSuperPass"),
    "test-print-liveness": (_PASSES, "TestLivenessPass"),
    "test-patterns": (_PASSES, "TestPatternDriver"),
    "test-remark": (_REMARK_PASSES, "TestRemarkPass"),
    "test-options-pass-pipeline": (_PASSES, "_options_pipeline"),
    "test-options-super-pass-pipeline": (_PASSES, "_options_super_pipeline"),
    "test-pm-nested-pipeline": (_PASSES, "_nested_pipeline"),
    "test-textual-pm-nested-pipeline": (_PASSES, "_textual_nested_pipeline"),
    "test-dump-pipeline": (_PASSES, "_dump_pipeline"),
}
"""Each pass's and pipeline's argument, module, and class or builder."""


def register() -> None:
    """Register the test passes and pipelines by name, and the `test` dialect."""
    for argument, (module, name) in _REGISTERED.items():
        register_lazy(argument, f"{module}:{name}")
    ir.register_dialect("test", _test_dialect)


def _test_dialect() -> ir.Dialect:
    """MLIR's `test` dialect (imported when an input first uses it)."""
    return importlib.import_module("passflow.testing.test_dialect").DIALECT


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _REMARK_PASSES if name == "TestRemarkPass" else _PASSES
    return getattr(importlib.import_module(module), name)
