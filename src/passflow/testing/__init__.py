"""Test passes mirroring MLIR's `test-*` passes; registered with the built-ins."""

from passflow.testing.passes import (
    TestDynamicPipelinePass,
    TestFailurePass,
    TestFunctionPass,
    TestInterfacePass,
    TestInvalidIRPass,
    TestInvalidParentPass,
    TestModulePass,
    TestPassCrash,
    TestStatisticPass,
)

__all__ = [
    "TestDynamicPipelinePass",
    "TestFailurePass",
    "TestFunctionPass",
    "TestInterfacePass",
    "TestInvalidIRPass",
    "TestInvalidParentPass",
    "TestModulePass",
    "TestPassCrash",
    "TestStatisticPass",
]
