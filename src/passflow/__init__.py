"""passflow: MLIR's pass infrastructure on the xDSL IR.

The public API is re-exported here; importing passflow has no side effects.
"""

from passflow.analysis import AnalysisManager, PreservedAnalyses
from passflow.builder import PassKind, PipelineBuilder
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
from passflow.instrumentation import (
    InstrumentationError,
    PassInstrumentation,
    PipelineParentInfo,
)
from passflow.manager import Nesting, OpPassManager, OpToOpPassAdaptor, PassManager
from passflow.pass_base import InterfacePass, OperationPass, Pass
from passflow.statistics import Statistic

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
