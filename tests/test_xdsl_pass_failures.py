"""xDSL passes fail, they don't crash: xDSL's failure exceptions become a pass
failure with the exception's message, at the op it names; anything else is a crash."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, builtin
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import (
    DiagnosticException,
    InterpretationError,
    PassFailedException,
    VerifyException,
)

from passflow import PassManager, PassPipelineError, PipelineParseError, ir
from passflow.diagnostics import Diagnostic, OptionError, Severity
from passflow.executors import make_executor
from passflow.pipeline_text import parse_pass_pipeline
from passflow.xdsl_passes import FAILURE_EXCEPTIONS, XDSLPass, failure_diagnostic

Parse = Callable[[str], ir.ModuleOp]

INPUT = """\
func.func @f(%a: i32) -> i32 {
  %c = arith.constant 1 : i32
  %x = arith.addi %a, %c : i32
  func.return %x : i32
}
func.func @g() {
  func.return
}
"""


@dataclass(frozen=True)
class RaisePass(ModulePass):
    """Raises `exception` from `apply`, outside any pattern."""

    name = "test-raise"
    exception: ClassVar[Exception] = PassFailedException("cannot lower this module")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise type(self).exception


class FailOnAddi(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddiOp, rewriter: PatternRewriter) -> None:
        raise DiagnosticException("unsupported addition")


class RejectConstant(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: arith.ConstantOp, rewriter: PatternRewriter
    ) -> None:
        op.emit_error("constant rejected by the pattern", PassFailedException())


@dataclass(frozen=True)
class PatternEmitErrorPass(ModulePass):
    """A pattern names the op itself; the walker names it again, wrapping."""

    name = "test-pattern-emit-error"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(RejectConstant()).rewrite_module(op)


@dataclass(frozen=True)
class PatternFailPass(ModulePass):
    """Fails inside a pattern: xDSL's walker re-raises with `op.emit_error`."""

    name = "test-pattern-fail"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FailOnAddi()).rewrite_module(op)


@dataclass(frozen=True)
class EmitErrorPass(ModulePass):
    """Names the op itself: `op.emit_error(message, VerifyException())`."""

    name = "test-emit-error"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for child in op.walk():
            if isinstance(child, arith.ConstantOp):
                child.emit_error("constant out of policy", VerifyException())


@dataclass(frozen=True)
class InterpretPass(ModulePass):
    """Names the op with a generic message and raises the reason, as xDSL's
    transform interpreter does."""

    name = "test-interpret"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for child in op.walk():
            if isinstance(child, arith.AddiOp):
                child.emit_error(
                    "Error while interpreting op",
                    InterpretationError("tile sizes must be static"),
                )


@dataclass(frozen=True)
class NewOpFailPass(ModulePass):
    """Fails on an op it created itself, which has no location of its own."""

    name = "test-new-op-fail"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for child in op.walk():
            if isinstance(child, arith.AddiOp):
                created = arith.ConstantOp.from_int_and_width(7, 32)
                assert child.parent is not None
                child.parent.insert_op_before(created, child)
                created.emit_error("created op rejected", PassFailedException())


@dataclass(frozen=True)
class CausePass(ModulePass):
    name = "test-cause"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        try:
            int("x")
        except ValueError as err:
            raise DiagnosticException("the tool failed") from err


@dataclass(frozen=True)
class ParsingPass(ModulePass):
    """Parses text of its own, as `apply-pdl{pdl_file=...}` does."""

    name = "test-parsing"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        Parser(ctx, "builtin.module {\n  %x = \n}").parse_module()


@dataclass(frozen=True)
class BugPass(ModulePass):
    name = "test-bug"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise ValueError("a bug, not a failure")


@dataclass(frozen=True)
class RejectFunctionPass(ModulePass):
    """Nestable: rejects every function it is given."""

    name = "test-reject-function"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        op.emit_error("function rejected", PassFailedException())


def adapt(
    xdsl_class: type[ModulePass], op_name: str | None = builtin.ModuleOp.name
) -> type[XDSLPass]:
    """An adapter for a test pass, as `adapter_for` makes one for xDSL's."""
    attrs: dict[str, object] = {
        "argument": xdsl_class.name,
        "name": xdsl_class.__name__,
        "op_name": op_name,
        "xdsl_class": xdsl_class,
    }
    return type(f"XDSL{xdsl_class.__name__}", (XDSLPass,), attrs)


def run_failing(module: ir.ModuleOp, xdsl_class: type[ModulePass]) -> list[Diagnostic]:
    pm = PassManager()
    pm.add(adapt(xdsl_class)())
    with pytest.raises(PassPipelineError) as info:
        pm.run(module)
    return info.value.diagnostics


def test_failure_exceptions_are_xdsls_diagnostics_and_parse_errors() -> None:
    for exception in (
        PassFailedException(),
        VerifyException(),
        InterpretationError(),
        DiagnosticException(),
    ):
        assert isinstance(exception, FAILURE_EXCEPTIONS)
    assert not isinstance(ValueError(), FAILURE_EXCEPTIONS)


def test_pass_failed_exception_is_a_failure_at_the_pass_op(parse: Parse) -> None:
    (diagnostic,) = run_failing(parse(INPUT), RaisePass)
    assert str(diagnostic) == "input.mlir:0:0: error: cannot lower this module"
    assert diagnostic.notes == []


