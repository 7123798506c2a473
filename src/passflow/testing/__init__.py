"""Test passes mirroring MLIR's `test-*` passes, and MLIR's `test` dialect;
registered with the built-ins.

As with `passflow.transforms`, importing this package registers the passes and
pipelines by name only; their modules are imported when a pipeline names one, or
a class is taken from this package.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

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

for _argument, (_module, _name) in _REGISTERED.items():
    register_lazy(_argument, f"{_module}:{_name}")


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module = _REMARK_PASSES if name == "TestRemarkPass" else _PASSES
    return getattr(importlib.import_module(module), name)
