"""passflow's lexer reads every token as xDSL's lexer does: same kinds, same
spans, same errors at the same places; only faster (`passflow.lexer`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from differential.corpus import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from passflow import ir
from passflow.diagnostics import IRParseError
from passflow.lexer import MAX_DECIMAL_DIGITS, Lexer

HERE = Path(__file__).parent
FILES = sorted((HERE / "filecheck").rglob("*.mlir")) + sorted(CORPUS.rglob("*.mlir"))


class XDSLLexer(MLIRLexer):
    """xDSL's lexer as it is, with the linear-time string pattern (the same
    language; only how it fails differs)."""

    _unescaped_characters_regex = Lexer._unescaped_characters_regex  # pyright: ignore[reportPrivateUsage]


Read = tuple[MLIRTokenKind, int, int] | tuple[str, int, int]


def tokens(lexer: MLIRLexer) -> list[Read]:
    """Every token up to the end, or up to the error, with the error's place."""
    read: list[Read] = []
    while True:
        try:
            token = lexer.lex()
        except ParseError as err:
            read.append((err.msg, err.span.start, err.span.end))
            return read
        read.append((token.kind, token.span.start, token.span.end))
        if token.kind is MLIRTokenKind.EOF:
            return read


def both(text: str) -> tuple[list[Read], list[Read]]:
    source = Input(text, "test.mlir")
    return tokens(Lexer(source)), tokens(XDSLLexer(source))


def test_the_corpora_are_there() -> None:
    assert len(FILES) > 600


def test_every_corpus_file_lexes_as_xdsl_lexes_it() -> None:
    differ: list[Path] = []
    for path in FILES:
        ours, theirs = both(path.read_text(errors="replace"))
        if ours != theirs:
            differ.append(path)
    assert differ == []


FRAGMENTS = [
    *" \n\t\v\f\r",
    *"%#!^@{}()[]<>:,=+-*/?|.\"'$_",
    "//",
    "->",
    "{-#",
    "#-}",
    "...",
    "0",
    "007",
    "0x",
    "0x1F",
    "12",
    "1.5",
    "1e3",
    "2.",
    "abc",
    "i32",
    "a.b$c",
    "é",
    "²",
    "\\n",
    '"s"',
]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join))
def test_any_text_lexes_as_xdsl_lexes_it(text: str) -> None:
    ours, theirs = both(text)
    assert ours == theirs


@pytest.mark.parametrize(
    ("text", "kinds"),
    [
        ("%0 = arith.addi %a, %b : i32", ["PERCENT_IDENT", "EQUAL", "BARE_IDENT"]),
        ("// c\n  ^bb0(", ["CARET_IDENT", "L_PAREN"]),
        ("{-# x #-}", ["FILE_METADATA_BEGIN", "BARE_IDENT", "FILE_METADATA_END"]),
        ("12 1.5 0x1F 0", ["INTEGER_LIT", "FLOAT_LIT", "INTEGER_LIT", "INTEGER_LIT"]),
        ("@f -> !t #a", ["AT_IDENT", "ARROW", "EXCLAMATION_IDENT", "HASH_IDENT"]),
    ],
)
def test_tokens_are_of_their_kinds(text: str, kinds: list[str]) -> None:
    read = tokens(Lexer(Input(text, "test.mlir")))
    names = [k.name if isinstance(k, MLIRTokenKind) else k for k, _, _ in read]
    assert names[: len(kinds)] == kinds


def test_a_comment_at_the_end_is_skipped_not_a_slash() -> None:
    assert tokens(Lexer(Input("a // b", "t.mlir"))) == [
        (MLIRTokenKind.BARE_IDENT, 0, 1),
        (MLIRTokenKind.EOF, 6, 7),
    ]


def test_an_integer_too_long_to_convert_is_a_located_error() -> None:
    digits = "9" * (MAX_DECIMAL_DIGITS + 1)
    with pytest.raises(IRParseError, match=re.escape("1:21: error: integer constant")):
        ir.parse_module(f"%0 = arith.constant {digits} : i64", ir.default_context())
