"""Helpers shared by the `test_transforms_*` files (this module holds no tests).

Expected outputs in those files were produced by mlir-opt 22.1.8 on the same
input. xDSL prints a few things differently (`builtin.module`, `func.return`,
value names from name hints), so outputs are compared after both sides went
through xDSL's parser and printer with every value name dropped: what remains
is the structure, the ops, their attributes and types, and the use-def edges.
"""

from __future__ import annotations

from collections.abc import Iterable

from passflow import ir
from passflow.instrumentation import PassInstrumentation, PipelineParentInfo
from passflow.pass_base import Pass
from passflow.pass_manager import PassManager
from passflow.pipeline_text import parse_pass_pipeline


def context() -> ir.Context:
    return ir.default_context(allow_unregistered=True)


def run_pipeline(
    text: str,
    pipeline: str,
    ctx: ir.Context | None = None,
    instrumentations: Iterable[PassInstrumentation] = (),
) -> ir.ModuleOp:
    """Parse `text`, run the anchored textual `pipeline` on it, return the module."""
    ctx = ctx if ctx is not None else context()
    module = ir.parse_module(text, ctx)
    pm = PassManager(context=ctx)
    pm.assign(parse_pass_pipeline(pipeline))
    for instrumentation in instrumentations:
        pm.add_instrumentation(instrumentation)
    pm.run(module)
    return module


def run_passes(text: str, *passes: Pass, nest: str | None = "func.func") -> ir.ModuleOp:
    """Parse `text` and run `passes` (nested on `nest` ops unless None)."""
    ctx = context()
    module = ir.parse_module(text, ctx)
    pm = PassManager(context=ctx)
    target = pm.nest(nest) if nest is not None else pm
    for pass_ in passes:
        target.add(pass_)
    pm.run(module)
    return module


def normalized(ir_or_text: ir.Operation | str) -> str:
    """Print with every value name dropped, after parsing if given text."""
    op = (
        ir.parse_module(ir_or_text, context())
        if isinstance(ir_or_text, str)
        else ir_or_text
    )
    op = op.clone()
    for nested in op.walk():
        for result in nested.results:
            result.name_hint = None
        for region in nested.regions:
            for block in region.blocks:
                for arg in block.args:
                    arg.name_hint = None
    return ir.print_op(op)


def assert_same_ir(actual: ir.Operation, expected_mlir: str) -> None:
    """`actual` is, up to value names and print syntax, mlir-opt's `expected_mlir`."""
    assert normalized(actual) == normalized(expected_mlir)


class Recorder(PassInstrumentation):
    """Records which passes and analyses ran on which op (by op name and symbol)."""

    def __init__(self) -> None:
        self.passes: list[tuple[str, str, str | None]] = []
        self.analyses: list[tuple[str, str, str | None]] = []
        # The same entries with the analysis class in place of its name.
        self.analysis_classes: list[tuple[type, str, str | None]] = []
        self.pipeline_parents: list[str] = []

    def run_before_pass(self, pass_: Pass, op: ir.Operation) -> None:
        self.passes.append((pass_.name, ir.operation_name(op).name, ir.symbol_name(op)))

    def run_before_analysis(self, name: str, analysis: type, op: ir.Operation) -> None:
        self.analyses.append((name, ir.operation_name(op).name, ir.symbol_name(op)))
        self.analysis_classes.append(
            (analysis, ir.operation_name(op).name, ir.symbol_name(op))
        )

    def run_before_pipeline(
        self, op_name: str | None, parent: PipelineParentInfo
    ) -> None:
        self.pipeline_parents.append(parent.parent_pass.name)
