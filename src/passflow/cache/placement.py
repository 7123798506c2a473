"""Where a stored result stands: the cache keys a piece by its text alone
(`passflow.cache.keys`), so that a line added above a function leaves it a
hit, and the positions its result prints are moved to where the piece
stands now.

A piece is stored with the line it started on (`CachedPiece.line`). Played
back at another line, the locations of its diagnostics and notes (and so the
source lines printed under them) move by the difference. That is exact only
when every position the result holds lies inside the piece and came from
where its text stood; so a result is stored pinned (`CachedPiece.anchor`: the
positions of the piece, of the pieces it references and of the shell) when:

- a location of its events lies outside the piece (a note on a callee, a
  diagnostic on the module);
- its text writes a location (`loc(...)`): that position does not move with
  the text;
- its printed ops, messages or captured output name the file (a location in
  a message's text): nothing here can tell what else in them is a position.

A pinned result is a hit only where all of those stand as they did, as if
its key held them.
"""

from __future__ import annotations

from dataclasses import replace

from passflow.cache.store import CachedPiece
from passflow.diagnostics import Diagnostic, Location

__all__ = ["place", "stored"]


def stored(
    piece: CachedPiece, name: str, text: str, line: int, anchor: str
) -> CachedPiece:
    """`piece`, the result of the piece `text` starting on `line` of the file
    `name`, as the cache holds it: with its line, pinned to `anchor` unless
    all its positions move with it."""
    last = line + text.count("\n")
    movable = (
        "loc(" not in text
        and name not in (piece.body or "")
        and all(_movable(event, name, line, last) for event in piece.events)
    )
    return replace(piece, line=line, anchor=None if movable else anchor)


def place(piece: CachedPiece, line: int, anchor: str) -> CachedPiece | None:
    """The stored `piece` as the piece now starting on `line` (its positions
    `anchor`) gives it; None if it is pinned elsewhere (a miss)."""
    if piece.anchor is not None:
        return piece if piece.anchor == anchor else None
    shift = line - piece.line
    if shift == 0:
        return piece
    return replace(
        piece, line=line, events=tuple(_moved(event, shift) for event in piece.events)
    )


def _movable(event: Diagnostic, name: str, first: int, last: int) -> bool:
    location = event.location
    if name in event.message:
        return False
    if location.file is not None and not (
        location.file == name and first <= location.line <= last
    ):
        return False
    return all(_movable(note, name, first, last) for note in event.notes)


def _moved(event: Diagnostic, shift: int) -> Diagnostic:
    location = event.location
    if location.file is not None:
        location = Location(location.file, location.line + shift, location.column)
    return replace(
        event,
        location=location,
        notes=[_moved(note, shift) for note in event.notes],
    )
