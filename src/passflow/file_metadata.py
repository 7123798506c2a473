"""The `{-# ... #-}` section of the output, with `--mlir-elide-resource-strings-if-larger`.

passflow-opt writes the input's section back as it was written. With the flag,
mlir-opt leaves out every resource entry whose printed value (a blob's
`"0x..."` with its quotes, a string, `true`) is longer than the limit, then
every group and section left empty; so does `elide_resources`, which prints
what remains in mlir-opt's layout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["elide_resources"]

_TOKEN = re.compile(r'//[^\n]*|"(?:[^"\\]|\\.)*"|[^\s{}:,"]+|[{}:,]')

_ESCAPES = {"\\": "\\", '"': '"', "n": "\n", "t": "\t"}


def _mlir_string(literal: str) -> str:
    """A string literal as MLIR prints it (`printEscapedString`): `\\\\` for a
    backslash, `\\XX` for a quote or a byte that is not printable ASCII."""
    if not literal.startswith('"'):
        return literal
    body = literal[1:-1]
    decoded = bytearray()
    at = 0
    while at < len(body):
        char = body[at]
        if char != "\\":
            decoded += char.encode()
            at += 1
        elif body[at + 1 : at + 2] in _ESCAPES:
            decoded += _ESCAPES[body[at + 1]].encode()
            at += 2
        else:
            decoded.append(int(body[at + 1 : at + 3], 16))
            at += 3
    printed = "".join(
        "\\\\"
        if byte == 0x5C
        else f"\\{byte:02X}"
        if byte < 0x20 or byte > 0x7E or byte == 0x22
        else chr(byte)
        for byte in decoded
    )
    return f'"{printed}"'


@dataclass
class _Group:
    """A `{ key: value, ... }` (values as written) or a `{ key: {...}, ... }`."""

    entries: list[tuple[str, str | _Group]] = field(
        default_factory=lambda: list[tuple[str, "str | _Group"]]()
    )


class _Reader:
    def __init__(self, text: str) -> None:
        tokens = _TOKEN.findall(text)
        self.tokens = [_mlir_string(t) for t in tokens if not t.startswith("//")]
        self.at = 0

    def take(self) -> str:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def group(self, closing: str | None) -> _Group:
        found = _Group()
        while self.at < len(self.tokens) and self.tokens[self.at] != closing:
            key = self.take()
            if self.take() != ":":
                raise ValueError("':' expected")
            value: str | _Group
            if self.tokens[self.at] == "{":
                self.take()
                value = self.group("}")
                self.take()
            else:
                value = self.take()
            found.entries.append((key, value))
            if self.at < len(self.tokens) and self.tokens[self.at] == ",":
                self.take()
        return found


def _elided(group: _Group, limit: int) -> _Group:
    kept = _Group()
    for key, value in group.entries:
        if isinstance(value, _Group):
            inner = _elided(value, limit)
            if inner.entries:
                kept.entries.append((key, inner))
        elif len(value) <= limit:
            kept.entries.append((key, value))
    return kept


def _lines(group: _Group, indent: int) -> list[str]:
    pad = "  " * indent
    lines: list[str] = []
    for index, (key, value) in enumerate(group.entries):
        comma = "," if index + 1 < len(group.entries) else ""
        if isinstance(value, _Group):
            lines.append(f"{pad}{key}: {{")
            lines.extend(_lines(value, indent + 1))
            lines.append(f"{pad}}}{comma}")
        else:
            lines.append(f"{pad}{key}: {value}{comma}")
    return lines


def elide_resources(metadata: str, limit: int) -> str:
    """`metadata` (a whole `{-# ... #-}` section) without the resource entries
    longer than `limit` when printed; unchanged if it cannot be read."""
    start = metadata.find("{-#")
    end = metadata.rfind("#-}")
    if start < 0 or end < start:
        return metadata
    try:
        group = _Reader(metadata[start + 3 : end]).group(None)
    except (IndexError, ValueError, UnicodeEncodeError):
        return metadata
    body = _lines(_elided(group, limit), 1)
    return "{-#\n" + ("\n".join(body) if body else "") + "\n#-}"
