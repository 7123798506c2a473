"""Aliases as mlir-opt reads them: an attribute or type alias must be defined
before its use (`undefined symbol alias id 'x'`), while an op's or block
argument's `loc(#name)` may name a location alias the file defines later,
resolved once the whole file is parsed (MLIR's `OperationParser::finalize`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr, UnknownLoc

from passflow import ir
from passflow.diagnostics import UNKNOWN_LOCATION, IRParseError, Location
from passflow.tools import opt


def parse_error(text: str) -> str:
    """The rendered error `text` gives (as `bad.mlir`); fails if it parses."""
    with pytest.raises(IRParseError) as info:
        ir.parse_module(text, ir.default_context(), "bad.mlir")
    assert str(info.value).splitlines()[0] == str(info.value.diagnostic)
    return str(info.value)


def caret(line: int, column: int, message: str, source: str) -> str:
    return (
        f"bad.mlir:{line}:{column}: error: {message}\n{source}\n{' ' * (column - 1)}^"
    )


def file_loc(name: str, line: int, column: int) -> FileLineColLoc:
    return FileLineColLoc(StringAttr(name), IntAttr(line), IntAttr(column))


# --- attribute and type aliases: defined before use ---------------------------


def test_an_attribute_alias_used_before_its_definition_is_mlirs_error() -> None:
    # MLIR reports it after the alias token (`emitWrongTokenError`).
    text = '"test.op"() {v = #x} : () -> ()\n#x = 5 : i32\n'
    assert parse_error(text) == caret(
        1, 20, "undefined symbol alias id 'x'", '"test.op"() {v = #x} : () -> ()'
    )


def test_a_type_alias_ending_a_line_is_reported_after_it() -> None:
    # The token after `!t` starts the next line: MLIR backs up to the end of
    # the alias, as for every wrong-token error.
    text = '"test.op"() : () -> !t\n"test.op"() : () -> ()\n!t = i32\n'
    assert parse_error(text) == caret(
        1, 23, "undefined symbol alias id 't'", '"test.op"() : () -> !t'
    )


def test_an_alias_inside_an_attributes_location_is_not_deferred() -> None:
    # `{a = loc(#t)}` is an attribute, not an op's location: MLIR parses the
    # alias at once there, as inside a fused or call-site location.
    text = '"test.op"() {a = loc(#t)} : () -> ()\n#t = loc(unknown)\n'
    assert parse_error(text) == caret(
        1, 24, "undefined symbol alias id 't'", '"test.op"() {a = loc(#t)} : () -> ()'
    )
    fused = '"test.op"() : () -> () loc(fused[#t])\n#t = loc(unknown)\n'
    assert parse_error(fused) == caret(
        1, 36, "undefined symbol alias id 't'", '"test.op"() : () -> () loc(fused[#t])'
    )


# --- location aliases: resolved at the end -------------------------------------

DEFERRED = """\
func.func @f(%a: i32 loc(#l2)) {
  "test.op"() ({
  ^bb0(%b: i32 loc(#l2)):
    "test.inner"() : () -> () loc(#l1)
  }) : () -> () loc(#l3)
  func.return
}
"test.last"() : () -> () loc(#l1)
#l1 = loc("a.mlir":1:2)
#l2 = loc("b.mlir":3:4)
#l3 = loc(unknown)
"""


def test_a_location_alias_defined_after_its_uses_locates_them() -> None:
    module = ir.parse_module(DEFERRED, ir.default_context(), "in.mlir")
    func_op, last = ir.direct_children(module)
    outer = ir.direct_children(func_op)[0]
    inner = ir.direct_children(outer)[0]
    assert inner.location == file_loc("a.mlir", 1, 2)
    assert last.location == file_loc("a.mlir", 1, 2)
    assert isinstance(outer.location, UnknownLoc)
    # Block arguments: a function's (custom form) and a generic block's.
    func_arg = func_op.regions[0].blocks.first
    block_arg = outer.regions[0].blocks.first
    assert func_arg is not None and block_arg is not None
    assert func_arg.args[0].location == file_loc("b.mlir", 3, 4)
    assert block_arg.args[0].location == file_loc("b.mlir", 3, 4)
    # Where diagnostics point: the alias's location, as if it came first.
    assert ir.location(inner) == Location("a.mlir", 1, 2)
    assert ir.location(last) == Location("a.mlir", 1, 2)
    assert ir.location(outer) == UNKNOWN_LOCATION  # as `loc(unknown)` written there


def test_opt_reports_a_diagnostic_at_a_deferred_location(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.mlir"
    source.write_text(
        '"func.return"() : () -> () loc(#here)\n#here = loc("a.mlir":1:2)\n'
    )
    status = opt.main([str(source), "-o", str(tmp_path / "out.mlir")])
    assert status == 1
    assert capsys.readouterr().err == (
        "a.mlir:1:2: error: 'func.return' op expects parent op 'func.func'\n"
        'a.mlir:1:2: note: see current operation: "func.return"() : () -> ()\n'
    )


def test_a_location_alias_never_defined_is_reported_at_its_use() -> None:
    text = '"test.op"() : () -> () loc(#a)\n"test.op"() : () -> () loc(#b)\n#a = loc(unknown)\n'
    assert parse_error(text) == caret(
        2,
        28,
        "operation location alias was never defined",
        '"test.op"() : () -> () loc(#b)',
    )


def test_undefined_location_aliases_are_reported_in_mlirs_walk_order() -> None:
    # MLIR walks the ops in post-order, each op before its regions' block
    # arguments: the nested op's alias is reported, not the earlier argument's.
    text = (
        '"test.op"() ({\n'
        "^bb0(%a: i32 loc(#arg)):\n"
        '  "test.op"() : () -> () loc(#op)\n'
        "}) : () -> ()\n"
    )
    assert parse_error(text) == caret(
        3,
        30,
        "operation location alias was never defined",
        '  "test.op"() : () -> () loc(#op)',
    )


def test_an_undeclared_value_is_reported_before_an_undefined_location_alias() -> None:
    text = '"test.op"() : () -> () loc(#a)\n%x = "test.op"(%y) : (i32) -> i32\n'
    assert parse_error(text) == caret(
        2, 16, "use of undeclared SSA value name", '%x = "test.op"(%y) : (i32) -> i32'
    )


@pytest.mark.parametrize("after", [False, True])
def test_a_location_alias_that_is_no_location_is_mlirs_error(after: bool) -> None:
    use = '"test.op"() : () -> () loc(#t)'
    text = f"{use}\n#t = true\n" if after else f"#t = true\n{use}\n"
    line = 1 if after else 2
    assert parse_error(text) == caret(
        line, 28, "expected location, but found 'true'", use
    )


def test_pieces_parsed_with_known_aliases_resolve_theirs_too() -> None:
    # A sliced run parses the alias definitions first, then each piece with a
    # copy of them; a piece may still define and use its own, later.
    aliases: dict[str, ir.Attribute] = {}
    ir.parse_module('#l1 = loc("a.mlir":1:2)\n', aliases=aliases)
    piece = '"test.op"() : () -> () loc(#l1)\n"test.op"() : () -> () loc(#l2)\n'
    module = ir.parse_module(piece + '#l2 = loc("b.mlir":3:4)\n', aliases=dict(aliases))
    first, second = ir.direct_children(module)
    assert first.location == file_loc("a.mlir", 1, 2)
    assert second.location == file_loc("b.mlir", 3, 4)
    with pytest.raises(IRParseError, match="operation location alias was never"):
        ir.parse_module(piece, aliases=dict(aliases))
