"""The textual pipeline structure: MLIR's `parsePipelineText`, errors and carets.

Every expected message, column and caret below was produced by mlir-opt 22.1.8 with
`--pass-pipeline='builtin.module(<text>)' --dump-pass-pipeline` (the caret rendering
is relative to the text inside the anchor, as here).
"""

from __future__ import annotations

from typing import TypeAlias

import pytest
from hypothesis import given
from hypothesis import strategies as st

from passflow.diagnostics import PipelineParseError
from passflow.pipeline_text import (
    PipelineElement,
    format_elements,
    parse_pipeline_elements,
    split_anchored,
)

Shape: TypeAlias = tuple[str, str | None, "tuple[Shape, ...] | None"]


def shape(element: PipelineElement) -> Shape:
    """An element without positions, for comparing trees."""
    inner = None if element.inner is None else tuple(shape(e) for e in element.inner)
    return (element.name, element.options, inner)


def shapes(text: str) -> list[Shape]:
    return [shape(e) for e in parse_pipeline_elements(text)]


def walk(
    elements: tuple[PipelineElement, ...] | list[PipelineElement],
) -> list[PipelineElement]:
    result: list[PipelineElement] = []
    for element in elements:
        result.append(element)
        if element.inner is not None:
            result.extend(walk(element.inner))
    return result


def test_empty_text_has_no_elements() -> None:
    assert parse_pipeline_elements("") == []


def test_nested_elements_with_positions() -> None:
    assert parse_pipeline_elements(
        "func.func(cse,canonicalize{top-down}),symbol-dce"
    ) == [
        PipelineElement(
            "func.func",
            0,
            inner=(
                PipelineElement("cse", 10),
                PipelineElement("canonicalize", 14, options="top-down"),
            ),
        ),
        PipelineElement("symbol-dce", 38),
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # An empty element between commas (reported as '' at column 5).
        (
            "cse,,canonicalize",
            [("cse", None, None), ("", None, None), ("canonicalize", None, None)],
        ),
        (",", [("", None, None), ("", None, None)]),
        # Spaces do not separate elements.
        ("cse canonicalize", [("cse canonicalize", None, None)]),
        # `anchor()` holds one element with an empty name.
        ("func.func()", [("func.func", None, (("", None, None),))]),
        # Blank text is one empty element, unlike empty text.
        (" ", [("", None, None)]),
        # Whitespace around names, parentheses and commas is ignored.
        (
            "  func.func  ( cse  )  ,cse",
            [("func.func", None, (("cse", None, None),)), ("cse", None, None)],
        ),
        ("func.func(cse) ", [("func.func", None, (("cse", None, None),))]),
        ("cse{}   , cse", [("cse", "", None), ("cse", None, None)]),
        # Option text is raw: untrimmed, nested braces counted, anything else kept.
        ("cse{{}}, cse", [("cse", "{}", None), ("cse", None, None)]),
        ("a{ x=(1, 2) y='{}' }", [("a", " x=(1, 2) y='{}' ", None)]),
        (
            "a(b(c)),d",
            [("a", None, (("b", None, (("c", None, None),)),)), ("d", None, None)],
        ),
        (
            "a(b),c(d)",
            [("a", None, (("b", None, None),)), ("c", None, (("d", None, None),))],
        ),
        (
            "func.func(cse)\n,x",
            [("func.func", None, (("cse", None, None),)), ("x", None, None)],
        ),
    ],
)
def test_structure(text: str, expected: list[Shape]) -> None:
    assert shapes(text) == expected


@pytest.mark.parametrize(
    ("text", "positions"),
    [
        ("cse,,canonicalize", [0, 4, 5]),  # mlir-opt: '' at 1:5
        ("func.func()", [0, 10]),  # '' at 1:11
        (" ", [1]),  # '' at 1:2
        ("cse, ,x", [0, 5, 6]),  # '' at 1:6
        ("func.func(cse),", [0, 10, 15]),  # '' at 1:16
        ("  func.func  ( cse  )  ,cse", [2, 15, 24]),
    ],
)
def test_name_positions_are_where_unknown_names_are_reported(
    text: str, positions: list[int]
) -> None:
    assert [e.name_pos for e in walk(parse_pipeline_elements(text))] == positions


