"""How IR is printed: mlir-opt's `OpPrintingFlags`, as one value.

The final output of passflow-opt, IR dumps around passes
(`PassManager.enable_ir_printing`) and the op a diagnostic shows all print
through `passflow.ir.print_op` with one of these, so a flag such as
`--mlir-print-debuginfo` means the same everywhere, as in mlir-opt. Nothing
here loads the IR: a tool declares and reads the flags before it needs xDSL.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

__all__ = ["DEFAULT_PRINT_OPTIONS", "PrintOptions"]


@dataclass(frozen=True)
class PrintOptions:
    """mlir-opt's printing flags; the defaults print as mlir-opt does without them."""

    generic: bool = False
    """`--mlir-print-op-generic`: every op in generic form."""
    debug_info: bool = False
    """`--mlir-print-debuginfo`: `loc(...)` on ops and block arguments, with
    `#loc` aliases when a top-level op is printed."""
    pretty_debug_info: bool = False
    """`--mlir-pretty-debuginfo`: locations without `loc(...)` and quotes
    (`file.mlir:3:4`); for reading, not parsing."""
    local_scope: bool = False
    """`--mlir-print-local-scope`: no aliases, every location inline."""
    elements_limit: int | None = None
    """`--mlir-elide-elementsattrs-if-larger`: a dense attribute with more
    elements (and not a splat) prints as `dense_resource<__elided__>`."""
    resource_limit: int | None = None
    """`--mlir-elide-resource-strings-if-larger`: resource entries longer than
    this (as printed) are left out of the output's `{-# ... #-}` section (IR
    dumps print no such section, so it changes nothing there)."""
    value_users: bool = False
    """`--mlir-print-value-users`: a comment after each op naming the users of
    its results (`// users: %3, %2`), or its id when it has none."""
    unique_ssa_ids: bool = False
    """`--mlir-print-unique-ssa-ids`: value numbers and names are never reused
    across isolated regions."""

    def with_generic(self, generic: bool = True) -> PrintOptions:
        """These options, in generic form or not (invalid IR prints generically)."""
        if generic == self.generic:
            return self
        return dataclasses.replace(self, generic=generic)

    @property
    def is_default(self) -> bool:
        """Whether xDSL's own printer prints exactly this (the fast path)."""
        return self in (DEFAULT_PRINT_OPTIONS, GENERIC_PRINT_OPTIONS)


DEFAULT_PRINT_OPTIONS = PrintOptions()
GENERIC_PRINT_OPTIONS = PrintOptions(generic=True)
