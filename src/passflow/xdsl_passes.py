"""Every xDSL `ModulePass`, usable by its own name in passflow pipelines.

xDSL ships over a hundred passes written against its own `ModulePass.apply`.
Looked up by name here, each runs through the one adapter
(`passflow.xdsl_adapter`), so `builtin.module(lower-affine,...)` works and the
pass gets passflow's instrumentation, verification and failure handling. Options
use xDSL's own spec syntax, which is MLIR's `{key=value ...}`.

xDSL passes are written for modules: the adapter anchors them on `builtin.module`,
except for those reviewed to touch nothing but what is nested in the op they are
given (`NESTED_OK`), which run on any op with a `body` region, so
`func.func(convert-scf-to-cf)` works as in mlir-opt. Names that a native passflow
pass already uses (`canonicalize`, `cse`) stay with the native one.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from functools import cache

from xdsl.passes import ModulePass
from xdsl.transforms import get_all_passes

from passflow.xdsl_adapter import (
    FAILURE_EXCEPTIONS,
    NESTED_OK,
    UNSAFE_XDSL_PASSES,
    XDSLPass,
    adapter_class,
    failure_diagnostic,
    has_body_region,
)

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


@cache
def _factories() -> dict[str, Callable[[], type[ModulePass]]]:
    return get_all_passes()


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
    return adapter_class(_factories()[name]())


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
