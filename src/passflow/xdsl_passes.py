"""Every xDSL `ModulePass`, usable by its own name in passflow pipelines.

xDSL ships over a hundred passes written against its own `ModulePass.apply`. The
adapter here wraps one as a passflow pass, so `builtin.module(lower-affine,...)`
works and the pass gets passflow's instrumentation, verification and failure
handling. Options use xDSL's own spec syntax, which is MLIR's `{key=value ...}`.

xDSL passes are written for modules: the adapter anchors them on `builtin.module`,
except for those reviewed to touch nothing but what is nested in the op they are
given (`NESTED_OK`), which run on any op with a `body` region, so
`func.func(convert-scf-to-cf)` works as in mlir-opt. Names that a native passflow
pass already uses (`canonicalize`, `cse`) stay with the native one.
"""

from __future__ import annotations

import ast
import contextlib
import inspect
import textwrap
from collections.abc import Callable
from functools import cache
from typing import ClassVar

from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
from xdsl.transforms import get_all_passes
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from passflow import ir
from passflow.diagnostics import (
    UNKNOWN_LOCATION,
    Diagnostic,
    Location,
    OptionError,
    Severity,
)
from passflow.ir import ModuleOp, Operation, OperationName
from passflow.pass_base import OperationPass
from passflow.xdsl_internals import arg_spec_error_reason, diagnostic_op_messages

__all__ = [
    "FAILURE_EXCEPTIONS",
    "NESTED_OK",
    "UNSAFE_XDSL_PASSES",
    "XDSLPass",
    "adapter_for",
    "failure_diagnostic",
    "has_body_region",
    "walks_only_its_op",
    "xdsl_pass_names",
]

NESTED_OK = frozenset(
    {
        "approximate-math-with-bitcast",
        "canonicalize",
        "control-flow-hoist",
        "convert-arith-to-varith",
        "convert-linalg-to-loops",
        "convert-scf-to-cf",
        "convert-varith-to-arith",
        "cse",
        "dce",
        "empty-tensor-to-alloc-tensor",
        "expand-math-to-polynomials",
        "licm",
        "linalg-generalize-named-ops",
        "loop-hoist-memref",
        "lower-affine",
        "scf-for-loop-flatten",
        "scf-for-loop-range-folding",
        "scf-for-loop-unroll",
        "varith-fuse-repeated-operands",
        "vector-split-load-extract",
    }
)
"""xDSL passes that may be nested: they run on any op with a `body` region.

Each was read, with its patterns: `apply` only rewrites the ops nested in the op
it is given (`walks_only_its_op` holds, which the tests check), and no pattern
looks at or creates anything outside the op it matched or the ops around it in
its block, so the pass is safe on a function while its siblings run in parallel.
Passes that create symbols at module level (`convert-ml-program-to-memref`), or
whose patterns rewrite the function op itself (`convert-func-to-riscv-func`), are
deliberately left out: nested, they would break the IR or race.
"""


FAILURE_EXCEPTIONS: tuple[type[Exception], ...] = (DiagnosticException, ParseError)
"""The exceptions by which an xDSL pass says it failed, as MLIR's
`signalPassFailure` after a diagnostic: `DiagnosticException` and its subclasses
(`PassFailedException`, `VerifyException`, `InterpretationError`, ...), and a
`ParseError` from text the pass parses (`apply-pdl{pdl_file=...}`). The adapter
reports them as a failure with their message; any other exception is a bug in
the pass and is reported as a crash, with its traceback.
"""


