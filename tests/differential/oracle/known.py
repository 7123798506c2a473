"""Documented refusals: outputs the oracle finds invalid (or results that differ)
that are known, with their cause and where they are tracked.

Listed cases still run; the test fails if one of them is found valid again (the
entry is then stale: remove it with the fix), so nothing stays listed by mistake.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KNOWN_INVALID", "Refusal"]


@dataclass(frozen=True)
class Refusal:
    origin: str
    """The input (`inputs.Input.origin`)."""
    pass_name: str
    cause: str
    tracked: str


_PDL_INTERP_VISIBILITY = (
    "xDSL's printer of `pdl_interp.func` writes a private function's visibility in "
    'its attribute dictionary (`attributes {sym_visibility = "private"}`) where '
    "MLIR's custom form needs `pdl_interp.func private @f`; xdsl-opt prints the same"
)
_XDSL_PRINTER = "docs/conformance.md, 'The validity oracle' (xDSL's printer)"

KNOWN_INVALID: tuple[Refusal, ...] = (
    Refusal(
        "xdsl:transforms/apply-pdl-interp/apply_pdl_interp_add_zero.mlir#1",
        "symbol-privatize",
        _PDL_INTERP_VISIBILITY,
        _XDSL_PRINTER,
    ),
)
