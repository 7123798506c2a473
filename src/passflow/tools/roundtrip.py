"""`--verify-roundtrip`: the parsed input printed, parsed back and printed again.

mlir-opt prints the op in generic form with its locations, parses that text
and prints the result the same way; the two prints must be equal. It then does
the same through bytecode, which passflow does not write: the textual check
is the whole check here (docs/decisions.md).
"""

from __future__ import annotations

from passflow import ir
from passflow.diagnostics import Diagnostic, IRParseError, Severity
from passflow.print_options import PrintOptions

__all__ = ["roundtrip_error"]

_ROUNDTRIP = PrintOptions(generic=True, debug_info=True)


def roundtrip_error(top: ir.Operation, ctx: ir.Context, name: str) -> Diagnostic | None:
    """mlir-opt's error if `top` does not survive a print and a parse, else None."""
    reference = ir.print_op(top, options=_ROUNDTRIP)
    op_name = ir.operation_name(top).name
    try:
        again = ir.parse_module(reference, ctx, name)
    except IRParseError as err:
        diagnostic = Diagnostic(
            Severity.ERROR,
            f"'{op_name}' op failed to parse textual content back, cannot verify "
            "round-trip.\n",
            ir.location(top),
            operation=top,
        )
        diagnostic.attach_note(f"the printed text does not parse: {err.diagnostic}")
        return diagnostic
    children = ir.direct_children(again)
    reparsed = children[0] if ir.is_implicit_module(again) and children else again
    roundtripped = ir.print_op(reparsed, options=_ROUNDTRIP)
    if roundtripped == reference:
        return None
    return Diagnostic(
        Severity.ERROR,
        f"'{op_name}' op textual roundTrip testing roundtripped module differs "
        f"from reference:\n<<<<<<Reference\n{reference}\n=====\n{roundtripped}\n"
        ">>>>>roundtripped\n",
        ir.location(top),
        operation=top,
    )
