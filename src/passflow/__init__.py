"""passflow: MLIR's pass infrastructure on the xDSL IR.

Everything a user of passflow writes is importable from here: passes and pass
managers, options and statistics, registration and textual pipelines,
instrumentation, executors, actions and remarks, the diagnostics they raise,
and `ir`, the bridge to xDSL (`ir.parse_module`, `ir.print_op`, ...). Two
subpackages hold the rest of their layers: `passflow.builder` (the Pass Manager
Builder) and `passflow.graph` (the PipelineGraph); `passflow.remarks` adds the
remark argument helpers (`add`, `reason`, `suggest`, `metric`).

Importing passflow has no side effects: no pass is registered and no plugin is
loaded. The registry, textual pipelines, analyses, the builder, the graph and
the command-line layers load on first use of one of their names, so a program
that does not use them starts faster.
"""

import importlib
from typing import TYPE_CHECKING

from passflow import ir
from passflow.actions import DebugCounter, ExecutionContext
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
from passflow.executors import (
    DaskExecutor,
    ProcessExecutor,
    SerialExecutor,
    ShippingExecutor,
    ThreadExecutor,
)
from passflow.instrumentation import (
    InstrumentationError,
    PassInstrumentation,
    PipelineParentInfo,
)
from passflow.instruments import IRPrinterConfig, RunReport
from passflow.instruments.action_logging import ActionLogger
from passflow.instruments.action_profiler import ActionProfiler
from passflow.manager import Nesting, OpPassManager, OpToOpPassAdaptor
from passflow.options import ListOption, Option, PipelineOptions
from passflow.pass_base import InterfacePass, OperationPass, Pass
from passflow.pass_manager import PassManager
from passflow.remarks import (
    RemarkCategories,
    RemarkEngine,
    RemarkKind,
    RemarkOpts,
    YamlRemarkStreamer,
)
from passflow.statistics import Statistic

if TYPE_CHECKING:
    from passflow.analyses import DominanceInfo, Liveness
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
    from passflow.pipeline_text import parse_pass_pipeline, parse_pass_pipeline_into
    from passflow.registry import register_pass, register_pipeline
    from passflow.tools.action_options import action_session, add_action_flags
    from passflow.tools.command_line import CommandLineError, FlagParser
    from passflow.tools.pass_manager_options import (
        PassManagerOptions,
        add_pass_manager_flags,
    )
    from passflow.tools.remark_options import add_remark_flags, remark_session

__version__ = "0.1.0"
"""passflow's version (the package metadata's, which reads it from here)."""

_LAZY = {
    "DominanceInfo": "passflow.analyses",
    "Liveness": "passflow.analyses",
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
    "parse_pass_pipeline": "passflow.pipeline_text",
    "parse_pass_pipeline_into": "passflow.pipeline_text",
    "register_pass": "passflow.registry",
    "register_pipeline": "passflow.registry",
    "action_session": "passflow.tools.action_options",
    "add_action_flags": "passflow.tools.action_options",
    "CommandLineError": "passflow.tools.command_line",
    "FlagParser": "passflow.tools.command_line",
    "PassManagerOptions": "passflow.tools.pass_manager_options",
    "add_pass_manager_flags": "passflow.tools.pass_manager_options",
    "add_remark_flags": "passflow.tools.remark_options",
    "remark_session": "passflow.tools.remark_options",
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'passflow' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "ActionLogger",
    "ActionProfiler",
    "AnalysisManager",
    "CommandLineError",
    "DaskExecutor",
    "DebugCounter",
    "Diagnostic",
    "DominanceInfo",
    "ExecutionContext",
    "FlagParser",
    "IRParseError",
    "IRPrinterConfig",
    "InstrumentationError",
    "InterfacePass",
    "JumpLimitError",
    "ListOption",
    "Liveness",
    "Location",
    "Nesting",
    "OpPassManager",
    "OpToOpPassAdaptor",
    "OperationPass",
    "Option",
    "OptionError",
    "Pass",
    "PassInstrumentation",
    "PassKind",
    "PassManager",
    "PassManagerOptions",
    "PassNestingError",
    "PassPipelineError",
    "PassflowError",
    "PipelineBuilder",
    "PipelineCycleError",
    "PipelineGraph",
    "PipelineGraphError",
    "PipelineNameError",
    "PipelineOptions",
    "PipelineParentInfo",
    "PipelineParseError",
    "PipelineSchedule",
    "PreservedAnalyses",
    "ProcessExecutor",
    "RegistrationError",
    "RemarkCategories",
    "RemarkEngine",
    "RemarkKind",
    "RemarkOpts",
    "RunReport",
    "ScheduleRunError",
    "SerialExecutor",
    "Severity",
    "ShippingExecutor",
    "Statistic",
    "SubgraphBoundaryError",
    "ThreadExecutor",
    "UndeclaredJumpError",
    "UnknownPipelineError",
    "YamlRemarkStreamer",
    "action_session",
    "add_action_flags",
    "add_pass_manager_flags",
    "add_remark_flags",
    "ir",
    "parse_pass_pipeline",
    "parse_pass_pipeline_into",
    "register_pass",
    "register_pipeline",
    "remark_session",
]
