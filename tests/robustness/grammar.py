"""Generators of inputs that reach deep: pipelines and option strings built from
the registry's own names and options, and `.mlir` text mutated from real inputs.

A purely random string stops at the first character of every parser; these
mostly look right, so the interesting code (building passes, option values,
nested pipelines, the IR parser's many productions) runs on them, and then they
go wrong in one place: a stray character, a missing brace, a huge number.
"""

from __future__ import annotations

import dataclasses
import functools
import string
from enum import Enum
from typing import Any, cast

from hypothesis import strategies as st

from passflow import registry
from passflow.options import (
    EnumType,
    IntType,
    ListOption,
    Option,
    OptionsStructType,
    ValueType,
    options_of,
)
from passflow.pipeline_text import PIPELINE, PipelineOption
from passflow.registry import PassInfo, PipelineInfo
from passflow.xdsl_passes import UNSAFE_XDSL_PASSES, xdsl_pass_names

from .support import SEED_CHUNKS

# --- names ------------------------------------------------------------------------

registry.load_plugins()

NATIVE_PASSES = sorted(info.argument for info in registry.registered_passes())
PIPELINES = sorted(info.argument for info in registry.registered_pipelines())
XDSL_PASSES = sorted(set(xdsl_pass_names()) - set(NATIVE_PASSES))

CRASHING_BY_DESIGN = frozenset({"test-pass-crash"})
"""Test passes whose point is to raise: passflow-opt reports that as a crash,
with the traceback as a note, which is what the test checks."""

RUNNABLE = sorted((set(NATIVE_PASSES) | set(PIPELINES)) - CRASHING_BY_DESIGN)
RUNNABLE_XDSL = sorted(set(XDSL_PASSES) - set(UNSAFE_XDSL_PASSES))
"""xDSL passes the CLI may run: not those that start programs or read files."""

ANCHORS = [
    "builtin.module",
    "func.func",
    "any",
    "**func.func",
    "**any",
    "**",
    "test.op",
    "gpu.module",
    "scf.for",
    "builtin.module ",
    " func.func",
]

JUNK_NAMES = st.text(
    alphabet=string.ascii_lowercase + string.digits + "-_.*:", min_size=0, max_size=10
)


def _declared(name: str) -> dict[str, object]:
    """The options a name takes, by argument: passflow's declarations, or an
    xDSL pass's dataclass fields (spelled with `-` and with `_`)."""
    info = registry.lookup(name)
    if isinstance(info, PipelineInfo):
        return dict(options_of(info.options)) if info.options is not None else {}
    if isinstance(info, PassInfo):
        declared: dict[str, object] = dict(options_of(info.pass_class))
        xdsl_class = getattr(info.pass_class, "xdsl_class", None)
        if xdsl_class is not None:
            for field in dataclasses.fields(xdsl_class):
                declared[field.name] = field.type
                declared[field.name.replace("_", "-")] = field.type
        return declared
    return {}


DECLARED = {name: _declared(name) for name in NATIVE_PASSES + PIPELINES + XDSL_PASSES}


def declare(name: str, options: type) -> None:
    """Make `option_text(name, ...)` generate text for the options `options`
    declares (a class that is no registered pass)."""
    DECLARED[name] = dict(options_of(options))


# --- values -----------------------------------------------------------------------

SPECIAL_NUMBERS = [
    "0",
    "-0",
    "1",
    "-1",
    "4294967295",
    "4294967296",
    "-2147483649",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "9" * 400,
    "1" + "0" * 5000,
    "0x" + "f" * 300,
    "0b" + "1" * 100,
    "1" * 20_000 + "x",  # a float parser that backtracks takes minutes
    "0x" + "1" * 20_000 + "g",
    "1." + "1" * 20_000 + "e",
    "0o777",
    "017",
    "089",
    "1e308",
    "1e309",
    "-1e-400",
    "0x1p99999",
    "0x1.8p1",
    "nan",
    "nan(123)",
    "-inf",
    "infinity",
    "1.5",
    ".5",
    "5.",
    "1e",
    "0x",
    "--1",
    "+1",
    " 1",
]
NUMBERS = (
    st.sampled_from(SPECIAL_NUMBERS)
    | st.integers(-(2**70), 2**70).map(str)
    | st.floats().map(str)
)
WORDS = st.sampled_from(
    [
        "true",
        "false",
        "TRUE",
        "False",
        "normal",
        "aggressive",
        "disabled",
        "zero",
        "one",
        "two",
        "static",
        "fast",
        "none",
        "",
        "a",
        "b c",
        "x=y",
        "a,b",
    ]
)
STRAY = st.sampled_from(
    [
        *"{}()[]'\",= \t\n\\\x00<>",
        *("\ufeff", "\u2028", "\u00e9", "\U0001f600"),
        *("{{", "}}", "((", "))"),
    ]
)
SHORT_TEXT = st.text(
    alphabet=string.ascii_letters + string.digits + "-_.", min_size=1, max_size=8
)
ANY_TEXT = st.text(max_size=16)
SCALARS = WORDS | NUMBERS | SHORT_TEXT | ANY_TEXT


