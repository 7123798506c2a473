"""Where a stored result stands (`passflow.cache.placement`): positions
inside the piece move with it; anything else pins the result to where it ran."""

from __future__ import annotations

from passflow.cache.placement import place, stored
from passflow.cache.store import CachedPiece
from passflow.diagnostics import Diagnostic, Location, Severity

TEXT = "func.func @f() {\n  func.return\n}"
"""A piece of three lines; stored at line 10, it covers lines 10 to 12."""


def _piece(*events: Diagnostic, body: str | None = None) -> CachedPiece:
    return CachedPiece(events, bool(events), body, ("f",), ("f",), None)


def _error(line: int, file: str | None = "in.mlir", note_line: int = 11) -> Diagnostic:
    event = Diagnostic(Severity.ERROR, "bad", Location(file, line, 3))
    event.attach_note("see here", Location(file, note_line, 5))
    return event


def test_positions_inside_the_piece_move_with_it() -> None:
    kept = stored(_piece(_error(10)), "in.mlir", TEXT, 10, "anchor")
    assert kept.anchor is None and kept.line == 10
    moved = place(kept, 14, "elsewhere")
    assert moved is not None and moved.line == 14
    (event,) = moved.events
    assert event.location == Location("in.mlir", 14, 3)
    assert event.notes[0].location == Location("in.mlir", 15, 5)
    assert place(kept, 10, "elsewhere") is kept


def test_unknown_locations_stay_unknown() -> None:
    kept = stored(_piece(_error(0, file=None)), "in.mlir", TEXT, 10, "anchor")
    moved = place(kept, 20, "elsewhere")
    assert moved is not None and moved.events[0].location.file is None


def test_what_cannot_move_is_pinned_to_its_anchor() -> None:
    pinned = [
        # a note on a line outside the piece (a callee's, say)
        stored(_piece(_error(10, note_line=3)), "in.mlir", TEXT, 10, "here"),
        # a location in another file
        stored(_piece(_error(10, file="other.mlir")), "in.mlir", TEXT, 10, "here"),
        # a location written in the text
        stored(
            _piece(_error(10)), "in.mlir", TEXT + ' loc("in.mlir":10:1)', 10, "here"
        ),
        # the file named in the printed ops or a message
        stored(_piece(body='"in.mlir":10:1'), "in.mlir", TEXT, 10, "here"),
        stored(
            _piece(
                Diagnostic(
                    Severity.REMARK, "at in.mlir:10:1", Location("in.mlir", 10, 1)
                )
            ),
            "in.mlir",
            TEXT,
            10,
            "here",
        ),
    ]
    for piece in pinned:
        assert piece.anchor == "here"
        assert place(piece, 10, "here") is piece
        assert place(piece, 11, "there") is None


def test_a_placed_piece_survives_the_store_format() -> None:
    kept = stored(_piece(_error(10)), "in.mlir", TEXT, 10, "anchor")
    assert CachedPiece.from_json(kept.to_json()) == kept
    pinned = stored(_piece(_error(10, note_line=1)), "in.mlir", TEXT, 10, "anchor")
    assert CachedPiece.from_json(pinned.to_json()) == pinned
