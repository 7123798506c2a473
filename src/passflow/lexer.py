"""The lexer passflow parses MLIR text with: xDSL's, made safe and fast.

Safe: xDSL's string literal pattern backtracks exponentially on an unterminated
string, and a decimal literal too long for Python to convert raised an
exception; both are located parse errors here. Fast: the tokens that make up
almost all of a module (identifiers, SSA and block names, symbols, attribute
and type aliases, decimal integers, punctuation) are read with one regular
expression per token instead of xDSL's character-by-character dispatch (which
took a fifth of the parser's time; this halves it); every other token (strings, floats, hexadecimal numbers,
file metadata, anything unexpected) is left to xDSL's code. Either way the
tokens are xDSL's, kind and span: `tests/test_lexer.py` compares the two on
every `.mlir` file of the test corpora and on generated text.
"""

from __future__ import annotations

import re
import sys

from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Span, Token
from xdsl.utils.mlir_lexer import (
    KIND_BY_PUNCTUATION_SPELLING,
    MLIRLexer,
    MLIRToken,
    MLIRTokenKind,
)

_SUFFIX_ID = r"(?:[0-9]+|[a-zA-Z$._-][a-zA-Z0-9$._-]*)"
_BARE_ID = r"[a-zA-Z_][a-zA-Z0-9_$.]*"

_COMMON_TOKEN = re.compile(
    rf"""
    (?>(?:[ \t\n\r\f\v]+|//[^\n]*)*)   # whitespace and comments, all of them (atomic)
    (?:
        (?P<BARE_IDENT>{_BARE_ID})
      | (?P<PERCENT_IDENT>%{_SUFFIX_ID})
      | (?P<CARET_IDENT>\^{_SUFFIX_ID})
      | (?P<EXCLAMATION_IDENT>!{_SUFFIX_ID})
      | (?P<HASH_IDENT>\#(?!-\}}){_SUFFIX_ID})
      | (?P<AT_IDENT>@{_BARE_ID})
      | (?P<INTEGER_LIT>[1-9][0-9]*+(?!\.)|0(?![0-9.x]))
      | (?P<PUNCTUATION>->|\{{(?!-\#)|[:,()}}\[\]<>=+/*?|-])
    )
    """,
    re.VERBOSE,
)
"""One common token after the whitespace before it. Each alternative takes a
token exactly where xDSL's lexer would, and only where its kind is certain: a
`#-}`, `{-#`, `0x...`, `007` or `1.5` is left to xDSL."""

_KIND_OF_GROUP = {
    name: MLIRTokenKind[name]
    for name in _COMMON_TOKEN.groupindex
    if name != "PUNCTUATION"
}


def common_token(text: str, position: int) -> tuple[MLIRTokenKind, int, int] | None:
    """The common token after the whitespace and comments at `position` in
    `text`, as (kind, start, end), exactly as xDSL's lexer would read it; None
    where the token is not a common one (a string, a float, anything odd) or
    the text ends: then xDSL's lexer decides."""
    found = _COMMON_TOKEN.match(text, position)
    if found is None:
        return None
    group = found.lastgroup
    assert group is not None
    start, end = found.span(group)
    kind = _KIND_OF_GROUP.get(group)
    if kind is None:
        kind = KIND_BY_PUNCTUATION_SPELLING[text[start:end]]
    return kind, start, end


MAX_DECIMAL_DIGITS = sys.get_int_max_str_digits() or sys.maxsize
"""Python refuses longer decimal strings (a guard against quadratic conversion)."""


class Lexer(MLIRLexer):
    """xDSL's MLIR lexer with a fast path for common tokens, a string literal
    pattern that fails in linear time, and MLIR's error for a decimal integer
    too long to convert.

    xDSL's `"(?:[^"...]+|<escape>)*"` nests two repetitions, so an unterminated
    string (a `"` and then a long line) backtracks exponentially: the parser
    would hang instead of reporting the error.
    """

    _unescaped_characters_regex = re.compile(
        r'"(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"'
    )

    def lex(self) -> MLIRToken:
        """The next token, as xDSL's lexer reads it."""
        found = common_token(self.input.content, self.pos)
        if found is None:
            token = super().lex()
        else:
            kind, start, end = found
            self.pos = end
            token = Token(kind, Span(start, end, self.input))
        if (
            token.kind is MLIRTokenKind.INTEGER_LIT
            and token.span.end - token.span.start > MAX_DECIMAL_DIGITS
            and token.text[:2] not in ("0x", "0X")
        ):
            raise ParseError(token.span, "integer constant out of range for attribute")
        return token
