"""passflow: MLIR's pass infrastructure on the xDSL IR.

The public API is re-exported here; importing passflow has no side effects. The
builder and graph layers load on first use, so tools that do not use them start
faster.
"""

import importlib
from typing import TYPE_CHECKING

from passflow.analysis import AnalysisManager, PreservedAnalyses
from passflow.diagnostics import (
    Diagnostic,
    IRParseError,
    Location,
    OptionError,
    PassflowError,
    PassNestingError,
    PassPipelineError,
    PipelineParseError,
    RegistrationError,
    Severity,
)
from passflow.instrumentation import (
    InstrumentationError,
    PassInstrumentation,
    PipelineParentInfo,
)
from passflow.manager import Nesting, OpPassManager, OpToOpPassAdaptor
from passflow.pass_base import InterfacePass, OperationPass, Pass
from passflow.pass_manager import PassManager
from passflow.statistics import Statistic

if TYPE_CHECKING:
    from passflow.builder import PassKind, PipelineBuilder
    from passflow.graph import (
        JumpLimitError,
        PipelineCycleError,
        PipelineGraph,
        PipelineGraphError,
        PipelineNameError,
        PipelineSchedule,
        ScheduleRunError,
        SubgraphBoundaryError,
        UndeclaredJumpError,
        UnknownPipelineError,
    )

__version__ = "0.1.0"
"""passflow's version (the package metadata's, which reads it from here)."""

_LAZY = {
    "PassKind": "passflow.builder",
    "PipelineBuilder": "passflow.builder",
    "JumpLimitError": "passflow.graph",
    "PipelineCycleError": "passflow.graph",
    "PipelineGraph": "passflow.graph",
    "PipelineGraphError": "passflow.graph",
    "PipelineNameError": "passflow.graph",
    "PipelineSchedule": "passflow.graph",
    "ScheduleRunError": "passflow.graph",
    "SubgraphBoundaryError": "passflow.graph",
    "UndeclaredJumpError": "passflow.graph",
    "UnknownPipelineError": "passflow.graph",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'passflow' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "AnalysisManager",
    "Diagnostic",
    "IRParseError",
    "InstrumentationError",
    "InterfacePass",
    "JumpLimitError",
    "Location",
    "Nesting",
    "OpPassManager",
    "OpToOpPassAdaptor",
    "OperationPass",
    "OptionError",
    "Pass",
    "PassInstrumentation",
    "PassKind",
    "PassManager",
    "PassNestingError",
    "PassPipelineError",
    "PassflowError",
    "PipelineBuilder",
    "PipelineCycleError",
    "PipelineGraph",
    "PipelineGraphError",
    "PipelineNameError",
    "PipelineParentInfo",
    "PipelineParseError",
    "PipelineSchedule",
    "PreservedAnalyses",
    "RegistrationError",
    "ScheduleRunError",
    "Severity",
    "Statistic",
    "SubgraphBoundaryError",
    "UndeclaredJumpError",
    "UnknownPipelineError",
]
