"""Find a module's top-level ops in its text without parsing it.

A sliced run (`passflow.sliced`) lets each worker parse, run and print its own
top-level ops, so the parent must know where they are before anything is
parsed. The scan reads the text with passflow's lexer (`passflow.lexer`, token
for token xDSL's) wherever no bracket is open, so every token that can start
or end a top-level op is the parser's own; inside brackets it only needs the
brackets themselves and skips to them, stopping at each string, comment and
`@symbol`, which it reads with the lexer too (those are the only tokens that
can hold a bracket or a quote).

The invariant, checked before the scan returns (`_check_coverage`): every
byte of the text belongs to exactly one piece, to the shell (the explicit
module's header and closing brace, the alias definitions), or to a gap that
is only whitespace and comments. Anything else, and anything the scan is not
sure of, makes it return None and the file runs whole:

- a top-level op starts at the start of a line, where no bracket is open and
  the line before did not end in a token that needs more (`->`, `:`, `,`,
  `=`...), with a dialect op name (`func.func`, `module`) or a quoted name
  followed by `(` (a generic op, even with the `(` on a later line); an alias
  definition (`#name =`, `!name =`) starts the same way. Ops that share a line
  stay in one piece, which is parsed, run and printed as a whole;
- text that is none of these before the first op (a byte-order mark, a stray
  word), results at the top level, the `{-# ... #-}` metadata section, a
  token the lexer rejects where no bracket is open, unbalanced brackets, an
  alias definition inside an explicit module, or an explicit module the scan
  cannot open (the generic form) all give up;
- an alias used before its definition (an error for the parser, which reads
  the file in order, but not for workers, which see every alias first) gives
  up, except as a location (`loc(#name)`), which MLIR resolves at the end.

A piece may still be wrong in ways that make a batch fall back to the parent
(`passflow.sliced.run`): an op cut in two fails to parse, an alias definition
that holds an op makes the shell non-empty.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRTokenKind

from passflow.lexer import Lexer, common_token

__all__ = ["Piece", "PieceText", "SourceSlices", "scan_slices", "scan_text"]

_BLANK = re.compile(r"(?:[ \t\n\r\f\v]|//[^\n]*+)*+")
"""Whitespace and comments, as the lexer skips them."""

_INNER = re.compile(r'["/{}()\[\]@]')
"""Inside brackets: the characters that can open or close a bracket, or
start a token that may hold one (a string, a comment, a quoted symbol)."""

_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = frozenset(")]}")

_NEEDS_MORE = frozenset(
    {
        MLIRTokenKind.ARROW,
        MLIRTokenKind.COLON,
        MLIRTokenKind.COMMA,
        MLIRTokenKind.EQUAL,
        MLIRTokenKind.MINUS,
        MLIRTokenKind.PLUS,
        MLIRTokenKind.STAR,
        MLIRTokenKind.SLASH,
        MLIRTokenKind.QUESTION,
        MLIRTokenKind.VERTICAL_BAR,
        MLIRTokenKind.LESS,
    }
)
"""Tokens an op or alias definition cannot end with: a line after one of
them continues it."""

_STRINGS = (MLIRTokenKind.STRING_LIT, MLIRTokenKind.BYTES_LIT)

_Token = tuple[MLIRTokenKind, int, int]
"""A token as (kind, start, end)."""
_ALIAS_NAMES = (MLIRTokenKind.HASH_IDENT, MLIRTokenKind.EXCLAMATION_IDENT)


@dataclass(frozen=True)
class Piece:
    """One top-level op (or, rarely, a few): `text[start:end]` of the file.

    `symbols` are the symbols it defines as their custom form spells them
    (the first `@name` after each op name outside brackets: its header),
    `references` every other `@name` it mentions."""

    start: int
    end: int
    symbols: tuple[str, ...]
    references: frozenset[str]

    @property
    def symbol(self) -> str | None:
        """The symbol its first op defines, if any."""
        return self.symbols[0] if self.symbols else None


@dataclass(frozen=True)
class PieceText:
    """A piece ready to parse on its own: its text, padded with spaces so its
    first op starts at its column, and the line it starts on. For a run of
    pieces, `starts` are where each of them starts in `text`."""

    text: str
    first_line: int
    starts: tuple[int, ...] = ()

    def split(self) -> list[PieceText]:
        """A run's pieces, each ready to parse on its own."""
        if len(self.starts) < 2:
            return [self]
        text = self.text
        ends = [*self.starts[1:], len(text)]
        pieces: list[PieceText] = []
        for start, end in zip(self.starts, ends, strict=True):
            line_start = text.rfind("\n", 0, start) + 1
            padding = " " * (start - line_start)
            line = self.first_line + text.count("\n", 0, start)
            pieces.append(PieceText(padding + text[start:end], line))
        return pieces


