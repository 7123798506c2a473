"""What `--mlir-print-ir-*` asks for (`IRPrinterConfig`), and mlir-opt's
messages when it cannot be set up.

Apart from `passflow.instruments.ir_printing`, which prints, so that a tool
declares and reads the flags (`passflow.tools.pass_manager_options`) without
loading the IR.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection
from dataclasses import dataclass
from typing import TextIO

from passflow.print_options import DEFAULT_PRINT_OPTIONS, PrintOptions

__all__ = [
    "MODULE_SCOPE_THREADING_ERROR",
    "MODULE_SCOPE_THREADING_TOOL_ERROR",
    "IRPrinterConfig",
]

MODULE_SCOPE_THREADING_ERROR = (
    "IR printing can't be setup on a pass-manager without disabling "
    "multi-threading first."
)
"""MLIR's message when `enableIRPrinting` asks for module scope with threading on."""

MODULE_SCOPE_THREADING_TOOL_ERROR = (
    "IR print for module scope can't be setup on a pass-manager without "
    "disabling multi-threading first.\n"
)
"""mlir-opt's message for `--mlir-print-ir-module-scope` with threading on, as the
text of an error at `<unknown>:0` (it ends with a newline, so a blank line follows)."""


@dataclass(frozen=True)
class IRPrinterConfig:
    """When and where to print the IR (mlir-opt's `--mlir-print-ir-*` flags).

    `before` and `after` hold pass arguments (`cse`): every instance of such a
    pass is printed, whatever its options. After-failure implies printing after
    every pass, but only when it fails; after-change drops dumps of passes that
    left their op unchanged. With no filter at all nothing is printed, as in
    mlir-opt (after-change or module scope alone print nothing).
    """

    before: Collection[str] = ()
    after: Collection[str] = ()
    before_all: bool = False
    after_all: bool = False
    after_change: bool = False
    after_failure: bool = False
    module_scope: bool = False
    tree_dir: str | None = None
    assume_verified: bool = False
    """Print a failed pass's IR in custom form without verifying it first
    (`--mlir-print-assume-verified`); by default invalid IR prints generically."""
    stream: TextIO | None = None
    """Where dumps go when there is no tree directory; None is stderr at dump time."""
    print_options: PrintOptions = DEFAULT_PRINT_OPTIONS
    """How dumps print (mlir-opt's printing flags: debug info, elided elements...)."""

    def with_print_knobs(
        self,
        large_elements_limit: int | None = None,
        large_resource_limit: int | None = None,
        enable_debug_info: bool = False,
        print_generic_op_form: bool = False,
    ) -> IRPrinterConfig:
        """This config with MLIR's Python `enable_ir_printing` keywords applied
        to its print options (a keyword left at its default changes nothing)."""
        options = self.print_options
        changes: dict[str, object] = {}
        if large_elements_limit is not None:
            changes["elements_limit"] = large_elements_limit
        if large_resource_limit is not None:
            changes["resource_limit"] = large_resource_limit
        if enable_debug_info:
            changes["debug_info"] = True
        if print_generic_op_form:
            changes["generic"] = True
        if not changes:
            return self
        printing = dataclasses.replace(options, **changes)
        return dataclasses.replace(self, print_options=printing)

    @property
    def enabled(self) -> bool:
        """Whether any dump can happen (mlir-opt adds no instrumentation otherwise)."""
        return bool(
            self.before_all
            or self.after_all
            or self.after_failure
            or self.before
            or self.after
        )
