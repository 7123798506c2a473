"""Every xDSL `ModulePass`, usable by its own name in passflow pipelines.

xDSL ships over a hundred passes written against its own `ModulePass.apply`. The
adapter here wraps one as a passflow pass, so `builtin.module(lower-affine,...)`
works and the pass gets passflow's instrumentation, verification and failure
handling. Options use xDSL's own spec syntax, which is MLIR's `{key=value ...}`.

xDSL passes are written for modules: the adapter anchors them on `builtin.module`,
except for those known to work on any op they are given (`NESTED_OK`). Names that a
native passflow pass already uses (`canonicalize`, `cse`) stay with the native one.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from functools import cache
from typing import ClassVar

from xdsl.passes import ModulePass
from xdsl.transforms import get_all_passes
from xdsl.utils.arg_spec import parse_spec

from passflow.diagnostics import OptionError
from passflow.ir import ModuleOp
from passflow.pass_base import OperationPass

__all__ = ["NESTED_OK", "XDSLPass", "adapter_for", "xdsl_pass_names"]

NESTED_OK = frozenset({"canonicalize", "cse", "dce"})
"""xDSL passes that rewrite whatever op they are applied to, not only modules."""


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