@dataclass(frozen=True)
class SourceSlices:
    """A module's text cut into its top-level ops.

    `shell` is the rest: the module's header and closing brace (an explicit
    module) or nothing, with the attribute and type aliases; parsed, it is the
    module with an empty body. `pieces` are in program order.
    """

    text: str
    first_line: int
    shell: str
    pieces: tuple[Piece, ...]
    line_of: tuple[int, ...]
    """The line (in the file) each piece starts on."""

    @property
    def shell_text(self) -> PieceText:
        """The shell, ready to parse (it starts where the file's text does)."""
        return PieceText(self.shell, self.first_line)

    def piece_text(self, index: int) -> PieceText:
        return self.run_text(index, index)

    def run_text(self, first: int, last: int) -> PieceText:
        """Pieces `first` to `last` and what lies between them, ready to parse."""
        start = self.pieces[first].start
        line_start = self.text.rfind("\n", 0, start) + 1
        padding = len(padding_text := " " * (start - line_start))
        starts = (
            tuple(
                padding + self.pieces[i].start - start for i in range(first, last + 1)
            )
            if last > first
            else ()
        )
        return PieceText(
            padding_text + self.text[start : self.pieces[last].end],
            self.line_of[first],
            starts,
        )

    def blank_between(self, first: int, second: int) -> bool:
        """Whether only whitespace and comments separate two pieces (no alias
        definition, no metadata)."""
        return (
            _BLANK.fullmatch(
                self.text, self.pieces[first].end, self.pieces[second].start
            )
            is not None
        )

    def defined_by(self) -> dict[str, int]:
        """Which piece defines each symbol (the first, if several claim it)."""
        found: dict[str, int] = {}
        for index, piece in enumerate(self.pieces):
            for symbol in piece.symbols:
                found.setdefault(symbol, index)
        return found

    def referenced(self) -> frozenset[int]:
        """The pieces another piece references by symbol (their headers are
        checked after a run, since the other piece only saw them as they were)."""
        defined_by = self.defined_by()
        return frozenset(
            defined_by[name]
            for piece in self.pieces
            for name in piece.references
            if name in defined_by
        )


class _GiveUp(Exception):
    """The scan cannot vouch for a cut of this text."""


@dataclass
class _Item:
    """A top-level op or alias definition being read: where it starts and
    ends, the symbols it defines and names, and (for an op) its last brace
    group at the top level, with whether a token followed it. `header`: an
    op name was read and no `@name` since (the next one is a definition)."""

    start: int
    is_alias: bool
    end: int = -1
    header: bool = False
    symbols: list[str] = field(default_factory=lambda: list[str]())
    aliases: list[str] = field(default_factory=lambda: list[str]())
    """The aliases an alias item defines (more than one share a line)."""
    references: set[str] = field(default_factory=lambda: set[str]())
    braces: tuple[int, int] | None = None
    after_braces: bool = False
    name: str = ""