MISSING_BRACE = "missing closing '}' while processing pass options"
EXTRA_PAREN = "encountered extra closing ')' creating unbalanced parentheses while parsing pipeline"
EXPECTED_COMMA = "expected ',' after parsing pipeline"
UNBALANCED = "encountered unbalanced parentheses while parsing pipeline"


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("cse)", EXTRA_PAREN, 3),
        ("func.func(cse) ) ,cse", EXTRA_PAREN, 15),
        ("func.func(cse)) ", EXTRA_PAREN, 14),
        ("func.func{x}(cse)", EXPECTED_COMMA, 12),
        ("func.func(cse)x", EXPECTED_COMMA, 14),
        ("cse{}{}", EXPECTED_COMMA, 5),
        ("cse{} x", EXPECTED_COMMA, 6),
        ("cse{}}", EXPECTED_COMMA, 5),
        # Braces are counted without regard to quotes.
        ('inline{default-pipeline="}"}', EXPECTED_COMMA, 26),
        ("cse{a", MISSING_BRACE, 3),
        ("func.func(cse{", MISSING_BRACE, 13),
        ("symbol-privatize{exclude={a b}", MISSING_BRACE, 16),
        # Located at the start of the last name, or at the end when none follows.
        ("func.func(cse", UNBALANCED, 10),
        ("func.func(cse,  canonicalize", UNBALANCED, 14),
        ("func.func(", UNBALANCED, 10),
        ("a(b(c)", UNBALANCED, 6),
    ],
)
def test_errors_carry_mlir_message_and_column(
    text: str, message: str, column: int
) -> None:
    with pytest.raises(PipelineParseError) as info:
        parse_pipeline_elements(text)
    assert (info.value.message, info.value.text, info.value.column) == (
        message,
        text,
        column,
    )


@pytest.mark.parametrize(
    ("text", "rendered"),
    [
        (
            "cse)",
            "MLIR Textual PassPipeline Parser:1:4: error: encountered extra closing ')' "
            "creating unbalanced parentheses while parsing pipeline\ncse)\n   ^\n",
        ),
        (
            "func.func(cse",
            "MLIR Textual PassPipeline Parser:1:11: error: encountered unbalanced "
            "parentheses while parsing pipeline\nfunc.func(cse\n          ^\n",
        ),
        (
            "cse{a",
            "MLIR Textual PassPipeline Parser:1:4: error: missing closing '}' while "
            "processing pass options\ncse{a\n   ^\n",
        ),
        (
            "func.func{x}(cse)",
            "MLIR Textual PassPipeline Parser:1:13: error: expected ',' after parsing "
            "pipeline\nfunc.func{x}(cse)\n            ^\n",
        ),
        (
            "func.func(cse)\nx",
            "MLIR Textual PassPipeline Parser:2:1: error: expected ',' after parsing "
            "pipeline\nx\n^\n",
        ),
        (
            "\ncse)\n",
            "MLIR Textual PassPipeline Parser:2:4: error: encountered extra closing ')' "
            "creating unbalanced parentheses while parsing pipeline\ncse)\n   ^\n",
        ),
    ],
)
def test_errors_render_like_mlir_opt(text: str, rendered: str) -> None:
    with pytest.raises(PipelineParseError) as info:
        parse_pipeline_elements(text)
    assert info.value.render() == rendered
    assert str(info.value) == rendered


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("builtin.module(cse)", ("builtin.module", "cse", 15)),
        ("   builtin.module   (cse)   ", ("builtin.module", "cse", 21)),
        ("builtin.module()", ("builtin.module", "", 15)),
        ("builtin.module( )", ("builtin.module", " ", 15)),
        ("any(func.func(cse)) ", ("any", "func.func(cse)", 4)),
        # The anchor is not validated.
        ("**func.func(cse)", ("**func.func", "cse", 12)),
        # Only one `)` is stripped; the rest belongs to the inner text.
        ("builtin.module(cse))", ("builtin.module", "cse)", 15)),
        ("\tbuiltin.module(\ncse)\n)\n", ("builtin.module", "\ncse)\n", 16)),
    ],
)
def test_split_anchored(text: str, expected: tuple[str, str, int]) -> None:
    anchor, inner, offset = split_anchored(text)
    assert (anchor, inner, offset) == expected
    assert text[offset : offset + len(inner)] == inner


