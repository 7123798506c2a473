"""Pipeline graphs (seed 004): named pipelines scheduled by their dependencies,
with run-time jumps between them.

    graph = PipelineGraph("my-compiler")
    graph.register_pipeline("frontend", populate=add_frontend_passes)
    graph.register_pipeline("lower", predecessors=["frontend"], populate=...)
    graph.register_pipeline(
        "simplify", predecessors=["frontend"], successors=["lower"],
        jump_targets=["simplify"], populate=...,
    )
    schedule = graph.create_schedule()   # checks names and cycles, orders
    trace = schedule.run(module)         # a PassManager.run, jumps followed
    schedule.register()                  # builtin.module(my-compiler) in pipelines

See docs/graph.md for the guide, and `errors` for what each misuse raises.
"""

from passflow.graph.errors import (
    JumpLimitError,
    PipelineCycleError,
    PipelineGraphError,
    PipelineNameError,
    ScheduleRunError,
    SubgraphBoundaryError,
    UndeclaredJumpError,
    UnknownPipelineError,
)
from passflow.graph.execution import (
    JUMP_TARGET_ATTRIBUTE,
    JumpTaken,
    PipelineRan,
    PipelineSchedulePass,
    ScheduleFailure,
    ScheduleTrace,
    TraceEvent,
)
from passflow.graph.export import ExportFormat, dump_pipeline_graphs, find_schedules
from passflow.graph.pipeline_graph import (
    PipelineGraph,
    PopulatePipeline,
    PopulateSubgraph,
)
from passflow.graph.schedule import (
    DEFAULT_MAX_JUMPS_PER_EDGE,
    Dependency,
    PipelineSchedule,
    ScheduledPipeline,
)

__all__ = [
    "DEFAULT_MAX_JUMPS_PER_EDGE",
    "JUMP_TARGET_ATTRIBUTE",
    "Dependency",
    "ExportFormat",
    "JumpLimitError",
    "JumpTaken",
    "PipelineCycleError",
    "PipelineGraph",
    "PipelineGraphError",
    "PipelineNameError",
    "PipelineRan",
    "PipelineSchedule",
    "PipelineSchedulePass",
    "PopulatePipeline",
    "PopulateSubgraph",
    "ScheduleFailure",
    "ScheduleRunError",
    "ScheduleTrace",
    "ScheduledPipeline",
    "SubgraphBoundaryError",
    "TraceEvent",
    "UndeclaredJumpError",
    "UnknownPipelineError",
    "dump_pipeline_graphs",
    "find_schedules",
]
