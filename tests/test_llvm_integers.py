"""LLVM's command-line integer syntax, shared by pass options and actions."""

from __future__ import annotations

import pytest

from passflow.llvm_integers import parse_llvm_integer


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("12", 12),
        ("-3", -3),
        ("0x1F", 31),
        ("0b101", 5),
        ("017", 15),
        ("0o17", 15),
        ("0", 0),
        ("", None),
        ("-", None),
        ("1x", None),
        ("08", None),
        ("+1", None),
        (" 1", None),
        (str(2**63), None),
    ],
)
def test_signed_integers(text: str, value: int | None) -> None:
    assert parse_llvm_integer(text) == value


def test_unsigned_reads_uint64_and_no_sign() -> None:
    assert parse_llvm_integer(str(2**64 - 1), signed=False) == 2**64 - 1
    assert parse_llvm_integer(str(2**64), signed=False) is None
    assert parse_llvm_integer("-1", signed=False) is None
    assert parse_llvm_integer(str(-(2**63))) == -(2**63)


@pytest.mark.parametrize("digits", ["1" * 5000, "0x" + "f" * 5000, "-" + "9" * 100000])
def test_integers_of_any_length_are_refused_not_raised(digits: str) -> None:
    # Python refuses to convert decimal strings over 4,300 digits with ValueError.
    assert parse_llvm_integer(digits) is None


def test_leading_zeros_do_not_count_towards_the_width() -> None:
    assert parse_llvm_integer("0x" + "0" * 100 + "1") == 1