@pytest.mark.parametrize(
    "text",
    [
        "cse",
        ",",
        "",
        "   ",
        "(cse)",
        " (cse)",
        "builtin.module(cse)x",
        "builtin.module()(",
        "a(",
    ],
)
def test_split_anchored_requires_an_anchor(text: str) -> None:
    with pytest.raises(PipelineParseError) as info:
        split_anchored(text)
    message = (
        "expected pass pipeline to be wrapped with the anchor operation type, "
        "e.g. 'builtin.module(...)'"
    )
    assert (info.value.message, info.value.column, str(info.value)) == (
        message,
        None,
        message,
    )


def test_format_elements_is_compact() -> None:
    elements = parse_pipeline_elements(
        " func.func ( cse , canonicalize{ top-down } ) , x{} "
    )
    assert format_elements(elements) == "func.func(cse,canonicalize{ top-down }),x{}"
    assert format_elements([]) == ""


# --- properties -------------------------------------------------------------------

NAMES = st.text(
    alphabet="abcdefghijklmnopqrstuvwxyzABCXYZ0123456789._-*", min_size=1, max_size=12
)
# Option text: anything but braces at the top, with balanced braces nested in it.
OPTION_TEXT = st.recursive(
    st.text(alphabet="ab =,()[]'\"\t-.:0", max_size=8),
    lambda inner: st.lists(inner | inner.map(lambda s: "{" + s + "}"), max_size=3).map(
        "".join
    ),
    max_leaves=6,
)


def _leaf(name: str, options: str | None) -> PipelineElement:
    return PipelineElement(name, 0, options=options)


def _anchor(name: str, inner: list[PipelineElement]) -> PipelineElement:
    return PipelineElement(name, 0, inner=tuple(inner))


LEAVES = st.builds(_leaf, NAMES, st.none() | OPTION_TEXT)
TREES = st.lists(
    st.recursive(
        LEAVES,
        lambda children: st.builds(
            _anchor, NAMES, st.lists(children, min_size=1, max_size=3)
        ),
        max_leaves=10,
    ),
    min_size=1,
    max_size=4,
)


@given(TREES)
def test_format_then_parse_round_trips(elements: list[PipelineElement]) -> None:
    text = format_elements(elements)
    parsed = parse_pipeline_elements(text)
    assert [shape(e) for e in parsed] == [shape(e) for e in elements]
    assert format_elements(parsed) == text
    for element in walk(parsed):
        assert (
            text[element.name_pos : element.name_pos + len(element.name)]
            == element.name
        )


FUZZ_TEXT = st.text(alphabet=",(){} \t\na.x'\"", max_size=40) | st.text(max_size=40)


@given(FUZZ_TEXT)
def test_parse_returns_or_raises_a_located_pipeline_error(text: str) -> None:
    try:
        elements = parse_pipeline_elements(text)
    except PipelineParseError as err:
        assert err.column is not None
        assert 0 <= err.column <= len(text)
        assert err.render().startswith("MLIR Textual PassPipeline Parser:")
        return
    for element in walk(elements):
        assert 0 <= element.name_pos <= len(text)
        assert (
            text[element.name_pos : element.name_pos + len(element.name)]
            == element.name
        )


@given(FUZZ_TEXT)
def test_split_anchored_returns_or_raises_an_unlocated_error(text: str) -> None:
    try:
        _, inner, offset = split_anchored(text)
    except PipelineParseError as err:
        assert err.column is None
        return
    assert text[offset : offset + len(inner)] == inner