def wrapped(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """`inner` as it is, quoted, or braced."""
    return st.tuples(st.sampled_from(["", "'", '"', "{}"]), inner).map(
        lambda pair: (
            pair[1]
            if not pair[0]
            else (
                "{" + pair[1] + "}" if pair[0] == "{}" else pair[0] + pair[1] + pair[0]
            )
        )
    )


def _value(
    declared: object, pipelines: st.SearchStrategy[str]
) -> st.SearchStrategy[str]:
    """Text shaped for a declared option (or xDSL field type); sometimes wrong."""
    if isinstance(declared, PipelineOption):
        return wrapped(pipelines)
    if isinstance(declared, (Option, ListOption)):
        kind = cast("ValueType[Any]", cast(Any, declared).value_type)
        element: st.SearchStrategy[str]
        if kind is PIPELINE:
            element = pipelines
        elif isinstance(kind, IntType):
            element = NUMBERS
        elif isinstance(kind, EnumType):
            members: list[Enum] = list(cast("type[Enum]", kind.enum))
            element = st.sampled_from([str(m.value) for m in members]) | WORDS
        elif isinstance(kind, OptionsStructType):
            element = st.sampled_from(
                ["{enum=one list={1,2}}", "{}", "{string={a b}}", "{list=x}"]
            )
        else:
            element = SCALARS
        if isinstance(declared, ListOption):
            items = st.lists(wrapped(element), max_size=5).map(",".join)
            return items | wrapped(items)
        return wrapped(element)
    # An xDSL field: its annotation tells little that matters; mix everything.
    items = st.lists(wrapped(NUMBERS | WORDS), max_size=4).map(",".join)
    return NUMBERS | WORDS | items | wrapped(items) | SHORT_TEXT


def option_text(
    name: str, pipelines: st.SearchStrategy[str], *, clean: bool = False
) -> st.SearchStrategy[str]:
    """A `{...}` body for `name`: its own keys with fitting values and, unless
    `clean`, unknown and bare keys, odd spacing and stray characters.

    Built once per name (drawing from a new strategy each time is slow)."""
    return _option_text(name, pipelines, clean)


@functools.cache
def _option_text(
    name: str, pipelines: st.SearchStrategy[str], clean: bool
) -> st.SearchStrategy[str]:
    declared = DECLARED.get(name, {})
    pairs = [
        st.tuples(st.just(key), _value(kind, pipelines)).map(
            lambda kv: f"{kv[0]}={kv[1]}"
        )
        for key, kind in sorted(declared.items())
    ]
    if clean:
        if not pairs:
            return st.just("")
        return st.lists(st.one_of(*pairs), max_size=4).map(" ".join)
    key = st.sampled_from(sorted(declared)) if declared else SHORT_TEXT
    pair = st.one_of(
        *pairs,
        st.tuples(key | SHORT_TEXT, SCALARS).map(lambda kv: f"{kv[0]}={kv[1]}"),
        key,
        STRAY,
    )
    separator = st.sampled_from([" ", " ", " ", "  ", "\t", " = ", "", "\n"])
    return st.lists(st.tuples(pair, separator), max_size=5).map(
        lambda parts: "".join(p + s for p, s in parts).strip(" ")
    )


# --- pipelines --------------------------------------------------------------------


def pipelines(
    names: list[str], *, clean: bool = False, top: str | None = None
) -> st.SearchStrategy[str]:
    """Anchored pipeline text over `names`: nesting, options with pipelines
    nested in them. Unless `clean`, also junk names and anchors, junk in options
    and now and then a break in the grammar (a missing or extra bracket, a
    stray character); clean text mostly builds, so the passes' option values
    are parsed. `top` fixes the outermost anchor."""
    nested: st.SearchStrategy[str] = st.deferred(lambda: anchored)
    known = st.sampled_from(names)
    anchors = st.sampled_from(ANCHORS[:5] if clean else ANCHORS)
    name = known if clean else st.one_of(known, known, known, JUNK_NAMES)
    anchor_name = anchors if clean else st.one_of(anchors, anchors, anchors, JUNK_NAMES)

    @st.composite
    def leaf(draw: st.DrawFn) -> str:
        chosen = draw(name)
        if draw(st.booleans()):
            return chosen
        body = draw(option_text(chosen, nested, clean=clean))
        return f"{chosen}{{{body}}}"

    def anchor(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        return st.tuples(
            anchor_name,
            st.lists(children, min_size=0 if not clean else 1, max_size=3).map(
                ",".join
            ),
        ).map(lambda pair: f"{pair[0]}({pair[1]})")

    elements = st.recursive(leaf(), anchor, max_leaves=6)
    body = st.lists(elements, max_size=4).map(",".join)
    outer = anchor_name if top is None else st.just(top)
    anchored = st.tuples(outer, body).map(lambda pair: f"{pair[0]}({pair[1]})")
    if clean:
        return anchored
    edited = st.tuples(anchored, st.lists(EDITS, min_size=1, max_size=2)).map(
        lambda pair: apply_edits(pair[0], pair[1])
    )
    return anchored | edited


# --- mutation ---------------------------------------------------------------------

MLIR_TOKENS = [
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    "<",
    ">",
    '"',
    "%",
    "%0",
    "%arg0",
    "%0:2",
    "^bb0",
    "^bb1:",
    "^bb0(%a: i32):",
    "@f",
    "@",
    "#",
    "#map",
    "!",
    "!ty",
    ":",
    "::",
    ",",
    "=",
    "->",
    "-> ()",
    "loc(",
    "loc(unknown)",
    'loc("f":1:2)',
    "loc(fused[])",
    "i32",
    "i0",
    "i99999999",
    "si8",
    "index",
    "f32",
    "bf16",
    "none",
    "unit",
    "tensor<?xf32>",
    "tensor<*xi8>",
    "memref<4xi8>",
    "memref<?x?xf32, strided<[?, 1]>>",
    "vector<0xi32>",
    "vector<[4]xf32>",
    "complex<f32>",
    "tuple<>",
    "dense<1>",
    "dense<[1, 2]> : tensor<3xi32>",
    'dense<"0xDEADBEEF">',
    "dense_resource<blob>",
    "sparse<",
    "array<i32: 1, 2>",
    "affine_map<(d0) -> (d0)>",
    "affine_set<(d0) : (d0 >= 0)>",
    "distinct[0]<>",
    "strided<[1]>",
    "0x",
    "0x1p99999",
    "1e999999",
    "-0",
    "0.",
    "9" * 60,
    "1" + "0" * 5000,
    "0x" + "F" * 80,
    '"\\"',
    '"\\xx"',
    "//",
    "// -----",
    "// expected-error@+1 {{x}}",
    "{-#",
    "#-}",
    "dialect_resources: {",
    "external_resources: {mlir_reproducer: {pipeline: 'builtin.module(cse)'}}",
    "func.func",
    "func.func @g() {\n  func.return\n}",
    "builtin.module",
    "module {",
    '"test.op"() : () -> ()',
    '"test.op"() ({',
    "test.op",
    "arith.constant 1 : i32",
    "arith.addi",
    "cf.br ^bb1",
    "cf.cond_br",
    "scf.if",
    "scf.yield",
    "func.return",
    "func.call @f() : () -> ()",
    "private",
    "attributes",
    "sym_name",
    "<{",
    "}>",
    "...",
    "\x00",
    "\ufeff",
    "\u2028",
    "\r",
    "\r\n",
    "\t",
    " ",
    "\n",
    "\\",
    "\u00e9",
    "\U0001f600",
]
TOKENS = st.sampled_from(MLIR_TOKENS) | st.text(min_size=1, max_size=3)


@dataclasses.dataclass(frozen=True)
class Edit:
    """One change at a position given as a fraction of the text's length."""

    kind: str  # insert, delete, duplicate, replace, swap
    where: float
    span: int
    token: str

    def apply(self, text: str) -> str:
        at = int(self.where * len(text))
        end = min(len(text), at + self.span)
        if self.kind == "insert":
            return text[:at] + self.token + text[at:]
        if self.kind == "delete":
            return text[:at] + text[end:]
        if self.kind == "duplicate":
            return text[:end] + text[at:end] + text[end:]
        if self.kind == "replace":
            return text[:at] + self.token + text[end:]
        # swap the span with the one after it
        after = min(len(text), end + self.span)
        return text[:at] + text[end:after] + text[at:end] + text[after:]


EDITS = st.builds(
    Edit,
    st.sampled_from(["insert", "insert", "delete", "duplicate", "replace", "swap"]),
    st.floats(0, 1, exclude_max=True),
    st.integers(1, 12) | st.integers(1, 400),
    TOKENS,
)


def apply_edits(text: str, edits: list[Edit]) -> str:
    for edit in edits:
        text = edit.apply(text)
    return text


MUTATED_IR = st.tuples(
    st.sampled_from(SEED_CHUNKS), st.lists(EDITS, min_size=1, max_size=4)
).map(lambda pair: apply_edits(pair[0], pair[1]))
"""A chunk of a real `.mlir` file, with one to four edits."""

IR_TEXT = MUTATED_IR | MUTATED_IR | st.text(max_size=60) | st.sampled_from(SEED_CHUNKS)

BAD_BYTES = st.sampled_from(
    [
        b"\xff",
        b"\xfe\xff",
        b"\xc3",
        b"\xc3\x28",
        b"\xed\xa0\x80",  # an encoded lone surrogate: invalid UTF-8
        b"\xf4\x90\x80\x80",  # beyond U+10FFFF
        b"\xef\xbb\xbf",  # a BOM
        b"\x00",
        b"\x80",
        b"\r",
    ]
)


@st.composite
def _spliced_bytes(draw: st.DrawFn) -> bytes:
    data = draw(IR_TEXT).encode("utf-8")
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(data)))
        data = data[:at] + draw(BAD_BYTES) + data[at:]
    return data


IR_BYTES = st.one_of(
    st.sampled_from(SEED_CHUNKS).map(str.encode),
    MUTATED_IR.map(str.encode),
    _spliced_bytes(),
)
"""A file's bytes: a real chunk, a mutated one, or one with invalid UTF-8
(and NUL, BOM, CR) spliced in."""
