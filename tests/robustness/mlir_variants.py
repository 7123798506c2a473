"""Valid MLIR text in the spellings the grammar allows, and near misses.

A module is drawn as a list of top-level items (functions in the custom and
the generic form, declarations, unregistered ops, nested and explicit
modules, attribute and type aliases, location aliases, a resource section),
each item a list of tokens. The tokens are joined by separators drawn from
everything the lexer skips: spaces, tabs, `\\f`, `\\v`, CR LF, new lines with
any indentation, comments holding braces, quotes and `//`. So an op is split
over lines anywhere whitespace may stand, two items may share a line, and
aliases come before, between and after the ops (after: a use before the
definition, which the parser rejects, except as a location).

`near_misses` edits a valid text in one place: a character dropped, a stray
one (a brace, a quote, `%`, a byte-order mark, a no-break space) put in, a
line break removed.

`edits` draws a module and one change between two cached runs of it
(`Edit`): to a function's body, an alias, the lines above an op, the order of
two ops (edits of the text), or to the pipeline's options, the flags, a
plugin's source or an installed xDSL file (which the test applies).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import strategies as st

from passflow.sliced import scan_slices

SEPARATORS = [
    " ",
    "  ",
    "\t",
    "\n",
    "\n  ",
    "\n\t\t",
    "\r\n",
    "\r\n    ",
    "\f",
    "\v",
    " \f\n",
    "\n\n",
    ' // a comment with } { ( " @f0\n',
    "\n// a } comment\n  ",
    "  //\n",
]
"""What may stand between two tokens (the lexer's whitespace and comments)."""

TIGHT = [" ", "\n", "\t"]

STRINGS = [
    '"}"',
    '"{"',
    '"// not a comment"',
    '"a \\" quote and a } brace"',
    '"@f0 ( ["',
    '"#alias = 1"',
    '"func.func @x() {"',
]


@dataclass(frozen=True)
class Item:
    """One top-level item: its tokens, whether it is an alias definition,
    and the alias it defines."""

    tokens: tuple[str, ...]
    alias: str | None = None


def _join(draw: st.DrawFn, tokens: tuple[str, ...], tight: bool) -> str:
    """The tokens with a separator between each two."""
    out = [tokens[0]]
    choices = TIGHT if tight else SEPARATORS
    for token in tokens[1:]:
        out.append(draw(st.sampled_from(choices)))
        out.append(token)
    return "".join(out)


def _location(draw: st.DrawFn, loc_aliases: list[str]) -> tuple[str, ...]:
    kind = draw(st.sampled_from(["none", "none", "file", "alias", "unknown"]))
    if kind == "file":
        return ("loc", "(", '"in.mlir"', ":", "3", ":", "7", ")")
    if kind == "alias" and loc_aliases:
        return ("loc", "(", draw(st.sampled_from(loc_aliases)), ")")
    if kind == "unknown":
        return ("loc", "(", "unknown", ")")
    return ()


def _body(draw: st.DrawFn, name: str, callees: list[str], result: bool) -> list[str]:
    """A function body's tokens: constants, calls to other functions, the
    return."""
    tokens: list[str] = []
    values: list[str] = []
    for index in range(draw(st.integers(0, 3))):
        value = f"%c{index}"
        tokens += [value, "=", "arith.constant", str(index), ":", "i32"]
        values.append(value)
    if values and draw(st.booleans()):
        tokens += ["%s", "=", "arith.addi", values[0], ",", values[-1], ":", "i32"]
        values.append("%s")
    for index, callee in enumerate(callees):
        tokens += [f"%r{index}", "=", "func.call", f"@{callee}", "(", ")"]
        tokens += [":", "(", ")", "->", "i32"]
        values.append(f"%r{index}")
    if result:
        returned = values[-1] if values else None
        if returned is None:
            tokens += ["%z", "=", "arith.constant", "0", ":", "i32"]
            returned = "%z"
        tokens += ["func.return", returned, ":", "i32"]
    else:
        tokens += ["func.return"]
    del name
    return tokens


def _custom_function(
    draw: st.DrawFn,
    name: str,
    callees: list[str],
    aliases: list[str],
    loc_aliases: list[str],
) -> tuple[str, ...]:
    tokens = ["func.func"]
    if draw(st.booleans()):
        tokens.append("private")
    tokens += [f"@{name}", "(", ")", "->", "i32"]
    attributes: list[str] = []
    if draw(st.booleans()):
        attributes += ["note", "=", draw(st.sampled_from(STRINGS))]
    if aliases and draw(st.booleans()):
        attributes += [",", "a", "="] if attributes else ["a", "="]
        attributes.append(draw(st.sampled_from(aliases)))
    if draw(st.booleans()):
        attributes += [",", "ref", "=", "@f0"] if attributes else ["ref", "=", "@f0"]
    if attributes:
        tokens += ["attributes", "{", *attributes, "}"]
    tokens += ["{", *_body(draw, name, callees, True), "}"]
    tokens += _location(draw, loc_aliases)
    return tuple(tokens)


def _generic_function(draw: st.DrawFn, name: str) -> tuple[str, ...]:
    properties = [
        "<",
        "{",
        "sym_name",
        "=",
        f'"{name}"',
        ",",
        "function_type",
        "=",
        "(",
        ")",
        "->",
        "(",
        ")",
        "}",
        ">",
    ]
    return (
        '"func.func"',
        "(",
        ")",
        *properties,
        "(",
        "{",
        '"func.return"',
        "(",
        ")",
        ":",
        "(",
        ")",
        "->",
        "(",
        ")",
        "}",
        ")",
        ":",
        "(",
        ")",
        "->",
        "(",
        ")",
    )


def _declaration(name: str) -> tuple[str, ...]:
    return ("func.func", "private", f"@{name}", "(", "i32", ")", "->", "i32")


def _unregistered(draw: st.DrawFn, symbols: list[str]) -> tuple[str, ...]:
    tokens = ['"test.op"', "(", ")"]
    if symbols:
        tokens += ["{", "callee", "=", f"@{draw(st.sampled_from(symbols))}"]
        tokens += [",", "s", "=", draw(st.sampled_from(STRINGS)), "}"]
    return (*tokens, ":", "(", ")", "->", "(", ")")


def _nested_module(name: str) -> tuple[str, ...]:
    return (
        "module",
        f"@{name}",
        "{",
        "func.func",
        f"@{name}_inner",
        "(",
        ")",
        "{",
        "func.return",
        "}",
        "}",
    )


ATTRIBUTE_ALIASES = [
    ("#one", ("1", ":", "i32")),
    ("#text", ('"} { //"',)),
    ("#map", ("affine_map", "<", "(", "d0", ")", "->", "(", "d0", ")", ">")),
    ("#dict", ("{", "k", "=", '"v"', "}")),
]
TYPE_ALIASES = [("!t", ("i32",)), ("!v", ("vector", "<", "4xi32", ">"))]
LOCATION_ALIASES = [
    ("#loc1", ("loc", "(", '"a.mlir"', ":", "1", ":", "2", ")")),
    ("#loc2", ("loc", "(", "unknown", ")")),
]

RESOURCES = (
    "{-#\n  dialect_resources: {\n    builtin: {\n"
    '      blob1: "0x08000000010000000200000003000000"\n    }\n  }\n#-}\n'
)


@st.composite
def modules(draw: st.DrawFn) -> str:
    """A valid module (or, when an alias is used before its definition, a
    module mlir-opt rejects for that alone) in one of many spellings."""
    count = draw(st.integers(1, 7))
    names = [f"f{index}" for index in range(count)]
    aliases = draw(st.lists(st.sampled_from(ATTRIBUTE_ALIASES), unique=True))
    types = draw(st.lists(st.sampled_from(TYPE_ALIASES), unique=True))
    locations = draw(st.lists(st.sampled_from(LOCATION_ALIASES), unique=True))
    alias_names = [name for name, _ in aliases]
    loc_names = [name for name, _ in locations]
    forms = [
        draw(st.sampled_from(["custom", "custom", "custom", "generic", "declaration"]))
        for _ in names
    ]
    callable_names = [
        n for n, form in zip(names, forms, strict=True) if form == "custom"
    ]
    ops: list[Item] = []
    for name, form in zip(names, forms, strict=True):
        if form == "generic":
            ops.append(Item(_generic_function(draw, name)))
        elif form == "declaration":
            ops.append(Item(_declaration(name)))
        else:
            others = [n for n in callable_names if n != name]
            callees = (
                draw(st.lists(st.sampled_from(others), max_size=2)) if others else []
            )
            ops.append(
                Item(_custom_function(draw, name, callees, alias_names, loc_names))
            )
    if draw(st.booleans()):
        ops.insert(draw(st.integers(0, len(ops))), Item(_unregistered(draw, names)))
    if draw(st.sampled_from([False] * 4 + [True])):
        ops.insert(draw(st.integers(0, len(ops))), Item(_nested_module("inner")))
    definitions = [
        Item((name, "=", *value), alias=name) for name, value in aliases + types
    ]
    items = list(ops)
    for definition in definitions:
        where = draw(st.sampled_from(["first"] * 6 + ["between", "between", "last"]))
        position = {
            "first": 0,
            "between": draw(st.integers(0, len(items))),
            "last": len(items),
        }[where]
        items.insert(position, definition)
    for name, value in locations:
        where = draw(st.sampled_from(["first", "last", "last"]))
        items.insert(
            0 if where == "first" else len(items), Item((name, "=", *value), name)
        )
    tight = draw(st.sampled_from([False] * 3 + [True]))
    texts = [_join(draw, item.tokens, tight) for item in items]
    out: list[str] = []
    for index, text in enumerate(texts):
        if index:
            same_line = draw(st.sampled_from([False] * 7 + [True]))
            out.append(
                " "
                if same_line
                else draw(st.sampled_from(["\n", "\n\n", "\r\n", "\n// c\n"]))
            )
        out.append(text)
    body = "".join(out) + "\n"
    wrap = draw(st.sampled_from(["none", "none", "none", "module", "module-attrs"]))
    if wrap != "none" and not any(item.alias for item in items):
        header = "module" if wrap == "module" else 'module attributes {a = "{"}'
        body = header + " {\n" + body + "}\n"
    if draw(st.sampled_from([False] * 9 + [True])):
        body += RESOURCES
    lead = draw(st.sampled_from(["", "", "\n", "// lead {\n", "\f", "\v", "\t\n"]))
    return lead + body


NEAR_MISS_CHARACTERS = [
    "{",
    "}",
    '"',
    "%",
    "@",
    "#",
    "(",
    "\ufeff",
    "\u00a0",
    "\n",
    "//",
    "{-#",
    "x.y ",
]


@st.composite
def near_misses(draw: st.DrawFn) -> str:
    """A generated module with one edit: a character dropped, a stray one put
    in, or a line break taken out."""
    text = draw(modules())
    where = draw(st.integers(0, len(text)))
    edit = draw(st.sampled_from(["drop", "insert", "insert", "join"]))
    if edit == "drop" and where < len(text):
        return text[:where] + text[where + 1 :]
    if edit == "join":
        newline = text.find("\n", where)
        if newline >= 0:
            return text[:newline] + " " + text[newline + 1 :]
    return text[:where] + draw(st.sampled_from(NEAR_MISS_CHARACTERS)) + text[where:]


EDIT_KINDS = (
    "body",
    "alias",
    "line",
    "swap",
    "line-diagnostics",
    "line-debuginfo",
    "option",
    "flag",
    "plugin",
    "xdsl",
)
"""What changes between two cached runs: the first six edit the text (the
two `line-` kinds add a line under a pipeline that reports diagnostics, or
with `--mlir-print-debuginfo`, in both runs)."""

_ALIAS_EDITS = [
    (r"(#one\s*=\s*)1\b", r"\g<1>2"),
    (r'"v"', '"w"'),
    (r"(!t\s*=\s*)i32", r"\g<1>i64"),
    (r"(!v\s*=\s*vector\s*<\s*)4xi32", r"\g<1>8xi32"),
]


@dataclass(frozen=True)
class Edit:
    """A module (`text`), what it is after the edit (`edited`, the same text
    for an edit that is not to the text), the kind of edit, and a number the
    test picks its option, flag or file with."""

    kind: str
    text: str
    edited: str
    choice: int


def _body_edit(draw: st.DrawFn, text: str) -> str | None:
    found = list(re.finditer(r"arith\.constant(\s+)(\d+)", text))
    if not found:
        return None
    match = draw(st.sampled_from(found))
    value = str(int(match.group(2)) + draw(st.integers(1, 9)))
    return text[: match.start(2)] + value + text[match.end(2) :]


def _alias_edit(draw: st.DrawFn, text: str) -> str | None:
    usable = [(find, put) for find, put in _ALIAS_EDITS if re.search(find, text)]
    if not usable:
        return None
    find, put = draw(st.sampled_from(usable))
    return re.sub(find, put, text, count=1)


def _line_edit(draw: st.DrawFn, text: str) -> str:
    starts = [0, *(index + 1 for index, char in enumerate(text) if char == "\n")]
    where = draw(st.sampled_from(starts))
    return text[:where] + "\n" + text[where:]


def _swap_edit(draw: st.DrawFn, text: str) -> str | None:
    slices = scan_slices(text)
    if slices is None or len(slices.pieces) < 2:
        return None
    first = draw(st.integers(0, len(slices.pieces) - 2))
    second = draw(st.integers(first + 1, len(slices.pieces) - 1))
    a, b = slices.pieces[first], slices.pieces[second]
    return (
        text[: a.start]
        + text[b.start : b.end]
        + text[a.end : b.start]
        + text[a.start : a.end]
        + text[b.end :]
    )


@st.composite
def edits(draw: st.DrawFn) -> Edit:
    """A generated module and one edit of `EDIT_KINDS`; a text edit that
    finds nothing to change in this module inserts a line instead."""
    text = draw(modules())
    kind = draw(st.sampled_from(EDIT_KINDS))
    edited: str | None = text
    if kind == "body":
        edited = _body_edit(draw, text)
    elif kind == "alias":
        edited = _alias_edit(draw, text)
    elif kind == "swap":
        edited = _swap_edit(draw, text)
    if kind.startswith("line-"):
        edited = _line_edit(draw, text)
    if kind == "line" or edited is None:
        kind, edited = "line", _line_edit(draw, text)
    return Edit(kind, text, edited, draw(st.integers(0, 1 << 16)))
