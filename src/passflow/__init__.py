"""passflow: MLIR's pass infrastructure on the xDSL IR.

The public API is re-exported here; importing passflow has no side effects.
"""

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
from passflow.manager import Nesting, OpPassManager, OpToOpPassAdaptor, PassManager
from passflow.pass_base import InterfacePass, OperationPass, Pass
from passflow.statistics import Statistic

__all__ = [
    "AnalysisManager",
    "Diagnostic",
    "IRParseError",
    "InstrumentationError",
    "InterfacePass",
    "Location",
    "Nesting",
    "OpPassManager",
    "OpToOpPassAdaptor",
    "OperationPass",
    "OptionError",
    "Pass",
    "PassInstrumentation",
    "PassManager",
    "PassNestingError",
    "PassPipelineError",
    "PassflowError",
    "PipelineParentInfo",
    "PipelineParseError",
    "PreservedAnalyses",
    "RegistrationError",
    "Severity",
    "Statistic",
]
