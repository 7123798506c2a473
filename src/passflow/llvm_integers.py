"""Integers as LLVM reads them on the command line (`StringRef::getAsInteger`
with radix 0): pass options, `--mlir-debug-counter` values, breakpoint lines; and
as an `APInt` of a fixed width holds them, which is how MLIR folds and stores
`index` values (64 bits, where an xDSL `index` attribute holds any Python int).

The radix is sensed from the prefix (`0x` hex, `0b` binary, `0o` or a leading
`0` octal, else decimal) and the whole text must be one integer. Text of any
length is refused in time linear in its length, before Python's own limit on
converting long decimal strings could be reached.
"""

from __future__ import annotations

__all__ = ["INDEX_BITS", "index_range", "parse_llvm_integer", "wrap_index"]

INDEX_BITS = 64
"""The width of MLIR's `index` in attributes and folds
(`IndexType::kInternalStorageBitWidth`)."""

_DIGITS = "0123456789abcdef"
_MAX_BITS = 64


def parse_llvm_integer(text: str, *, signed: bool = True) -> int | None:
    """The integer `text` spells, or None if it is not one or does not fit 64
    bits: `signed` reads int64 (a leading `-` allowed, down to `-2**63`),
    otherwise uint64."""
    negative = signed and text.startswith("-")
    digits, radix = _auto_radix(text[1:] if negative else text)
    allowed = _DIGITS[:radix]
    if not digits or not all(c.isascii() and c.lower() in allowed for c in digits):
        return None
    if len(digits.lstrip("0")) > _MAX_BITS:  # wider than 64 bits in any radix
        return None
    magnitude = int(digits, radix)
    limit = 2**_MAX_BITS - 1
    if signed:
        limit = 2**63 if negative else 2**63 - 1
    if magnitude > limit:
        return None
    return -magnitude if negative else magnitude


def _auto_radix(text: str) -> tuple[str, int]:
    """llvm's `GetAutoSenseRadix`: the digits after the prefix, and their radix."""
    prefix = text[:2]
    if prefix in ("0x", "0X"):
        return text[2:], 16
    if prefix in ("0b", "0B"):
        return text[2:], 2
    if prefix == "0o":  # case-sensitive, unlike the others
        return text[2:], 8
    if len(text) > 1 and text[0] == "0" and text[1] in "0123456789":
        return text[1:], 8
    return text, 10


def index_range() -> tuple[int, int]:
    """The values an `index` attribute may hold, as (lowest, highest + 1): MLIR's
    parser reads `index` literals as 64-bit signed."""
    half = 1 << (INDEX_BITS - 1)
    return -half, half


def wrap_index(value: int) -> int:
    """`value` as a 64-bit `APInt` holds it, read as signed: what MLIR's folders
    give for an `index` computation that overflows (`9223372036854775807 + 1` is
    `-9223372036854775808`)."""
    half = 1 << (INDEX_BITS - 1)
    return ((value + half) & ((1 << INDEX_BITS) - 1)) - half