class _Scanner:
    """One scan of one text: a lexer over it, and the items of the region
    being cut."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.lexer = Lexer(Input(text, "<scan>"))

    def token(self, position: int) -> _Token:
        """The token after `position` (the lexer's), as (kind, start, end)."""
        found = common_token(self.text, position)
        if found is not None:
            return found
        self.lexer.pos = position
        try:
            token = self.lexer.lex()
        except ParseError as err:
            raise _GiveUp(str(err)) from None
        return token.kind, token.span.start, token.span.end

    def region(self, start: int, end: int) -> list[_Item]:
        """The items of `text[start:end]` (a module's body, or the whole
        text), in order; each item's `end` is where the next one's line
        starts (or `end`)."""
        text = self.text
        items: list[_Item] = []
        current: _Item | None = None
        previous: MLIRTokenKind | None = None
        previous_end = start
        angles = 0
        position = start
        while True:
            kind, at, position = self.token(position)
            if kind is MLIRTokenKind.EOF or at >= end:
                break
            spelling = text[at:position]
            if angles == 0 and self._starts_line(previous, previous_end, at):
                starts = self._item_start(kind, spelling, position)
                if starts is not None:
                    line = text.rfind("\n", 0, at) + 1
                    if current is not None:
                        current.end = max(line, current.start)
                    current = _Item(at, starts, name=spelling, header=not starts)
                    items.append(current)
            if current is None:
                raise _GiveUp("text before the first op")
            if kind is MLIRTokenKind.PERCENT_IDENT and angles == 0:
                raise _GiveUp("values at the top level")
            if kind is MLIRTokenKind.FILE_METADATA_BEGIN:
                raise _GiveUp("the metadata section")
            if current.braces is not None:
                current.after_braces = True
            if kind is MLIRTokenKind.AT_IDENT:
                self._symbol(current, spelling, angles == 0)
            elif kind in _ALIAS_NAMES and current.is_alias and angles == 0:
                if self.token(position)[0] is MLIRTokenKind.EQUAL:
                    current.aliases.append(spelling)
            elif kind is MLIRTokenKind.BARE_IDENT and "." in spelling:
                current.header = not current.is_alias and previous not in _NEEDS_MORE
            elif kind is MLIRTokenKind.LESS:
                angles += 1
            elif kind is MLIRTokenKind.GREATER:
                angles -= 1
                if angles < 0:
                    raise _GiveUp("an unbalanced '>'")
            elif spelling in _OPEN:
                position = self._skip_brackets(current, at, end)
                if spelling == "{" and angles == 0:
                    current.braces = (at, position)
                    current.after_braces = False
            elif spelling in _CLOSE:
                raise _GiveUp("an unbalanced bracket")
            previous = kind
            previous_end = position
        if current is not None:
            current.end = end
        if angles != 0:
            raise _GiveUp("an unbalanced '<'")
        return items

    def _starts_line(
        self, previous: MLIRTokenKind | None, previous_end: int, at: int
    ) -> bool:
        """Whether a token at `at` may start an item: it is the region's first,
        or the first of its line after a token that may end one."""
        if previous is None:
            return True
        return (
            previous not in _NEEDS_MORE and self.text.find("\n", previous_end, at) >= 0
        )

    def _item_start(self, kind: MLIRTokenKind, spelling: str, end: int) -> bool | None:
        """Whether a token (ending at `end`) starts an alias definition (True)
        or an op (False) at the start of a line; None if it starts neither."""
        if kind is MLIRTokenKind.BARE_IDENT:
            return False if "." in spelling or spelling == "module" else None
        if kind in _STRINGS:
            after = self.token(end)[0]
            return False if after is MLIRTokenKind.L_PAREN else None
        if kind in _ALIAS_NAMES:
            after = self.token(end)[0]
            return True if after is MLIRTokenKind.EQUAL else None
        return None

    @staticmethod
    def _symbol(item: _Item, spelling: str, top: bool) -> None:
        name = spelling[1:]
        if name.startswith('"'):
            name = name[1:-1]
        if top and item.header:
            item.symbols.append(name)
            item.header = False
        else:
            item.references.add(name)

    def _skip_brackets(self, item: _Item, at: int, end: int) -> int:
        """The position just past the bracket that closes the one at `at`,
        noting the symbols named inside."""
        text = self.text
        closing = [_OPEN[text[at]]]
        position = at + 1
        while closing:
            match = _INNER.search(text, position, end)
            if match is None:
                raise _GiveUp("an unclosed bracket")
            found = match.start()
            char = text[found]
            position = found + 1
            if char in _OPEN:
                if text.startswith("{-#", found):
                    raise _GiveUp("the metadata section")
                closing.append(_OPEN[char])
            elif char in _CLOSE:
                if closing.pop() != char:
                    raise _GiveUp("mismatched brackets")
            elif char == '"':
                position = self._string_end(found)
            elif char == "@":
                position = self._inner_symbol(item, found)
            elif text.startswith("//", found):
                newline = text.find("\n", found, end)
                position = end if newline < 0 else newline
        return position

    def _string_end(self, at: int) -> int:
        kind, start, end = self.token(at)
        if kind not in _STRINGS or start != at:
            raise _GiveUp("a string the lexer does not read")
        return end

    def _inner_symbol(self, item: _Item, at: int) -> int:
        """Past the `@name` at `at`; a `@` the lexer does not read as one is
        skipped (a missed reference only makes a batch fall back)."""
        self.lexer.pos = at
        try:
            token = self.lexer.lex()
        except ParseError:
            return at + 1
        if token.kind is not MLIRTokenKind.AT_IDENT or token.span.start != at:
            return at + 1
        self._symbol(item, token.text, False)
        return token.span.end


def _alias_uses(text: str, name: str) -> tuple[int, int]:
    """How often alias `name` appears in `text` as a token, and how often as a
    location (`loc(#name)`). An appearance inside a string or a comment is
    counted too: the scan only errs on the side of running whole."""
    escaped = re.escape(name)
    edge = r"(?![\w$.\-])"
    uses = len(re.findall(rf"(?<![\w$.\-]){escaped}{edge}", text))
    blank = _BLANK.pattern
    locations = len(re.findall(rf"\bloc{blank}\({blank}{escaped}{edge}", text))
    return uses, locations


def _check_aliases(text: str, items: list[_Item]) -> None:
    """Give up if an op uses an alias before its definition, other than as a
    location: the parser would reject it, the workers would not."""
    seen_op = False
    earlier: list[_Item] = []
    for item in items:
        if not item.is_alias:
            seen_op = True
            earlier.append(item)
            continue
        if not seen_op:
            continue
        for name in item.aliases:
            for op in earlier:
                uses, locations = _alias_uses(text[op.start : op.end], name)
                if uses != locations:
                    raise _GiveUp(f"alias {name} used before its definition")


def _check_coverage(text: str, owned: list[tuple[int, int]]) -> None:
    """Every byte of `text` is in exactly one of the `owned` spans or in a gap
    of whitespace and comments: nothing is cut out, nothing counted twice."""
    position = 0
    for start, end in sorted(owned):
        if start < position or end < start:
            raise _GiveUp("overlapping pieces")
        if _BLANK.fullmatch(text, position, start) is None:
            raise _GiveUp("text outside every piece")
        position = end
    if _BLANK.fullmatch(text, position, len(text)) is None:
        raise _GiveUp("text outside every piece")


def _module_body(items: list[_Item]) -> tuple[int, int] | None:
    """The body of an explicit module (`module ... { BODY }`) that is the
    text's only op: the offsets just inside its braces."""
    ops = [item for item in items if not item.is_alias]
    if len(ops) != 1:
        return None
    module = ops[0]
    if module.name == '"builtin.module"':
        raise _GiveUp("a module in the generic form")
    if module.name not in ("module", "builtin.module"):
        return None
    if module.braces is None or module.after_braces:
        raise _GiveUp("a module the scan cannot open")
    begin, finish = module.braces
    return begin + 1, finish - 1


def _scan(text: str, first_line: int) -> SourceSlices:
    scanner = _Scanner(text)
    items = scanner.region(0, len(text))
    body = _module_body(items)
    owned = [(item.start, item.end) for item in items if item.is_alias]
    if body is None:
        shell = "".join(text[start:end] for start, end in owned)
    else:
        begin, finish = body
        header = [(s, e) for s, e in owned if e <= begin]
        if header != owned:
            raise _GiveUp("an alias definition after the module")
        items = scanner.region(begin, finish)
        if any(item.is_alias for item in items):
            raise _GiveUp("an alias definition inside the module")
        shell = text[:begin] + "\n" + text[finish:]
        owned = [(0, begin), (finish, len(text))]
    _check_aliases(text, items)
    ops = [item for item in items if not item.is_alias]
    if not ops:
        raise _GiveUp("no op")
    owned += [(item.start, item.end) for item in ops]
    _check_coverage(text, owned)
    pieces = tuple(
        Piece(
            item.start,
            item.end,
            tuple(item.symbols),
            frozenset(item.references.difference(item.symbols)),
        )
        for item in ops
    )
    lines: list[int] = []
    line = first_line
    counted = 0
    for piece in pieces:
        line += text.count("\n", counted, piece.start)
        counted = piece.start
        lines.append(line)
    return SourceSlices(text, first_line, shell, pieces, tuple(lines))


def scan_slices(text: str, first_line: int = 1) -> SourceSlices | None:
    """The top-level ops of `text` (an implicit module, or the body of the one
    explicit module it holds), or None if the scan cannot vouch for a cut."""
    found = scan_text(text, first_line)
    return found if isinstance(found, SourceSlices) else None


def scan_text(text: str, first_line: int = 1) -> SourceSlices | str:
    """`scan_slices`, or why the scan cannot vouch for a cut of `text`."""
    try:
        return _scan(text, first_line)
    except _GiveUp as err:
        return str(err)
