"""Which ops can sit directly inside which: where a pass restricted to an op can run.

A nested pipeline `func.func(gpu.module(p))` runs `p` on the `gpu.module` ops that
are direct children of functions, and there are none: a `gpu.module` is a symbol,
and a symbol sits directly in a symbol table (a module), never in a function. The
builder asks this module before placing a pass, so that a pass lands only in a
pipeline from which it can run. What it knows comes from the ops' registered
definitions: `HasParent` names the only parents an op may have, and a symbol
(`SymbolOpInterface`, not the optional kind a module has) needs a `SymbolTable`
parent. An op it cannot look up may sit anywhere, as far as it knows.
"""

from __future__ import annotations

from functools import cache

from xdsl.irdl import IRDLOperation
from xdsl.traits import (
    HasParent,
    OptionalSymbolOpInterface,
    SymbolOpInterface,
    SymbolTable,
)

from passflow import ir

__all__ = ["can_hold", "home_hint", "homes", "parents_of"]


@cache
def _context() -> ir.Context:
    return ir.default_context()


def _definition(op: str) -> type[IRDLOperation] | None:
    found = ir.lookup_operation_name(_context(), op).op_class
    return found if found is not None and issubclass(found, IRDLOperation) else None


@cache
def parents_of(op: str) -> tuple[str, ...] | None:
    """The only ops `op` may sit directly inside (`HasParent`), or None when its
    definition does not restrict its parent that way."""
    child = _definition(op)
    trait = child.get_trait(HasParent) if child is not None else None
    if trait is None:
        return None
    return tuple(parent.name for parent in trait.op_types)


@cache
def can_hold(parent: str, op: str) -> bool:
    """Whether `op` ops may be direct children of `parent` ops (`any`: always)."""
    if parent == "any":
        return True
    parents = parents_of(op)
    if parents is not None:
        return parent in parents
    child = _definition(op)
    if child is None:
        return True
    symbol = child.get_trait(SymbolOpInterface)
    if symbol is None or isinstance(symbol, OptionalSymbolOpInterface):
        return True
    holder = _definition(parent)
    return holder is None or holder.has_trait(SymbolTable)


def homes(op: str) -> str:
    """Where `op` ops may sit, in prose: `'gpu.module' ops`, or `ops with a symbol
    table (such as 'builtin.module')` for a symbol."""
    parents = parents_of(op)
    if parents is not None:
        return " or ".join(f"'{parent}'" for parent in parents) + " ops"
    return "ops with a symbol table (such as 'builtin.module')"


def home_hint(op: str) -> str:
    """How to make a pipeline `op` ops sit in: `nest("gpu.module") makes one`."""
    parents = parents_of(op)
    parent = parents[0] if parents else "builtin.module"
    return f'nest("{parent}") makes one'
