"""What an xDSL project's `xDSLOptMain` subclass registers, read without running it.

An xDSL-based project extends xdsl-opt by subclassing `xDSLOptMain` and
overriding `register_all_dialects` (`self.ctx.load_dialect(MyDialect)`,
`self.ctx.register_dialect(name, factory)`) and `register_all_passes`
(`self.register_pass(name, factory)`), usually after calling `super()`. Its
constructor would parse `sys.argv` and set up xdsl-opt's own pipeline, so
`registrations_of` makes the object without it, calls those two overrides as
xdsl-opt does, and keeps what differs from what `xDSLOptMain` itself registers:
the project's dialects and passes, and xDSL's that it replaced. The registry
registers them (`passflow.registry.load_plugin("module:Class")`, which
`passflow-opt --load-xdsl-opt-main=module:Class` calls), so the project's
`-opt` tool and passflow-opt accept the same IR and the same pass names.

Targets (`register_all_targets`) and frontends are not read: passflow-opt
prints MLIR only. A dialect or pass the subclass removes from xDSL's stays
available in passflow (docs/decisions.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.xdsl_opt_main import xDSLOptMain

from passflow.xdsl_internals import registered_dialect_factories

__all__ = ["OptMainRegistrations", "is_opt_main", "registrations_of"]


@dataclass(frozen=True)
class OptMainRegistrations:
    """The dialects (by name, a factory each) and passes (by argument, a
    factory of the pass class each) an `xDSLOptMain` subclass adds or replaces."""

    dialects: dict[str, Callable[[], Dialect]]
    passes: dict[str, Callable[[], type[ModulePass]]]


def is_opt_main(obj: object) -> bool:
    """Whether `obj` is an `xDSLOptMain` subclass."""
    return isinstance(obj, type) and issubclass(obj, xDSLOptMain)


def registrations_of(tool: type[xDSLOptMain]) -> OptMainRegistrations:
    """What `tool`'s overrides register beyond `xDSLOptMain`'s own."""
    own = _registered(xDSLOptMain)
    theirs = _registered(tool)
    return OptMainRegistrations(
        {
            name: factory
            for name, factory in theirs.dialects.items()
            if own.dialects.get(name) is not factory
        },
        {
            name: factory
            for name, factory in theirs.passes.items()
            if own.passes.get(name) is not factory
        },
    )


def _registered(tool: type[xDSLOptMain]) -> OptMainRegistrations:
    """Call `tool`'s registration methods on an object made without its
    constructor (which parses the command line), with the state they use."""
    made = tool.__new__(tool)
    made.available_frontends = {}
    made.available_passes = {}
    made.available_targets = {}
    made.ctx = Context()
    made.register_all_dialects()
    made.register_all_passes()
    return OptMainRegistrations(
        registered_dialect_factories(made.ctx), dict(made.available_passes)
    )
