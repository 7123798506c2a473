"""Symbols and symbol tables as MLIR sees them, for the symbol and inliner passes.

xDSL has the `SymbolOpInterface` and `SymbolTable` traits but neither visibility
nor MLIR's symbol-use walk; these helpers supply both with MLIR's rules: an op
with an optional symbol is a symbol only while it has a name, visibility is the
`sym_visibility` string (public when absent), and the uses held by an op are the
`SymbolRefAttr`s anywhere in its attributes or properties and those of the ops
nested in it, without entering nested symbol tables.
"""

from __future__ import annotations

from collections.abc import Iterator

from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    StringAttr,
    SymbolRefAttr,
    UnregisteredOp,
)
from xdsl.ir import Attribute, Operation, ParametrizedAttribute
from xdsl.irdl import IRDLOperation
from xdsl.traits import SymbolOpInterface, SymbolTable
from xdsl.utils.hints import isa

from passflow.diagnostics import Diagnostic, Severity
from passflow.ir import direct_children, location, operation_name

__all__ = [
    "SymbolTables",
    "can_discard_on_use_empty",
    "is_private",
    "is_symbol",
    "is_symbol_table",
    "is_unknown_symbol_table",
    "nearest_symbol_table",
    "not_a_symbol_table",
    "own_symbol_uses",
    "set_private",
    "symbol_name",
    "symbol_uses",
    "walk_symbol_tables",
]

_VISIBILITY = "sym_visibility"


def is_symbol(op: Operation) -> bool:
    """Whether `op` defines a symbol (an optional symbol only while it has a name).

    An unregistered op is never one, whatever its attributes, as in MLIR: nothing
    is known of it, so it must not be erased as a dead symbol.
    """
    return op.has_trait(SymbolOpInterface, value_if_unregistered=False) and isinstance(
        op.get_attr_or_prop("sym_name"), StringAttr
    )


def is_symbol_table(op: Operation) -> bool:
    """Whether `op` has the `SymbolTable` trait; an unregistered op has not (it is
    a potentially unknown symbol table, see `symbol_uses`)."""
    return op.has_trait(SymbolTable, value_if_unregistered=False)


def symbol_name(op: Operation) -> str | None:
    name = op.get_attr_or_prop("sym_name")
    return name.data if isinstance(name, StringAttr) else None


def is_private(op: Operation) -> bool:
    visibility = op.get_attr_or_prop(_VISIBILITY)
    return isinstance(visibility, StringAttr) and visibility.data == "private"


def can_discard_on_use_empty(op: Operation) -> bool:
    """MLIR's default `canDiscardOnUseEmpty`: any symbol that is not public (private
    or nested) may go once nothing uses it; a public one may be used from outside
    the IR. Whether a nested symbol's uses are all visible is the caller's call."""
    visibility = op.get_attr_or_prop(_VISIBILITY)
    return isinstance(visibility, StringAttr) and visibility.data != "public"


def set_private(op: Operation) -> None:
    """Give `op` private visibility, where its definition keeps it (property or not)."""
    value = StringAttr("private")
    if (
        isinstance(op, IRDLOperation)
        and _VISIBILITY in op.get_irdl_definition().properties
    ):
        op.properties[_VISIBILITY] = value
    else:
        op.attributes[_VISIBILITY] = value


def nearest_symbol_table(op: Operation) -> Operation | None:
    """`op` itself if it is a symbol table, else its closest symbol-table ancestor;
    None when an unregistered op that may be a symbol table comes first, since
    the symbols it would define are unknown (MLIR's `getNearestSymbolTable`)."""
    current: Operation | None = op
    while current is not None and not is_symbol_table(current):
        if is_unknown_symbol_table(current):
            return None
        current = current.parent_op()
    return current


def not_a_symbol_table(
    op: Operation, scheduled_under: str, argument: str
) -> Diagnostic:
    """MLIR's error for a symbol pass scheduled on an op that defines no symbol
    table (`func.func(symbol-dce)`), with a note saying where the pass runs."""
    name = operation_name(op).name
    error = Diagnostic(
        Severity.ERROR,
        f"'{name}' op  was scheduled to run under {scheduled_under}, but does not "
        "define a symbol table",
        location(op),
    )
    parent = op.parent_op()
    table = None if parent is None else nearest_symbol_table(parent)
    table_name = "builtin.module" if table is None else operation_name(table).name
    error.attach_note(
        f"{argument} runs on an op that defines a symbol table, such as "
        f"'{table_name}': put it in that op's pipeline, as `{table_name}({argument})`, "
        f"not in `{name}(...)`"
    )
    return error


