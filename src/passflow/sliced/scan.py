"""Find a module's top-level ops in its text without parsing it.

A sliced run (`passflow.sliced`) lets each worker parse, run and print its own
top-level ops, so the parent must know where they are before anything is
parsed. The scan is cheap: two regular expressions, one for the top level (op
starts at the beginning of a line, brackets, strings, comments, symbol
references) and one inside brackets (brackets, strings, comments, symbol
references); it never looks at what an op means.

A piece may be wrong only in ways that make the run fall back to the parent
(`passflow.sliced.run`): an op split in two fails to parse; two ops in one
piece are parsed, run and printed together, as they should be. Text the scan
does not understand (results at the top level, an unterminated string, the
`{-# ... #-}` metadata section, a generic-form module) makes it give up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Piece", "PieceText", "SourceSlices", "scan_slices"]

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_SYMBOL = re.compile(r'@(?:[\w$.\-]+|"(?:[^"\\\n]|\\.)*")')
# The characters that can matter: inside brackets, and at the top level, where
# a new line may start an op or an alias definition.
_INNER = re.compile(r'["/{}()\[\]@]')
_TOP = re.compile(r'["/{}()\[\]@\n]')
_OP_NAME = r"(?:module\b|[A-Za-z_][\w$\-]*(?:\.[\w$\-]+)+|\"[^\"\n]*\"(?=[ \t]*\())"
_LINE_START = re.compile(
    rf"[ \t]*(?:(?P<results>%)|(?P<alias>[#!][\w$.\-]+[ \t]*=)|(?P<op>{_OP_NAME}))"
)
_OPEN = "{(["
_CLOSE = "})]"
_MODULE_START = re.compile(r"[ \t]*(?:builtin\.)?module\b")
_BLANK = re.compile(r"(?:[ \t\n\r\f\v]|//[^\n]*+)*+")
_ANY_MODULE_START = re.compile(r"[ \t]*(?:(?:builtin\.)?module\b|\"builtin\.module\")")


@dataclass(frozen=True)
class Piece:
    """One top-level op (or, rarely, a few): `text[start:end]` of the file.

    `symbol` is the symbol it defines as its custom form spells it (the first
    `@name` of its header), `references` every other `@name` it mentions."""

    start: int
    end: int
    symbol: str | None
    references: frozenset[str]


@dataclass(frozen=True)
class PieceText:
    """A piece ready to parse on its own: its text, padded with spaces so its
    first op starts at its column, and the line it starts on."""

    text: str
    first_line: int


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
        padding = " " * (start - line_start)
        return PieceText(
            padding + self.text[start : self.pieces[last].end], self.line_of[first]
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
            if piece.symbol is not None:
                found.setdefault(piece.symbol, index)
        return found


class _Scan:
    """One scan: the pieces and alias definitions found so far, and the item
    (piece or alias) being read."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pieces: list[Piece] = []
        self.aliases: list[tuple[int, int]] = []
        self.start: int | None = None
        self.is_alias = False
        self.symbol: str | None = None
        self.references: set[str] = set()

    def begin(self, start: int, is_alias: bool) -> None:
        self.start = start
        self.is_alias = is_alias

    def close(self, end: int) -> None:
        start = self.start
        if start is None:
            return
        if self.is_alias:
            self.aliases.append((start, end))
        else:
            self.references.discard(self.symbol or "")
            self.pieces.append(
                Piece(start, end, self.symbol, frozenset(self.references))
            )
        self.start = None
        self.symbol = None
        self.references = set()


def _symbol_name(token: str) -> str:
    name = token[1:]
    return name[1:-1] if name.startswith('"') else name