class XDSLPass(OperationPass):
    """A passflow pass running one xDSL `ModulePass` instance.

    `failure` is the exception the xDSL pass raised in its last run, a failure
    or a crash, or None: the diagnostic passflow reports is made from it, and a
    tool that must print it as xdsl-opt does (`passflow-xdsl-opt`) reads it here.
    """

    xdsl_class: ClassVar[type[ModulePass]]

    def __init__(self) -> None:
        super().__init__()
        self.xdsl_pass: ModulePass | None = None
        self.failure: Exception | None = None
        # A TypeError means required arguments: options must provide them.
        with contextlib.suppress(TypeError):
            self.xdsl_pass = self.xdsl_class()

    def initialize_options(self, text: str) -> None:
        try:
            self.xdsl_pass = self.xdsl_class.from_pass_spec(
                parse_spec(f"{self.argument}{{{text}}}")
            )
        except ArgSpecParseError as err:  # a BaseException: xDSL's spec syntax
            raise OptionError(
                f"<Pass-Options-Parser>: {arg_spec_error_reason(err)}"
            ) from None
        except Exception as err:
            raise OptionError(f"<Pass-Options-Parser>: {err}") from None

    def options_text(self) -> str:
        if self.xdsl_pass is None:
            return ""
        spec = str(self.xdsl_pass.pipeline_pass_spec())
        return spec[len(self.argument) :]

    def unsafe_effect(self) -> str | None:
        entry = UNSAFE_XDSL_PASSES.get(self.argument)
        if entry is None:
            return None
        option, effect = entry
        if option is None or getattr(self.xdsl_pass, option, None) is not None:
            return effect
        return None

    def can_schedule_on(self, name: OperationName) -> bool:
        """Module passes on modules; nestable ones on any op with a `body` region
        (xDSL rewrites `op.body`)."""
        if self.op_name is not None:
            return name.name == self.op_name
        return has_body_region(name)

    def run_on_operation(self) -> None:
        op = self.get_operation()
        if self.xdsl_pass is None:
            self.emit_error(
                op, f"xDSL pass '{self.argument}' needs options; none given"
            )
            self.signal_pass_failure()
            return
        self.failure = None
        try:
            self.xdsl_pass.apply(self.get_context(), op)  # pyright: ignore[reportArgumentType]
        except FAILURE_EXCEPTIONS as err:
            self.failure = err
            # Emitted whole: `emit_error` would deliver it before its notes.
            self.emit_diagnostic(failure_diagnostic(err, op))
            self.signal_pass_failure()
        except Exception as err:  # a crash: the runner reports it
            self.failure = err
            raise

    def clone(self) -> XDSLPass:
        new = super().clone()
        new.failure = None
        if self.xdsl_pass is not None:
            new.xdsl_pass = self.xdsl_class.from_pass_spec(
                self.xdsl_pass.pipeline_pass_spec(include_default=True)
            )
        return new


def failure_diagnostic(err: Exception, op: Operation) -> Diagnostic:
    """The error an xDSL pass's failure exception `err` stands for, when the pass
    ran on `op`.

    xDSL's `op.emit_error(message, exception)` (which the pattern walker also
    uses for an exception raised by a pattern, "Error while applying pattern:
    ...") names the op and the message in an `xdsl.utils.diagnostic.Diagnostic`
    and raises the exception with the whole module printed into its notes. The
    error is placed at the op it names; the printed module is dropped. Its
    message is the exception's, the reason xdsl-opt prints first, unless the
    op's message already carries it (`Error while applying pattern: <reason>`);
    an op message that does not (`Error while interpreting op`) becomes a note
    at that op. When xDSL named ops twice (the walker re-raising what a
    pattern's own `emit_error` raised), the innermost naming, nearest the raise,
    places the error; the others are notes. An op the pass created has no
    location of its own: its nearest located ancestor, else `op`, stands in for
    it. Without a named op, the error is at `op`. The exception's cause, if any,
    is a note, and so is where a `ParseError` was in the text the pass parsed.
    """
    reason = _one_line(err.msg if isinstance(err, ParseError) else str(err))
    named = [(target, _one_line(text)) for target, text in diagnostic_op_messages(err)]
    if named and (not reason or reason in named[0][1]):
        target, message = named.pop(0)
        diagnostic = Diagnostic(Severity.ERROR, message, _failure_location(target, op))
    else:
        where = _failure_location(named[0][0], op) if named else ir.location(op)
        diagnostic = Diagnostic(Severity.ERROR, reason or type(err).__name__, where)
    for other, text in named:
        diagnostic.attach_note(text, _failure_location(other, op))
    if isinstance(err, ParseError):
        where = err.span.get_location()
        diagnostic.attach_note(
            f"at {where.file}:{where.line}:{where.col} of the text the pass parsed"
        )
    cause = err.__cause__
    if cause is not None:
        text = _one_line(str(cause))
        diagnostic.attach_note(
            f"caused by {type(cause).__name__}" + (f": {text}" if text else "")
        )
    return diagnostic


def _failure_location(target: Operation, op: Operation) -> Location:
    """Where `target` is, or its nearest located ancestor up to `op`, or `op`."""
    current: Operation | None = target
    while current is not None:
        where = ir.location(current)
        if where != UNKNOWN_LOCATION:
            return where
        if current is op:
            break
        current = current.parent_op()
    return ir.location(op)


def _one_line(message: str) -> str:
    """xDSL's multi-line messages on one line, as MLIR's diagnostics are."""
    if "\n" not in message and "\r" not in message:
        return message
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


@cache
def _factories() -> dict[str, Callable[[], type[ModulePass]]]:
    return get_all_passes()


