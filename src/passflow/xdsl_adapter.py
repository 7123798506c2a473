"""An xDSL `ModulePass` run as a passflow pass: the one adaptation.

xDSL users write a pass as a frozen dataclass with a `name` class variable and
`apply(ctx, op)`; its fields are its options. `adapter_class(MyPass)` is the
passflow pass class that runs it (one per xDSL class, so that timing and
statistics group its runs), and `adapt(obj)` makes a passflow pass of a
`ModulePass` instance or class. Every path that takes a pass calls these: the
pass manager's `add`, `register_pass` and plugin files, the builder, the graph,
xDSL's own passes by name (`passflow.xdsl_passes`) and the conversion of an
xDSL `PassPipeline` (`passflow.xdsl_pipeline`). So an xDSL pass, the user's own
or xDSL's, gets passflow's instrumentation, verification, failure handling,
timing, statistics and reproducers without a wrapper written by hand.

Its `name` is its argument in pipeline text; its options are parsed and
printed with xDSL's spec syntax, which is MLIR's `{key=value ...}` (strings
may be quoted, lists are `1,2,3`). xDSL passes are written for modules: the
adapter anchors them on `builtin.module`, except xDSL's own passes reviewed to
touch nothing but what is nested in the op they are given (`NESTED_OK`).

This module sits below the pass manager, beside `callable_pass` (the other
foreign kind of pass it accepts).
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from collections.abc import Sequence
from functools import cache
from typing import ClassVar, TypeGuard

from xdsl.irdl import IRDLOperation
from xdsl.passes import ModulePass
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
    "adapt",
    "adapter_class",
    "failure_diagnostic",
    "has_body_region",
    "is_module_pass",
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


class XDSLPass(OperationPass):
    """A passflow pass running one xDSL `ModulePass` instance, `xdsl_pass`.

    `XDSLPass` itself is abstract: `adapter_class` makes the subclass for an
    xDSL pass class, whose no-argument constructor makes the pass with its
    defaults (None when it has required fields: options must give them), and
    whose one argument takes an instance made by the user.

    `failure` is the exception the xDSL pass raised in its last run, a failure
    or a crash, or None: the diagnostic passflow reports is made from it, and a
    tool that must print it as xdsl-opt does (`passflow-xdsl-opt`) reads it here.
    """

    xdsl_class: ClassVar[type[ModulePass]]
    unsafe: ClassVar[tuple[str | None, str] | None] = None
    """An `UNSAFE_XDSL_PASSES` entry, for xDSL's passes that reach outside the IR."""

    def __init__(self, xdsl_pass: ModulePass | None = None) -> None:
        super().__init__()
        if xdsl_pass is None:
            # A TypeError means required fields: options must provide them.
            with contextlib.suppress(TypeError):
                xdsl_pass = self.xdsl_class()
        self.xdsl_pass: ModulePass | None = xdsl_pass
        self.failure: Exception | None = None

    def initialize_options(self, text: str) -> None:
        try:
            self.xdsl_pass = self.xdsl_class.from_pass_spec(
                parse_spec(f"{self.xdsl_class.name}{{{text}}}")
            )
        except ArgSpecParseError as err:  # a BaseException: xDSL's spec syntax
            raise OptionError(
                f"<Pass-Options-Parser>: {arg_spec_error_reason(err)}"
            ) from None
        except Exception as err:
            raise OptionError(f"<Pass-Options-Parser>: {err}") from None

    def options_text(self) -> str:
        """The options that differ from their defaults, as xdsl-opt prints them
        (`{max-iterations=3 tag="x"}`)."""
        if self.xdsl_pass is None:
            return ""
        spec = self.xdsl_pass.pipeline_pass_spec()
        return str(spec)[len(spec.name) :]

    def unsafe_effect(self) -> str | None:
        if self.unsafe is None:
            return None
        option, effect = self.unsafe
        if option is None or getattr(self.xdsl_pass, option, None) is not None:
            return effect
        return None

    def external_inputs(self) -> Sequence[str] | None:
        """The file its file option names (`apply-pdl{pdl_file=...}`); None
        for a pass that starts a program."""
        if self.unsafe is None:
            return ()
        option, _ = self.unsafe
        if option is None:
            return None
        given = getattr(self.xdsl_pass, option, None)
        return () if given is None else (str(given),)

    def can_schedule_on(self, name: OperationName) -> bool:
        """Module passes on modules; nestable ones on any op with a `body` region
        (xDSL rewrites `op.body`)."""
        if self.op_name is not None:
            return name.name == self.op_name
        return has_body_region(name)

    def run_on_operation(self) -> None:
        op = self.get_operation()
        if self.xdsl_pass is None:
            required = ", ".join(sorted(self.xdsl_class.required_fields()))
            self.emit_error(
                op,
                f"xDSL pass '{self.argument}' needs options; none given "
                f"(required: {required})",
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
        except Exception as err:
            self.failure = err
            raise

    def clone(self) -> XDSLPass:
        """A copy running its own copy of the xDSL pass: rebuilt from its
        options, or copied when they do not round-trip (a field xDSL's spec
        cannot print, state kept on the instance beside its fields)."""
        new = super().clone()
        new.failure = None
        held = self.xdsl_pass
        if held is None:
            return new
        fields = {field.name for field in dataclasses.fields(held)}
        if set(getattr(held, "__dict__", {})) <= fields:
            try:
                new.xdsl_pass = self.xdsl_class.from_pass_spec(
                    held.pipeline_pass_spec(include_default=True)
                )
                return new
            except Exception:
                pass
        new.xdsl_pass = copy.copy(held)
        return new


def is_module_pass(obj: object) -> TypeGuard[ModulePass | type[ModulePass]]:
    """Whether `obj` is an xDSL `ModulePass` instance or subclass."""
    return isinstance(obj, ModulePass) or (
        isinstance(obj, type) and issubclass(obj, ModulePass)
    )


def adapt(obj: ModulePass | type[ModulePass]) -> XDSLPass:
    """A passflow pass running the xDSL pass `obj`: an instance as it is, a class
    with its defaults. A class with required fields is a `TypeError` naming
    them and the fix."""
    if isinstance(obj, ModulePass):
        return adapter_class(type(obj))(obj)
    if not is_module_pass(obj):
        raise TypeError(f"expected an xDSL ModulePass, got {type(obj).__name__}")
    adapter = adapter_class(obj)
    required = obj.required_fields()
    if required:
        fields = ", ".join(sorted(required))
        raise TypeError(
            f"the xDSL pass {obj.__name__} has required fields ({fields}); fix: "
            f"give an instance, {obj.__name__}({fields.split(',')[0]}=...), or "
            f"its options in pipeline text, '{obj.name}{{...}}'"
        )
    return adapter()


@cache
def adapter_class(xdsl_class: type[ModulePass]) -> type[XDSLPass]:
    """The passflow pass class running `xdsl_class` (made once per class).

    Its argument is the xDSL pass's `name`; its display name the class's name;
    its summary the first paragraph of the class's docstring. xDSL's own passes
    in `NESTED_OK` may be nested; the others run on `builtin.module`.
    """
    argument = getattr(xdsl_class, "name", None)
    if not isinstance(argument, str) or not argument:
        raise TypeError(
            f"the xDSL pass {xdsl_class.__name__} has no name; fix: declare "
            f"'name = \"my-pass\"' in its class body"
        )
    own = xdsl_class.__module__.split(".")[0] == "xdsl"
    attrs: dict[str, object] = {
        "argument": argument,
        "name": xdsl_class.__name__,
        "summary": _summary(xdsl_class),
        "description": f"The xDSL pass `{xdsl_class.__module__}.{xdsl_class.__qualname__}`.",
        "op_name": None if own and argument in NESTED_OK else ModuleOp.name,
        "xdsl_class": xdsl_class,
        "unsafe": UNSAFE_XDSL_PASSES.get(argument) if own else None,
    }
    return type(f"XDSL{xdsl_class.__name__}", (XDSLPass,), attrs)


def _summary(xdsl_class: type[ModulePass]) -> str:
    """The first paragraph of the class's own docstring (not the signature that
    `dataclass` writes for a class without one)."""
    doc = (xdsl_class.__doc__ or "").strip()
    if doc.startswith(f"{xdsl_class.__name__}("):
        return ""
    return " ".join(doc.split("\n\n")[0].split())


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
so, None if they always do; what they do). An option is a file the pass reads
(the result cache keys on its contents); a pass without one starts a program
(never cached). Reviewed from xDSL's sources; a test
fails when an xDSL upgrade adds a pass that opens files or starts programs."""


def has_body_region(name: OperationName) -> bool:
    """Whether ops called `name` declare a region named `body`, which is what
    xDSL's `PatternRewriteWalker.rewrite_module(op)` and `region_dce(op.body)`
    rewrite (`builtin.module`, `func.func`, `gpu.module`, ...)."""
    cls = name.op_class
    if cls is None or not issubclass(cls, IRDLOperation):
        return False
    return any(region == "body" for region, _ in cls.get_irdl_definition().regions)
