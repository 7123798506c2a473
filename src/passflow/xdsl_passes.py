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

from passflow.diagnostics import OptionError
from passflow.ir import ModuleOp, OperationName
from passflow.pass_base import OperationPass

__all__ = [
    "NESTED_OK",
    "XDSLPass",
    "adapter_for",
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


class XDSLPass(OperationPass):
    """A passflow pass running one xDSL `ModulePass` instance."""

    xdsl_class: ClassVar[type[ModulePass]]

    def __init__(self) -> None:
        super().__init__()
        self.xdsl_pass: ModulePass | None = None
        # A TypeError means required arguments: options must provide them.
        with contextlib.suppress(TypeError):
            self.xdsl_pass = self.xdsl_class()

    def initialize_options(self, text: str) -> None:
        try:
            self.xdsl_pass = self.xdsl_class.from_pass_spec(
                parse_spec(f"{self.argument}{{{text}}}")
            )
        except Exception as err:
            raise OptionError(f"<Pass-Options-Parser>: {err}") from None

    def options_text(self) -> str:
        if self.xdsl_pass is None:
            return ""
        spec = str(self.xdsl_pass.pipeline_pass_spec())
        return spec[len(self.argument) :]

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
        self.xdsl_pass.apply(self.get_context(), op)  # pyright: ignore[reportArgumentType]

    def clone(self) -> XDSLPass:
        new = super().clone()
        if self.xdsl_pass is not None:
            new.xdsl_pass = self.xdsl_class.from_pass_spec(
                self.xdsl_pass.pipeline_pass_spec(include_default=True)
            )
        return new


@cache
def _factories() -> dict[str, Callable[[], type[ModulePass]]]:
    return get_all_passes()


def xdsl_pass_names() -> list[str]:
    """Names of every pass xDSL ships (whether or not passflow shadows it)."""
    return sorted(_factories())


@cache
def adapter_for(name: str) -> type[XDSLPass] | None:
    """A passflow pass class wrapping xDSL's pass `name`, or None if there is none."""
    factory = _factories().get(name)
    if factory is None:
        return None
    xdsl_class = factory()
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