def test_an_empty_message_names_the_exception(
    parse: Parse, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(RaisePass, "exception", PassFailedException())
    (diagnostic,) = run_failing(parse(INPUT), RaisePass)
    assert diagnostic.message == "PassFailedException"


def test_a_pattern_failure_is_reported_at_the_matched_op(parse: Parse) -> None:
    (diagnostic,) = run_failing(parse(INPUT), PatternFailPass)
    assert str(diagnostic) == (
        "input.mlir:3:8: error: Error while applying pattern: unsupported addition"
    )


def test_the_innermost_naming_wins_over_the_walkers(parse: Parse) -> None:
    (diagnostic,) = run_failing(parse(INPUT), PatternEmitErrorPass)
    assert str(diagnostic) == "input.mlir:2:8: error: constant rejected by the pattern"


def test_emit_error_names_the_op_and_the_message(parse: Parse) -> None:
    (diagnostic,) = run_failing(parse(INPUT), EmitErrorPass)
    assert str(diagnostic) == "input.mlir:2:8: error: constant out of policy"
    assert "func.func" not in str(diagnostic)  # never xDSL's printed module


def test_the_exceptions_reason_is_the_error_and_the_ops_message_a_note(
    parse: Parse,
) -> None:
    # xdsl-opt prints the exception's message first; the op's message, which
    # does not carry it, says only where.
    (diagnostic,) = run_failing(parse(INPUT), InterpretPass)
    assert str(diagnostic) == (
        "input.mlir:3:8: error: tile sizes must be static\n"
        "input.mlir:3:8: note: Error while interpreting op"
    )


def test_an_op_the_pass_created_is_located_at_its_parent(parse: Parse) -> None:
    (diagnostic,) = run_failing(parse(INPUT), NewOpFailPass)
    assert str(diagnostic) == "input.mlir:1:1: error: created op rejected"


def test_the_cause_is_a_note(parse: Parse) -> None:
    (diagnostic,) = run_failing(parse(INPUT), CausePass)
    assert diagnostic.message == "the tool failed"
    assert [note.message for note in diagnostic.notes] == [
        "caused by ValueError: invalid literal for int() with base 10: 'x'"
    ]


def test_a_parse_error_in_the_pass_says_where_in_its_text(parse: Parse) -> None:
    (diagnostic,) = run_failing(parse(INPUT), ParsingPass)
    assert diagnostic.severity is Severity.ERROR
    assert diagnostic.message == "operation name expected"
    assert [note.message for note in diagnostic.notes] == [
        "at <unknown>:3:1 of the text the pass parsed"
    ]


def test_any_other_exception_is_still_a_crash(parse: Parse) -> None:
    (diagnostic,) = run_failing(parse(INPUT), BugPass)
    assert diagnostic.message == (
        "pass 'BugPass' crashed on 'builtin.module' op: ValueError: a bug, not a failure"
    )
    assert "Traceback" in diagnostic.notes[0].message


@pytest.mark.parametrize("jobs", [1, 2])
def test_nested_failures_come_back_from_every_function(parse: Parse, jobs: int) -> None:
    # With two jobs, the functions run in forked workers and their diagnostics
    # travel back; siblings of a failing function still run, in program order.
    executor = make_executor("process", jobs)
    pm = PassManager(executor=executor)
    pm.nest("func.func").add(adapt(RejectFunctionPass, op_name=None)())
    try:
        with pytest.raises(PassPipelineError) as info:
            pm.run(parse(INPUT))
    finally:
        executor.close()
    assert [str(d) for d in info.value.diagnostics] == [
        "input.mlir:1:1: error: function rejected",
        "input.mlir:6:1: error: function rejected",
    ]


def test_failure_diagnostic_without_a_run(parse: Parse) -> None:
    module = parse(INPUT)
    diagnostic = failure_diagnostic(VerifyException("bad\nreason"), module)
    assert str(diagnostic) == "input.mlir:0:0: error: bad reason"


MEMREF = """\
func.func @f(%m: memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>, %i: index) -> f32 {
  %0 = memref.load %m[%i, %i] : memref<4x4xf32, affine_map<(d0, d1) -> (d1, d0)>>
  func.return %0 : f32
}
"""


def test_an_xdsl_pass_failure_stops_the_pipeline_at_the_op(parse: Parse) -> None:
    pm = PassManager()
    pm.assign(parse_pass_pipeline("builtin.module(convert-memref-to-ptr,cse)"))
    with pytest.raises(PassPipelineError) as info:
        pm.run(parse(MEMREF))
    (diagnostic,) = info.value.diagnostics
    assert str(diagnostic) == (
        "input.mlir:2:8: error: Error while applying pattern: "
        "Unsupported layout type affine_map<(d0, d1) -> (d1, d0)>"
    )


def test_malformed_xdsl_options_are_a_pipeline_error() -> None:
    # xDSL's spec parser raises ArgSpecParseError, a BaseException.
    adapter = adapt(RaisePass)
    with pytest.raises(OptionError, match=r"^<Pass-Options-Parser>: Unknown token$"):
        adapter().initialize_options("exception=/x")
    with pytest.raises(PipelineParseError, match=r"^<Pass-Options-Parser>: Unknown"):
        parse_pass_pipeline("builtin.module(apply-pdl{pdl_file=/nonexistent})")
