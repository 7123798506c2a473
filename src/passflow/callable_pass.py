"""Python callables as passes: the protocol of MLIR's Python bindings.

MLIR's `pm.add(run, name=..., argument=..., description=..., op_name=...)`
runs a function, or any object with `__call__`, as a pass: `run(op, pass_)` is
called on every op the pass runs on, and `pass_.signal_pass_failure()` fails
it. `callable_pass` builds such a pass on passflow's `Pass`, so that code
written for MLIR's bindings runs unchanged; `pass_` is the pass itself, so the
callable also has passflow's diagnostics (`pass_.emit_error`), analyses and
dynamic pipelines.

Each call makes its own `Pass` subclass, as MLIR gives each Python pass its own
TypeID: timing and statistics, which group passes by class, keep two callables
apart even when they share a name.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import cast

from passflow.ir import Operation
from passflow.pass_base import Pass

__all__ = ["CallablePass", "PassCallable", "callable_pass", "check_undescribed"]

PassCallable = Callable[[Operation, Pass], object]
"""`run(op, pass_)`: the body of a Python-defined pass (its result is ignored)."""


class CallablePass(Pass):
    """A pass whose body is a Python callable, `callback(op, self)`."""

    name = "CallablePass"

    def __init__(self, callback: PassCallable) -> None:
        super().__init__()
        self.callback = callback

    def run_on_operation(self) -> None:
        self.callback(self.get_operation(), self)


def callable_pass(
    run: object,
    name: str | None = None,
    argument: str | None = "",
    description: str | None = "",
    op_name: str | None = "",
) -> CallablePass:
    """A pass running `run(op, pass_)`, described as MLIR's bindings describe one.

    `name` (reports, IR dump headers) defaults to `run.__name__`, or for an
    object without one, its class's name (MLIR's bindings fail there);
    `argument` is how pipeline text prints it (empty: `unknown<name>`, as
    MLIR); `op_name` restricts it to ops of that name (empty: any op).
    Raises `TypeError` for anything that is not such a callable, with the fix.
    """
    if isinstance(run, str):
        raise TypeError(
            f"'{run}' is pipeline text, not a callable: PassManager.add(text) and "
            "PassManager.parse(text) read it; on a nested OpPassManager use "
            "passflow.parse_pass_pipeline_into(text, pm)"
        )
    if isinstance(run, type) and issubclass(run, Pass):
        raise TypeError(
            f"add() was given the pass class {run.__name__}, not a pass: "
            f"add an instance, {run.__name__}()"
        )
    if isinstance(run, type) or not callable(run):
        what = (
            f"the class {run.__name__}" if isinstance(run, type) else type(run).__name__
        )
        raise TypeError(
            f"add() takes a Pass, pipeline text or a callable run(op, pass_), "
            f"not {what}"
        )
    _check_arity(run)
    callback = cast(PassCallable, run)
    label = name if name is not None else _default_name(run)
    attributes: dict[str, object] = {
        "name": label,
        "argument": argument or "",
        "description": description or "",
        "op_name": op_name or None,
        "__module__": getattr(run, "__module__", None) or __name__,
    }
    cls = cast(type[CallablePass], type(label, (CallablePass,), attributes))
    return cls(callback)


def _check_arity(run: object) -> None:
    """Refuse, when it is added, a callable that cannot be called as
    `run(op, pass_)` (older MLIR bindings called `run(op)`), rather than have
    every run crash on it."""
    try:
        signature = inspect.signature(cast(Callable[..., object], run))
    except (TypeError, ValueError):
        return  # no signature to read (some builtins): the call will tell
    try:
        signature.bind(None, None)
    except TypeError:
        raise TypeError(
            f"{_default_name(run)}{signature} cannot be called as run(op, pass_): "
            "a Python-defined pass takes the op and the pass, as in MLIR's bindings"
        ) from None


def _default_name(run: object) -> str:
    own = getattr(run, "__name__", None)
    return own if isinstance(own, str) else type(run).__name__


def check_undescribed(
    subject: str,
    name: str | None,
    argument: str | None,
    description: str | None,
    op_name: str | None,
) -> None:
    """Refuse a callable's description given for something else (`subject`: a
    Pass object or pipeline text), which would otherwise be dropped silently."""
    if (name, argument, description, op_name) != (None, "", "", ""):
        raise TypeError(
            "name, argument, description and op_name describe a callable added "
            f"as a pass, not {subject}"
        )
