"""`.mlir` input on mutated real files and random text: parsing ends in a module or
in `IRParseError`; a parsed module verifies (a diagnostic, or None) and prints in
generic form, and in custom form when it verifies, without an exception; all
within the time bound."""

from __future__ import annotations

from hypothesis import event, given
from hypothesis import strategies as st

from passflow import ir
from passflow.diagnostics import IRParseError

from .grammar import IR_TEXT
from .support import escape, fuzz_settings, time_bound


@fuzz_settings(400)
@given(IR_TEXT, st.booleans())
def test_ir_parses_verifies_and_prints_or_raises_ir_parse_error(
    text: str, allow_unregistered: bool
) -> None:
    ctx = ir.default_context(allow_unregistered=allow_unregistered)
    with time_bound(text):
        try:
            module = ir.parse_module(text, ctx, "fuzz.mlir")
        except IRParseError as err:
            event("error: IRParseError")
            assert str(err).startswith("fuzz.mlir:")
            return
        except Exception as err:
            raise escape(text, err) from err
        stage = "verify"
        try:
            problem = ir.verify(module)
            stage = "print (generic)"
            ir.print_op(module, generic=True)
            if problem is None:
                stage = "print (custom)"
                ir.print_op(module)
        except Exception as err:
            raise escape(f"{stage} of {text!r}", err) from err
        event("parsed and verified" if problem is None else "parsed, not verified")
