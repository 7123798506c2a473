"""xDSL's `PassPipeline` as a passflow pass manager, and back.

A program built on xDSL holds its passes as a `PassPipeline` (a tuple of
`ModulePass` instances, and a callback called between them), or applies them
one by one. `from_xdsl_pipeline` makes a `PassManager` that runs the same passes
in the same order, each through passflow's one xDSL adapter
(`passflow.xdsl_adapter`), so the program gets timing, IR printing, statistics,
verification and reproducers; the callback, if any, is called as xDSL calls it.
`to_xdsl_pipeline` gives a pass manager back to xDSL code that wants a
`PassPipeline`: an adapted xDSL pass as its own instance, any other passflow
pass (a native pass, a nested pipeline) as a `PassflowPass` running it.
Converted there and back, a pipeline prints and runs as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.utils.exceptions import PassFailedException

from passflow.diagnostics import PassPipelineError
from passflow.instrumentation import PassInstrumentation
from passflow.ir import ModuleOp, Operation
from passflow.manager import OpPassManager
from passflow.pass_base import Pass
from passflow.pass_manager import PassManager
from passflow.pipeline_text import parse_pass_pipeline_into
from passflow.xdsl_adapter import XDSLPass

__all__ = ["PassflowPass", "from_xdsl_pipeline", "to_xdsl_pipeline"]


@dataclass(frozen=True)
class PassflowPass(ModulePass):
    """An xDSL `ModulePass` running passflow passes on the module.

    `pipeline` is their text (`func.func(cse)`), which is how xDSL prints the
    pass (`passflow{pipeline="func.func(cse)"}`) and how one made from text
    finds them; one made by `to_xdsl_pipeline` runs the pass objects it was
    given (clones of them, per run), registered or not. A failure raises
    `PassFailedException` with passflow's diagnostics, as an xDSL pass fails.
    """

    name: ClassVar[str] = "passflow"

    pipeline: str = ""

    @classmethod
    def of(cls, pass_: Pass) -> PassflowPass:
        """The xDSL pass running `pass_` (a clone of it, each time it runs)."""
        made = cls(pipeline=str(pass_))
        object.__setattr__(made, "_pass", pass_.clone())
        return made

    @property
    def passflow_pass(self) -> Pass | None:
        """The pass this runs, when it was made from one (`of`)."""
        found: object = self.__dict__.get("_pass")
        return found if isinstance(found, Pass) else None

    def add_to(self, pm: OpPassManager) -> None:
        """Append what this runs to `pm`."""
        held = self.passflow_pass
        if held is not None:
            pm.add(held.clone())
        else:
            parse_pass_pipeline_into(self.pipeline, pm)

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        pm = PassManager(ModuleOp.name, ctx)
        self.add_to(pm)
        try:
            pm.run(op)
        except PassPipelineError as err:
            raise PassFailedException(str(err)) from err


def from_xdsl_pipeline(
    pipeline: PassPipeline | ModulePass, context: Context | None = None
) -> PassManager:
    """A pass manager on `builtin.module` running xDSL's `pipeline` (or a single
    pass), pass for pass; its callback, if it has one, is called before the
    first pass and after each, with the passes as xDSL gives them."""
    passes = pipeline.passes if isinstance(pipeline, PassPipeline) else (pipeline,)
    pm = PassManager(ModuleOp.name, context)
    ends: dict[int, int] = {}
    for index, xdsl_pass in enumerate(passes):
        if isinstance(xdsl_pass, PassflowPass):
            xdsl_pass.add_to(pm)
        else:
            pm.add(xdsl_pass)
        if pm.passes:
            ends[id(pm.passes[-1])] = index
    callback = pipeline.callback if isinstance(pipeline, PassPipeline) else None
    if callback is not None and pm.passes:
        pm.add_instrumentation(_Callback(callback, id(pm.passes[0]), ends, passes))
    return pm


def to_xdsl_pipeline(
    pm: OpPassManager, callback: PassPipelineCallbackType | None = None
) -> PassPipeline:
    """xDSL's `PassPipeline` for `pm` (anchored on `builtin.module` or `any`):
    an adapted xDSL pass as its own instance, any other pass as a
    `PassflowPass` running a clone of it."""
    if pm.anchor not in (ModuleOp.name, "any"):
        raise ValueError(
            f"an xDSL PassPipeline runs on 'builtin.module'; this pipeline is "
            f"anchored on '{pm.anchor}': fix: nest it, "
            f"PassManager().nest('{pm.anchor}')"
        )
    passes: list[ModulePass] = []
    for pass_ in pm.passes:
        if isinstance(pass_, XDSLPass) and pass_.xdsl_pass is not None:
            passes.append(pass_.xdsl_pass)
        else:
            passes.append(PassflowPass.of(pass_))
    return PassPipeline(tuple(passes), callback)


class _Callback(PassInstrumentation):
    """xDSL's `PassPipeline` callback around the top-level passes of a run:
    `(None, op, first)` before the first, `(pass, op, next)` after the last
    passflow pass each xDSL pass became."""

    def __init__(
        self,
        callback: PassPipelineCallbackType,
        first: int,
        ends: dict[int, int],
        xdsl_passes: tuple[ModulePass, ...],
    ) -> None:
        self.callback = callback
        self.first = first
        self.ends = ends
        self.xdsl_passes = xdsl_passes

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        if id(pass_) == self.first and isinstance(op, builtin.ModuleOp):
            self.callback(None, op, self.xdsl_passes[0])

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        index = self.ends.get(id(pass_))
        if index is None or not isinstance(op, builtin.ModuleOp):
            return
        following = index + 1
        upcoming = (
            self.xdsl_passes[following] if following < len(self.xdsl_passes) else None
        )
        self.callback(self.xdsl_passes[index], op, upcoming)
