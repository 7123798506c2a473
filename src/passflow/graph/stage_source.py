"""What a stage's passes may come from: a function, pipeline text, a builder, or
xDSL's passes (a `ModulePass` or a `PassPipeline`).

A stage is filled by `populate(pm)`. Pipeline text and pipeline builder objects
are turned into such a function here, so that a stage written as
`"func.func(cse)"` or built with the Pass Manager Builder lands in the stage's
pass manager exactly once, never nested twice.
"""

from __future__ import annotations

from typing import Protocol, cast, runtime_checkable

from xdsl.passes import ModulePass, PassPipeline

from passflow.graph.declaration import PopulatePipeline
from passflow.graph.errors import PipelineGraphError
from passflow.manager import OpPassManager
from passflow.pipeline_text import (
    parse_pass_pipeline,
    parse_pass_pipeline_into,
    parse_pipeline_elements,
)
from passflow.xdsl_adapter import is_module_pass

__all__ = ["PipelineSource", "StageSource", "as_populate", "copy_source"]


@runtime_checkable
class PipelineSource(Protocol):
    """Anything that builds a pass pipeline, such as `passflow.builder.PipelineBuilder`.

    The graph only asks it for `build()`, once per schedule created, so the
    object can still be edited (an extension inserting a pass inside the stage)
    until the schedule is built. The graph does not depend on the builder.
    """

    def build(self) -> OpPassManager: ...


@runtime_checkable
class CopyableSource(Protocol):
    """A pipeline source that can copy itself, as `PipelineBuilder.copy()` does."""

    def build(self) -> OpPassManager: ...

    def copy(self) -> PipelineSource: ...


StageSource = (
    PopulatePipeline
    | str
    | PipelineSource
    | ModulePass
    | type[ModulePass]
    | PassPipeline
)
"""A stage's passes: `populate(pm)`, pipeline text, a `PipelineSource`, an xDSL
`ModulePass` (an instance, or a class without required fields) or an xDSL
`PassPipeline`."""


def as_populate(
    source: object, graph: str, name: str, takes: str = "OpPassManager"
) -> PopulatePipeline | None:
    """`source` as a populate function; a wrong type is refused naming the stage.

    Text anchored on the stage's anchor (`builtin.module(cse)` in a module graph)
    is the stage itself; any other text (`cse`, `func.func(cse)`) is its
    contents. A builder's pipeline anchored on the stage's anchor (or on `any`)
    gives its passes; one anchored on another op is nested on that op. xDSL
    passes are added as `OpPassManager.add` adds them.
    """
    if source is None:
        return None
    if is_module_pass(source) or isinstance(source, PassPipeline):
        return _from_xdsl(source)
    if isinstance(source, str):
        return _from_text(source)
    if isinstance(source, PipelineSource):
        return _from_builder(source)
    if callable(source):
        return cast(PopulatePipeline, source)
    raise PipelineGraphError(
        f"populate of pipeline '{name}' in graph '{graph}' must be a function taking "
        f"the pipeline's {takes}, pipeline text, an object with build() or an xDSL "
        f"ModulePass or PassPipeline, got "
        f"{type(source).__name__} {source!r}"
    )


def copy_source(source: object) -> PipelineSource | None:
    """An independent copy of a stage's source, when it is a pipeline source that
    can copy itself (a `PipelineBuilder`); None for functions and text, which a
    schedule build never changes."""
    if isinstance(source, CopyableSource):
        return source.copy()
    return None


def _from_text(text: str) -> PopulatePipeline:
    def populate(pm: OpPassManager) -> None:
        elements = parse_pipeline_elements(text.strip())
        if (
            len(elements) == 1
            and elements[0].inner is not None
            and elements[0].name == pm.anchor
        ):
            pm.extend(parse_pass_pipeline(text).passes)
        else:
            parse_pass_pipeline_into(text, pm)

    return populate


def _from_xdsl(
    source: ModulePass | type[ModulePass] | PassPipeline,
) -> PopulatePipeline:
    passes = source.passes if isinstance(source, PassPipeline) else (source,)

    def populate(pm: OpPassManager) -> None:
        for pass_ in passes:
            pm.add(pass_)

    return populate


def _from_builder(source: PipelineSource) -> PopulatePipeline:
    def populate(pm: OpPassManager) -> None:
        built = source.build()
        if built.anchor in (pm.anchor, "any"):
            pm.extend(built.passes)
        else:
            pm.nest(built.anchor).extend(built.passes)

    return populate
