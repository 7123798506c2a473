"""`symbol-dce`: erase the symbols nothing live can reach (MLIR's SymbolDCE)."""

from __future__ import annotations

from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from passflow.ir import direct_children
from passflow.pass_base import OperationPass
from passflow.statistics import Statistic
from passflow.transforms._symbols import (
    SymbolTables,
    can_discard_on_use_empty,
    is_private,
    is_symbol,
    is_symbol_table,
    nearest_symbol_table,
    not_a_symbol_table,
    symbol_uses,
)

__all__ = ["SymbolDCE"]


class _UnknownSymbolUses(Exception):
    """An op whose symbol uses cannot be computed; carries it for the error."""

    def __init__(self, op: Operation) -> None:
        super().__init__()
        self.op = op


class SymbolDCE(OperationPass):
    """Delete the symbols nothing live reaches: private ones, and `nested` ones
    of tables nothing outside the IR can see.

    Liveness starts at every non-symbol op and every symbol that could be used
    from outside the IR: public ones, and `nested` ones of a table that is
    visible from above (a public symbol table nested in another op). It flows
    through symbol references (resolved from the nearest symbol table, nested
    references included), into nested symbol tables as MLIR does. Running it on
    an op that is not a symbol table fails the pass.
    """

    name = "SymbolDCE"
    argument = "symbol-dce"
    summary = "Eliminate dead symbols"
    description = """\
This pass deletes all symbols that are found to be unreachable. This is done
by computing the set of operations that are known to be live, propagating
that liveness to other symbols, and then deleting all symbols that are not
within this live set. Live symbols are those that have a
[visibility](SymbolsAndSymbolTables.md/#symbol-visibility) that extends
beyond the IR, e.g. `public`, or those that are referenced by live symbols
or other non-Symbol operations.

For example, consider the following input:

```mlir
func.func private @dead_private_function()
func.func private @live_private_function()

// Note: The `public` isn't necessary here, as this is the default.
func.func public @public_function() {
  "foo.return"() {uses = [@live_private_function]} : () -> ()
}
```

A known live function, `public_function`, contains a reference to an
otherwise non-live function `live_private_function`. After running
`symbol-dce`, only these two symbols should remain, as the final symbol
`dead_private_function` is not visible outside of the current IR and there
are no links to known-live operations. After running, we get the expected:

```mlir
func.func private @live_private_function()

func.func public @public_function() {
  "foo.return"() {uses = [@live_private_function]} : () -> ()
}
```

See [Symbols and SymbolTables](SymbolsAndSymbolTables.md) for more
information on `Symbols`.
"""

    num_dce = Statistic("num-dce'd", "Number of symbols DCE'd")

    def run_on_operation(self) -> None:
        table_op = self.get_operation()
        if not is_symbol_table(table_op):
            self.emit_diagnostic(
                not_a_symbol_table(table_op, "SymbolDCE", self.argument)
            )
            self.signal_pass_failure()
            return
        # The table is hidden (its nested symbols unreachable from outside the
        # IR) unless it is a public or nested symbol inside another op.
        hidden = table_op.parent_op() is None or not is_symbol(table_op)
        hidden = hidden or is_private(table_op)
        live: set[Operation] = set()
        try:
            _compute_liveness(table_op, SymbolTables(), hidden, live)
        except _UnknownSymbolUses as err:
            self.emit_error(
                err.op,
                "operation contains potentially unknown symbol table, meaning that "
                "we can't reliable compute symbol uses",
            )
            self.signal_pass_failure()
            return
        erased = _erase_dead_symbols(table_op, live)
        if not erased:
            self.mark_all_analyses_preserved()
        self.num_dce += erased


def _compute_liveness(
    table_op: Operation, tables: SymbolTables, hidden: bool, live: set[Operation]
) -> None:
    """Add to `live` every symbol of `table_op` (and nested tables) that is live.

    As MLIR: a symbol is discardable when its table is `hidden` or it is private,
    and `canDiscardOnUseEmpty` holds (it is not public); so a `nested` symbol is
    live from the start only in a table visible from above. A nested table is
    hidden when its parent table is, or when it is not a symbol or is private.
    """
    worklist: list[Operation] = []
    for op in direct_children(table_op):
        if not is_symbol(op):
            worklist.append(op)
            continue
        discardable = (hidden or is_private(op)) and can_discard_on_use_empty(op)
        if not discardable and op not in live:
            live.add(op)
            worklist.append(op)
    while worklist:
        op = worklist.pop()
        if is_symbol_table(op):
            nested_hidden = hidden or not is_symbol(op) or is_private(op)
            _compute_liveness(op, tables, nested_hidden, live)
        else:
            worklist.extend(child for child in direct_children(op) if child.regions)
        _mark_uses_live(op, tables, live, worklist)


def _mark_uses_live(
    op: Operation, tables: SymbolTables, live: set[Operation], worklist: list[Operation]
) -> None:
    parent = op.parent_op()
    scope = parent if parent is not None and is_symbol_table(parent) else None
    if scope is None and parent is not None:
        scope = nearest_symbol_table(parent)
    if scope is None:  # below an unregistered op that may be a symbol table
        return
    uses = symbol_uses(op)
    if uses is None:
        raise _UnknownSymbolUses(op)
    for ref in uses:
        for symbol in tables.resolve_path(scope, ref):
            if symbol not in live:
                live.add(symbol)
                worklist.append(symbol)


def _erase_dead_symbols(table_op: Operation, live: set[Operation]) -> int:
    """Erase every symbol not in `live` in `table_op` and its nested tables."""
    erased = 0
    # Innermost tables first, as MLIR's post-order walk: a dead symbol's own
    # dead symbols are counted before it goes.
    tables = [op for op in table_op.walk(region_first=True) if is_symbol_table(op)]
    for table in tables:
        for op in direct_children(table):
            if is_symbol(op) and op not in live:
                Rewriter.erase_op(op, safe_erase=False)
                erased += 1
    return erased
