"""The SSA value names mlir-opt's printer would give (MLIR's `SSANameState`), for
passes that show values by name, as `view-op-graph` does.

Regions are numbered breadth first from the root op: a region's values are named
before those of the regions nested in it, and each nested region starts from the
counters its parent region ended with (sibling regions may reuse numbers, as they
cannot see each other's values). Entry block arguments are `%argN`, other block
arguments and results `%N`, an op with several results `%N#i`. A few ops suggest
a name as MLIR's `OpAsmOpInterface` does (`arith.constant` gives `%c1_i32`,
`%true`, `%cst`; `memref.alloca` gives `%alloca`); a name already taken in the
region or its ancestors gets the suffix `_K`. Other ops' suggestions are not
known here, so their values are numbered.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, cast

from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

__all__ = ["value_names"]


def _suggested_name(op: Operation) -> str | None:
    """The name MLIR's `getAsmResultNames` gives the single result of `op`."""
    if op.name == "arith.constant" and len(op.results) == 1:
        value = op.get_attr_or_prop("value")
        if isinstance(value, IntegerAttr):
            integer = cast("IntegerAttr[Any]", value)
            kind: Attribute = integer.type
            number: int = integer.value.data
            if kind == IntegerType(1):
                return "true" if number else "false"
            if isinstance(kind, IndexType):
                return f"c{number}"
            return f"c{number}_{kind}"
        return "cst"
    if op.name in ("memref.alloca", "memref.alloc") and len(op.results) == 1:
        return op.name.removeprefix("memref.")
    return None


@dataclass
class _Scope:
    parent: _Scope | None
    names: set[str] = field(default_factory=set[str])

    def __contains__(self, name: str) -> bool:
        scope: _Scope | None = self
        while scope is not None:
            if name in scope.names:
                return True
            scope = scope.parent
        return False


@dataclass
class _Counters:
    value: int = 0
    argument: int = 0
    conflict: int = 0


def value_names(root: Operation) -> dict[SSAValue, str]:
    """The name (without `%`) of every value defined inside `root`."""
    names: dict[SSAValue, str] = {}
    top = _Scope(None)
    stack = [(region, _Counters(), top) for region in root.regions]
    while stack:
        region, counters, parent = stack.pop()
        scope = _Scope(parent)
        for block in region.blocks:
            _name_block(block, counters, scope, names)
        for op in _ops(region):
            for nested in op.regions:
                captured = _Counters(
                    counters.value, counters.argument, counters.conflict
                )
                stack.append((nested, captured, scope))
    return names


def _ops(region: Region) -> list[Operation]:
    return [op for block in region.blocks for op in block.ops]


def _name_block(
    block: Block, counters: _Counters, scope: _Scope, names: dict[SSAValue, str]
) -> None:
    parent = block.parent
    entry = parent is not None and parent.first_block is block
    for arg in block.args:
        if entry:
            names[arg] = _unique(f"arg{counters.argument}", counters, scope)
            counters.argument += 1
        else:
            names[arg] = str(counters.value)
            counters.value += 1
    for op in block.ops:
        if not op.results:
            continue
        suggested = _suggested_name(op)
        if suggested is not None:
            names[op.results[0]] = _unique(suggested, counters, scope)
            continue
        number = str(counters.value)
        counters.value += 1
        if len(op.results) == 1:
            names[op.results[0]] = number
        else:
            for index, result in enumerate(op.results):
                names[result] = f"{number}#{index}"


def _unique(name: str, counters: _Counters, scope: _Scope) -> str:
    if name in scope:
        while True:
            candidate = f"{name}_{counters.conflict}"
            counters.conflict += 1
            if candidate not in scope:
                name = candidate
                break
    scope.names.add(name)
    return name