UNSAFE_XDSL_PASSES: dict[str, tuple[str | None, str]] = {
    "mlir-opt": (
        None,
        "starts the program named by its 'executable' option (mlir-opt by default)",
    ),
    "apply-eqsat-pdl": (
        None,
        "starts mlir-opt (XDSL_MLIR_OPT or PATH) to convert its patterns, and reads "
        "the file named by its 'pdl_file' option",
    ),
    "apply-pdl": ("pdl_file", "reads the file named by its 'pdl_file' option"),
    "apply-pdl-interp": (
        "pdl_interp_file",
        "reads the file named by its 'pdl_interp_file' option",
    ),
    "apply-eqsat-pdl-interp": (
        "pdl_interp_file",
        "reads the file named by its 'pdl_interp_file' option",
    ),
    "eqsat-add-costs": ("cost_file", "reads the file named by its 'cost_file' option"),
}
"""xDSL passes that reach outside the IR: name -> (the option that makes them do
so, None if they always do; what they do). Reviewed from xDSL's sources; a test
fails when an xDSL upgrade adds a pass that opens files or starts programs."""


def xdsl_pass_names() -> list[str]:
    """Names of every pass xDSL ships (whether or not passflow shadows it)."""
    return sorted(_factories())


def adapter_for(name: str) -> type[XDSLPass] | None:
    """A passflow pass class wrapping xDSL's pass `name`, or None if there is none.

    Only names xDSL has reach the cache, so looking up any number of unknown
    names (a fuzzer, a hostile reproducer) costs no memory."""
    if name not in _factories():
        return None
    return _adapter_for_known(name)


@cache
def _adapter_for_known(name: str) -> type[XDSLPass]:
    xdsl_class = _factories()[name]()
    summary = (xdsl_class.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
    attrs: dict[str, object] = {
        "argument": name,
        "name": xdsl_class.__name__,
        "summary": " ".join(summary.split()),
        "description": f"The xDSL pass `{xdsl_class.__module__}.{xdsl_class.__name__}`.",
        "op_name": None if name in NESTED_OK else ModuleOp.name,
        "xdsl_class": xdsl_class,
    }
    return type(f"XDSL{xdsl_class.__name__}", (XDSLPass,), attrs)


def has_body_region(name: OperationName) -> bool:
    """Whether ops called `name` declare a region named `body`, which is what
    xDSL's `PatternRewriteWalker.rewrite_module(op)` and `region_dce(op.body)`
    rewrite (`builtin.module`, `func.func`, `gpu.module`, ...)."""
    cls = name.op_class
    if cls is None or not issubclass(cls, IRDLOperation):
        return False
    return any(region == "body" for region, _ in cls.get_irdl_definition().regions)


_REWRITES_ITS_OP = frozenset({"rewrite_module", "rewrite_op"})
_REWRITES_ITS_BODY = frozenset({"region_dce", "rewrite_region"})
_REWRITES_ANY_OP = frozenset({"cse"})


def walks_only_its_op(xdsl_class: type[ModulePass]) -> bool:
    """Whether `xdsl_class.apply` uses the op it is given only to rewrite what is
    nested in it: as the argument of `PatternRewriteWalker.rewrite_module(op)`
    (or `rewrite_op`, or `cse(op)`), or as `op.body` given to `region_dce` or
    `rewrite_region`. Any other use (reading its attributes, walking its parents,
    inserting ops into it) makes the answer False.

    This is the mechanical half of the review behind `NESTED_OK`; it says nothing
    about what the patterns themselves touch.
    """
    try:
        source = textwrap.dedent(inspect.getsource(xdsl_class.apply))
    except (OSError, TypeError):
        return False
    function = ast.parse(source).body[0]
    if not isinstance(function, ast.FunctionDef) or len(function.args.args) < 3:
        return False
    op_name = function.args.args[2].arg
    parents: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(function):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    uses = [
        node
        for node in ast.walk(function)
        if isinstance(node, ast.Name) and node.id == op_name
    ]
    return all(_rewrites_nested_only(use, parents) for use in uses)


def _rewrites_nested_only(use: ast.Name, parents: dict[ast.AST, ast.AST]) -> bool:
    parent = parents.get(use)
    if isinstance(parent, ast.Call) and parent.args == [use] and not parent.keywords:
        callee = _callee_name(parent.func)
        return callee in _REWRITES_ITS_OP or callee in _REWRITES_ANY_OP
    if isinstance(parent, ast.Attribute) and parent.attr == "body":
        call = parents.get(parent)
        return (
            isinstance(call, ast.Call)
            and call.args == [parent]
            and _callee_name(call.func) in _REWRITES_ITS_BODY
        )
    return False


def _callee_name(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""
