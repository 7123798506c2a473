"""`symbol-privatize`: make the top-level symbols private (MLIR's SymbolPrivatize)."""

from __future__ import annotations

from passflow.ir import direct_children
from passflow.options import ListOption
from passflow.pass_base import OperationPass
from passflow.transforms._symbols import is_private, is_symbol, set_private, symbol_name

__all__ = ["SymbolPrivatize"]


class SymbolPrivatize(OperationPass):
    """Mark every symbol directly inside the op private, except the `exclude`d names.

    Used before `symbol-dce` or the inliner to declare that nothing outside the
    IR refers to these symbols, so the unused ones can be deleted.
    """

    name = "SymbolPrivatize"
    argument = "symbol-privatize"
    summary = "Mark symbols private"
    description = """\
This pass marks all top-level symbols of the operation run as `private`
except if listed in `exclude` pass option.
"""

    exclude = ListOption(
        str, help="Comma separated list of symbols that should not be marked private"
    )

    def run_on_operation(self) -> None:
        excluded = set(self.exclude)
        changed = False
        for op in direct_children(self.get_operation()):
            if is_symbol(op) and symbol_name(op) not in excluded and not is_private(op):
                set_private(op)
                changed = True
        if not changed:
            self.mark_all_analyses_preserved()
