"""Pipeline graphs (the "PipelineGraph" RFC): named pipelines scheduled by their
dependencies, with run-time choices and jumps between them.

    graph = PipelineGraph("my-compiler")
    graph.register_pipeline("frontend", populate=add_frontend_passes)
    graph.register_pipeline("lower", predecessors=["frontend"], populate=...)
    graph.register_pipeline(
        "simplify", predecessors=["frontend"], successors=["lower"],
        jump_targets=["simplify"], populate="func.func(cse)",
    )
    graph.register_choice(                # exactly one of them runs
        "device", ["gpu", "cpu"], predecessors=["simplify"], successors=["lower"],
        select=lambda op: "gpu" if wants_gpu(op) else "cpu",
    )
    schedule = graph.create_schedule()   # checks names, cycles, choices, jumps
    trace = schedule.run(module)         # a PassManager.run, jumps followed
    register_graph(graph)                # builtin.module(my-compiler) in pipelines

See docs/graph.md for the guide, and `errors` for what each misuse raises.
"""

from passflow.graph.declaration import (
    CONVERGENCE_POLICIES,
    ConvergencePolicy,
    Declaration,
    PopulatePipeline,
    SelectAlternative,
)
from passflow.graph.errors import (
    AmbiguousJumpError,
    ChoiceError,
    ChoiceSelectionError,
    JumpLimitError,
    PipelineCycleError,
    PipelineGraphError,
    PipelineNameError,
    ScheduleRunError,
    SkippedPredecessorError,
    SubgraphBoundaryError,
    UndeclaredJumpError,
    UnknownPipelineError,
)
from passflow.graph.execution import (
    JUMP_TARGET_ATTRIBUTE,
    AlternativeChosen,
    JumpTaken,
    LoopStopped,
    PipelineRan,
    PipelineSchedulePass,
    ScheduleFailure,
    ScheduleTrace,
    TraceEvent,
)
from passflow.graph.export import ExportFormat, dump_pipeline_graphs, find_schedules
from passflow.graph.pipeline_graph import PipelineGraph, PopulateSubgraph
from passflow.graph.registered import (
    ExtendGraph,
    GraphPipeline,
    extend_graph,
    lookup_graph,
    register_graph,
    registered_schedule,
)
from passflow.graph.schedule import PipelineSchedule
from passflow.graph.scheduled import (
    DEFAULT_MAX_JUMPS_PER_EDGE,
    Dependency,
    ScheduledChoice,
    ScheduledGraph,
    ScheduledPipeline,
)
from passflow.graph.stage_source import PipelineSource, StageSource

__all__ = [
    "CONVERGENCE_POLICIES",
    "DEFAULT_MAX_JUMPS_PER_EDGE",
    "JUMP_TARGET_ATTRIBUTE",
    "AlternativeChosen",
    "AmbiguousJumpError",
    "ChoiceError",
    "ChoiceSelectionError",
    "ConvergencePolicy",
    "Declaration",
    "Dependency",
    "ExportFormat",
    "ExtendGraph",
    "GraphPipeline",
    "JumpLimitError",
    "JumpTaken",
    "LoopStopped",
    "PipelineCycleError",
    "PipelineGraph",
    "PipelineGraphError",
    "PipelineNameError",
    "PipelineRan",
    "PipelineSchedule",
    "PipelineSchedulePass",
    "PipelineSource",
    "PopulatePipeline",
    "PopulateSubgraph",
    "ScheduleFailure",
    "ScheduleRunError",
    "ScheduleTrace",
    "ScheduledChoice",
    "ScheduledGraph",
    "ScheduledPipeline",
    "SelectAlternative",
    "SkippedPredecessorError",
    "StageSource",
    "SubgraphBoundaryError",
    "TraceEvent",
    "UndeclaredJumpError",
    "UnknownPipelineError",
    "dump_pipeline_graphs",
    "extend_graph",
    "find_schedules",
    "lookup_graph",
    "register_graph",
    "registered_schedule",
]