def _scan_region(scan: _Scan, start: int, end: int) -> bool:
    """Cut `text[start:end]` (a module's body, or the whole text) into pieces
    and alias definitions; False if the scan does not understand the text."""
    text = scan.text
    depth = 0
    position = start
    line = start  # a line starts here, to be checked for an op
    while True:
        if line >= 0:
            found = _LINE_START.match(text, line, end)
            if found is not None:
                kind = found.lastgroup or ""
                if kind == "results":
                    return False  # values at the top level: numbering spans pieces
                op_start = found.start(kind)
                scan.close(line)
                scan.begin(op_start if kind == "op" else line, kind == "alias")
                position = found.end() if kind == "alias" else op_start
                name = _STRING.match(text, op_start) if kind == "op" else None
                if name is not None:  # a generic op's quoted name
                    position = name.end()
            line = -1
        match = (_TOP if depth == 0 else _INNER).search(text, position, end)
        if match is None:
            break
        at = match.start()
        char = text[at]
        position = at + 1
        if char == "\n":
            line = position
        elif char in _OPEN:
            if text.startswith("{-#", at):
                return False  # the metadata section
            depth += 1
        elif char in _CLOSE:
            depth -= 1
            if depth < 0:
                return False
        elif char == "@":
            symbol = _SYMBOL.match(text, at, end)
            if symbol is None:
                continue
            position = symbol.end()
            name = _symbol_name(symbol.group())
            if depth == 0 and scan.symbol is None and not scan.is_alias:
                scan.symbol = name
            else:
                scan.references.add(name)
        elif char == '"':
            string = _STRING.match(text, at, end)
            if string is None:
                return False  # a string that does not end on its line
            position = string.end()
        elif text.startswith("//", at):
            newline = text.find("\n", at, end)
            if newline < 0:
                break
            position = newline
    if depth != 0:
        return False
    scan.close(end)
    return True


def _module_body(text: str, scan: _Scan) -> tuple[int, int] | None:
    """The body of an explicit module (`module ... { BODY }`) that is the
    text's only op (`scan` cut the text): the offsets just inside its braces."""
    if len(scan.pieces) != 1:
        return None
    piece = scan.pieces[0]
    if not _MODULE_START.match(text, piece.start):
        return None
    body: tuple[int, int] | None = None
    opened: list[int] = []
    position = piece.start
    while True:
        match = _INNER.search(text, position, piece.end)
        if match is None:
            return body if not opened else None
        at = match.start()
        char = text[at]
        position = at + 1
        if char in _OPEN:
            opened.append(at)
        elif char in _CLOSE:
            if not opened:
                return None
            start = opened.pop()
            if not opened:  # a bracket of the header, or the body
                body = (start + 1, at) if text[start] == "{" else None
        elif char == '"':
            string = _STRING.match(text, at, piece.end)
            if string is None:
                return None
            position = string.end()
        elif char == "@":
            symbol = _SYMBOL.match(text, at, piece.end)
            position = symbol.end() if symbol is not None else position
        elif text.startswith("//", at):
            newline = text.find("\n", at, piece.end)
            position = newline if newline >= 0 else piece.end


def scan_slices(text: str, first_line: int = 1) -> SourceSlices | None:
    """The top-level ops of `text` (an implicit module, or the body of the one
    explicit module it holds), or None if the scan cannot tell them apart."""
    scan = _Scan(text)
    if not _scan_region(scan, 0, len(text)):
        return None
    body = _module_body(text, scan)
    if body is None:
        if len(scan.pieces) == 1 and _ANY_MODULE_START.match(
            text, scan.pieces[0].start
        ):
            return None  # a module the scan cannot open: it is the top-level op
        shell = "".join(text[a:b] for a, b in scan.aliases)
    else:
        begin, finish = body
        scan = _Scan(text)
        if not _scan_region(scan, begin, finish) or scan.aliases:
            return None
        shell = text[:begin] + "\n" + text[finish:]
    if not scan.pieces:
        return None
    pieces = tuple(scan.pieces)
    lines: list[int] = []
    line = first_line
    counted = 0
    for piece in pieces:
        line += text.count("\n", counted, piece.start)
        counted = piece.start
        lines.append(line)
    return SourceSlices(text, first_line, shell, pieces, tuple(lines))
