"""passflow: MLIR's pass infrastructure on the xDSL IR.

Everything a user of passflow writes is importable from here: passes and pass
managers, options and statistics, registration and textual pipelines,
instrumentation, executors, actions and remarks, the diagnostics they raise,
and `ir`, the bridge to xDSL (`ir.parse_module`, `ir.print_op`, ...). Two
subpackages hold the rest of their layers: `passflow.builder` (the Pass Manager
Builder) and `passflow.graph` (the PipelineGraph); `passflow.remarks` adds the
remark argument helpers (`add`, `reason`, `suggest`, `metric`).

Importing passflow has no side effects: no pass is registered and no plugin is
loaded. `register_all_passes()` registers passflow's passes by name, as
mlir-opt's `registerAllPasses()` (passflow-opt calls it; a program that does
not finds them through passflow's `passflow.passes` entry points on its first
unknown name). It imports nothing either: every name loads its module on first use
(`from passflow import PassManager` loads the pass manager and what it needs,
not the executors, the builder or the graph), so a program, and passflow-opt,
pays at start-up only for the layers it uses.

The one thing it does is check the installed xDSL: one outside the supported
range (`passflow.xdsl_version.SUPPORTED_XDSL`) is an `ImportError` saying which
range and how to install it.
"""

from typing import TYPE_CHECKING

from passflow.lazy import lazy_exports as _lazy_exports
from passflow.xdsl_version import check_xdsl_version as _check_xdsl_version

_check_xdsl_version()

if TYPE_CHECKING:
    from passflow import ir
    from passflow.actions import DebugCounter, ExecutionContext
    from passflow.all_passes import register_all_passes
    from passflow.analyses import DominanceInfo, Liveness
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
    from passflow.executors import (
        DaskExecutor,
        ProcessExecutor,
        SerialExecutor,
        ShippingExecutor,
        ThreadExecutor,
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
    from passflow.instruments.action_logging import ActionLogger
    from passflow.instruments.action_profiler import ActionProfiler
    from passflow.instruments.history_store import HistoryFile
    from passflow.instruments.ir_history import IRHistory
    from passflow.instruments.ir_printer_config import IRPrinterConfig
    from passflow.instruments.report import RunReport
    from passflow.manager import Nesting, OpPassManager, OpToOpPassAdaptor
    from passflow.options import ListOption, Option, PipelineOptions
    from passflow.pass_base import InterfacePass, OperationPass, Pass
    from passflow.pass_manager import PassDisplayMode, PassManager
    from passflow.pipeline_text import parse_pass_pipeline, parse_pass_pipeline_into
    from passflow.registry import (
        load_plugin,
        register_lazy,
        register_pass,
        register_pipeline,
    )
    from passflow.remarks import (
        RemarkCategories,
        RemarkEngine,
        RemarkKind,
        RemarkOpts,
        YamlRemarkStreamer,
    )
    from passflow.statistics import Statistic
    from passflow.tools.action_options import action_session, add_action_flags
    from passflow.tools.command_line import CommandLineError, FlagParser
    from passflow.tools.pass_manager_options import (
        PassManagerOptions,
        add_pass_manager_flags,
    )
    from passflow.tools.remark_options import add_remark_flags, remark_session
    from passflow.xdsl_pipeline import (
        PassflowPass,
        from_xdsl_pipeline,
        to_xdsl_pipeline,
    )

__version__ = "0.1.0"
"""passflow's version (the package metadata's, which reads it from here)."""

_MODULES = {
    "passflow.actions": ("DebugCounter", "ExecutionContext"),
    "passflow.all_passes": ("register_all_passes",),
    "passflow.analyses": ("DominanceInfo", "Liveness"),
    "passflow.analysis": ("AnalysisManager", "PreservedAnalyses"),
    "passflow.builder": ("PassKind", "PipelineBuilder"),
    "passflow.diagnostics": (
        "Diagnostic",
        "IRParseError",
        "Location",
        "OptionError",
        "PassflowError",
        "PassNestingError",
        "PassPipelineError",
        "PipelineParseError",
        "RegistrationError",
        "Severity",
    ),
    "passflow.executors": (
        "DaskExecutor",
        "ProcessExecutor",
        "SerialExecutor",
        "ShippingExecutor",
        "ThreadExecutor",
    ),
    "passflow.graph": (
        "JumpLimitError",
        "PipelineCycleError",
        "PipelineGraph",
        "PipelineGraphError",
        "PipelineNameError",
        "PipelineSchedule",
        "ScheduleRunError",
        "SubgraphBoundaryError",
        "UndeclaredJumpError",
        "UnknownPipelineError",
    ),
    "passflow.instrumentation": (
        "InstrumentationError",
        "PassInstrumentation",
        "PipelineParentInfo",
    ),
    "passflow.instruments.action_logging": ("ActionLogger",),
    "passflow.instruments.action_profiler": ("ActionProfiler",),
    "passflow.instruments.ir_printer_config": ("IRPrinterConfig",),
    "passflow.instruments.history_store": ("HistoryFile",),
    "passflow.instruments.ir_history": ("IRHistory",),
    "passflow.instruments.report": ("RunReport",),
    "passflow.manager": ("Nesting", "OpPassManager", "OpToOpPassAdaptor"),
    "passflow.options": ("ListOption", "Option", "PipelineOptions"),
    "passflow.pass_base": ("InterfacePass", "OperationPass", "Pass"),
    "passflow.pass_manager": ("PassDisplayMode", "PassManager"),
    "passflow.pipeline_text": ("parse_pass_pipeline", "parse_pass_pipeline_into"),
    "passflow.registry": (
        "load_plugin",
        "register_lazy",
        "register_pass",
        "register_pipeline",
    ),
    "passflow.remarks": (
        "RemarkCategories",
        "RemarkEngine",
        "RemarkKind",
        "RemarkOpts",
        "YamlRemarkStreamer",
    ),
    "passflow.statistics": ("Statistic",),
    "passflow.tools.action_options": ("action_session", "add_action_flags"),
    "passflow.tools.command_line": ("CommandLineError", "FlagParser"),
    "passflow.tools.pass_manager_options": (
        "PassManagerOptions",
        "add_pass_manager_flags",
    ),
    "passflow.tools.remark_options": ("add_remark_flags", "remark_session"),
    "passflow.xdsl_pipeline": (
        "PassflowPass",
        "from_xdsl_pipeline",
        "to_xdsl_pipeline",
    ),
}
"""Each module passflow re-exports from, and the names it takes from it."""

__getattr__ = _lazy_exports(__name__, {**_MODULES, "passflow.ir": ("ir",)})


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
    "HistoryFile",
    "IRHistory",
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
    "PassDisplayMode",
    "PassInstrumentation",
    "PassKind",
    "PassManager",
    "PassManagerOptions",
    "PassNestingError",
    "PassPipelineError",
    "PassflowError",
    "PassflowPass",
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
    "from_xdsl_pipeline",
    "ir",
    "load_plugin",
    "parse_pass_pipeline",
    "parse_pass_pipeline_into",
    "register_all_passes",
    "register_lazy",
    "register_pass",
    "register_pipeline",
    "remark_session",
    "to_xdsl_pipeline",
]