def walk_symbol_tables(
    op: Operation, all_uses_visible: bool
) -> list[tuple[Operation, bool]]:
    """Every symbol table in `op` (itself included), inner tables before the
    table holding them, each with whether all uses of its symbols are visible
    (MLIR's `SymbolTable::walkSymbolTables`).

    Uses are visible inside a table that is not a symbol, or is private, or sits
    in a table whose uses are visible, and anywhere below an op that is not a
    symbol table; a nested symbol there cannot be reached from outside the IR.
    """
    found: list[tuple[Operation, bool]] = []
    # (op, visible, children done): post-order without recursion.
    stack: list[tuple[Operation, bool, bool]] = [(op, all_uses_visible, False)]
    while stack:
        current, visible, done = stack.pop()
        if done:
            found.append((current, visible))
            continue
        if is_symbol_table(current):
            visible = visible or not is_symbol(current) or is_private(current)
            stack.append((current, visible, True))
        else:
            visible = True
        stack.extend(
            (child, visible, False) for child in reversed(direct_children(current))
        )
    return found


def _refs_in(attr: Attribute) -> Iterator[SymbolRefAttr]:
    if isinstance(attr, SymbolRefAttr):
        yield attr
    elif isa(attr, ArrayAttr[Attribute]):
        for element in attr.data:
            yield from _refs_in(element)
    elif isinstance(attr, DictionaryAttr):
        for element in attr.data.values():
            yield from _refs_in(element)
    elif isinstance(attr, ParametrizedAttribute):
        for element in attr.parameters:
            yield from _refs_in(element)


def _own_refs(op: Operation) -> Iterator[SymbolRefAttr]:
    for attr in op.attributes.values():
        yield from _refs_in(attr)
    for attr in op.properties.values():
        yield from _refs_in(attr)


def own_symbol_uses(op: Operation) -> list[SymbolRefAttr]:
    """The symbol references in `op`'s own attributes and properties, not those
    of the ops nested in it."""
    return list(_own_refs(op))


def is_unknown_symbol_table(op: Operation) -> bool:
    """MLIR's `isPotentiallyUnknownSymbolTable`: an unregistered op with one region."""
    return isinstance(op, UnregisteredOp) and len(op.regions) == 1


def symbol_uses(op: Operation) -> list[SymbolRefAttr] | None:
    """The symbol references held by `op` and the ops nested in it (MLIR's
    `SymbolTable::getSymbolUses`); None when an unregistered op might hide a
    symbol table, so the uses cannot be known."""
    if is_unknown_symbol_table(op):
        return None
    uses = list(_own_refs(op))
    if is_symbol_table(op):
        return uses
    worklist = direct_children(op)
    while worklist:
        current = worklist.pop()
        if is_unknown_symbol_table(current):
            return None
        uses.extend(_own_refs(current))
        if not is_symbol_table(current):
            worklist.extend(direct_children(current))
    return uses


class SymbolTables:
    """MLIR's SymbolTableCollection: one name -> symbol map per table, built on use."""

    def __init__(self) -> None:
        self._tables: dict[Operation, dict[str, Operation]] = {}

    def _table(self, table_op: Operation) -> dict[str, Operation]:
        table = self._tables.get(table_op)
        if table is None:
            table = dict[str, Operation]()
            for child in reversed(direct_children(table_op)):
                name = symbol_name(child) if is_symbol(child) else None
                if name is not None:
                    table[name] = child
            self._tables[table_op] = table
        return table

    def lookup(self, table_op: Operation, name: str) -> Operation | None:
        return self._table(table_op).get(name)

    def resolve_path(self, table_op: Operation, ref: SymbolRefAttr) -> list[Operation]:
        """Every symbol along `ref` from `table_op` (MLIR's `lookupSymbolIn` with a
        result list); empty when some part does not resolve."""
        found: list[Operation] = []
        current = table_op
        names = [ref.root_reference, *ref.nested_references.data]
        for index, name in enumerate(names):
            symbol = self.lookup(current, name.data)
            if symbol is None:
                return []
            found.append(symbol)
            if index + 1 < len(names):
                if not is_symbol_table(symbol):
                    return []
                current = symbol
        return found

    def resolve(self, table_op: Operation, ref: SymbolRefAttr) -> Operation | None:
        """The symbol `ref` names from `table_op`, or None."""
        path = self.resolve_path(table_op, ref)
        return path[-1] if path else None

    def forget(self, table_op: Operation) -> None:
        """Drop the cached map of `table_op` after its symbols changed."""
        self._tables.pop(table_op, None)
