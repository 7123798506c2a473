"""Integers as LLVM reads them on the command line (`StringRef::getAsInteger`
with radix 0): pass options, `--mlir-debug-counter` values, breakpoint lines.

The radix is sensed from the prefix (`0x` hex, `0b` binary, `0o` or a leading
`0` octal, else decimal) and the whole text must be one integer. Text of any
length is refused in time linear in its length, before Python's own limit on
converting long decimal strings could be reached.
"""

from __future__ import annotations

__all__ = ["parse_llvm_integer"]

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
