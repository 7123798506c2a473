"""Test passes mirroring MLIR's `test-*` passes, and MLIR's `test` dialect;
registered with the built-ins."""

from passflow.testing.passes import (
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
