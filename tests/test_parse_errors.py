"""Input that xDSL rejects is an mlir-opt error, never a traceback: one
`file:line:col: error: message` line, the source line, a caret, exit status 1."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects import arith

from passflow import ir
from passflow.diagnostics import IRParseError
from passflow.tools import opt
from passflow.xdsl_version import installed_xdsl_version


def parse_error(text: str, *, allow_unregistered: bool = False) -> str:
    """The rendered error `text` gives (as `bad.mlir`); fails if it parses."""
    ctx = ir.default_context(allow_unregistered=allow_unregistered)
    with pytest.raises(IRParseError) as info:
        ir.parse_module(text, ctx, "bad.mlir")
    rendered = str(info.value)
    diagnostic = info.value.diagnostic
    assert rendered.splitlines()[0] == str(diagnostic)  # the two agree
    return rendered


def caret(line: int, column: int, message: str, source: str) -> str:
    return (
        f"bad.mlir:{line}:{column}: error: {message}\n{source}\n{' ' * (column - 1)}^"
    )


EXTSI = """\
func.func @f(%a: vector<4xi1>) -> vector<4xi64> {
  %0 = arith.extsi %a : vector<4xi1> to vector<4xi64>
  func.return %0 : vector<4xi64>
}
"""


def test_a_verifier_run_by_a_custom_parser_is_an_error_at_the_op() -> None:
    # mlir/test/Dialect/Arith: valid MLIR that xDSL's arith.extsi rejects.
    assert parse_error(EXTSI) == caret(
        2,
        3,
        "'arith.extsi' op vector<4xi1> should be of base attribute integer_type",
        "  %0 = arith.extsi %a : vector<4xi1> to vector<4xi64>",
    )


def test_any_exception_while_parsing_an_op_is_an_error_at_the_op(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(cls: type[arith.ConstantOp], parser: object) -> arith.ConstantOp:
        raise KeyError("value")

    monkeypatch.setattr(arith.ConstantOp, "parse", classmethod(broken))
    text = "func.func @f() {\n  %c = arith.constant 1 : i32\n  func.return\n}\n"
    assert parse_error(text) == caret(
        2, 3, "'arith.constant' op KeyError: 'value'", "  %c = arith.constant 1 : i32"
    )


def test_an_attribute_its_verifier_rejects_is_an_error_at_the_attribute() -> None:
    text = '#a = !x86.reg64<foo>\n"test.op"() {r = #a} : () -> ()\n'
    # xDSL 0.75 reports this one itself, at the parameter it rejects.
    version = installed_xdsl_version() or ""
    assert parse_error(text) == caret(
        1,
        6 if version.startswith("0.74.") else 17,
        "Invalid register name foo for register type x86.reg64.",
        "#a = !x86.reg64<foo>",
    )


def test_multi_line_messages_are_one_line() -> None:
    text = (
        "func.func @f(%a: i32, %b: i64) -> i32 {\n"
        '  %r = "arith.addi"(%a, %b) : (i32, i64) -> i32\n'
        "  func.return %r : i32\n"
        "}\n"
    )
    module = ir.parse_module(text, ir.default_context(), "bad.mlir")
    problem = ir.verify(module)
    assert problem is not None
    assert str(problem) == (
        "bad.mlir:2:8: error: 'arith.addi' op operand 'rhs' at position 1 does not "
        "verify: attribute i32 expected from variable 'T', but got i64"
    )


def test_the_op_is_named_once_when_xdsl_names_it_too() -> None:
    text = (
        "func.func @f(%i: index) -> index {\n"
        '  %r = "arith.index_cast"(%i) : (index) -> index\n'
        "  func.return %r : index\n"
        "}\n"
    )
    problem = ir.verify(ir.parse_module(text, ir.default_context(), "bad.mlir"))
    assert problem is not None
    assert problem.message == (
        "'arith.index_cast' op operand type 'index' and result type 'index' are "
        "cast incompatible"
    )


def test_an_error_at_the_end_of_the_input_is_shown_after_the_last_token() -> None:
    # mlir-opt's wrong-token position: the end of the last line with a token.
    text = "func.func @f() {\n  %0 = arith.constant 1 : i32  // note\n\n"
    assert parse_error(text) == caret(
        2,
        30,
        "expected operation name in quotes",
        "  %0 = arith.constant 1 : i32  // note",
    )


def test_an_expected_token_at_a_line_start_is_shown_at_the_previous_token() -> None:
    # mlir/test/IR/invalid.mlir, @error_at_end_of_line: before the comment too.
    text = (
        'func.func @f() {\n  %0 = "foo"()  // a comment\n  // another\n\n'
        "  func.return\n}\n"
    )
    rendered = parse_error(text, allow_unregistered=True)
    assert rendered.splitlines()[0].startswith("bad.mlir:2:15: error: Expected ':'")
    assert rendered.splitlines()[2] == " " * 14 + "^"


def test_an_unterminated_string_fails_fast() -> None:
    # xDSL's string pattern backtracks exponentially on this line.
    # With 60 characters after the quote, exponential backtracking would not
    # end in a lifetime; linear lexing answers at once.
    text = (
        '\n"       // expected-error {{expected}} and some more text to backtrack on\n'
    )
    rendered = parse_error(text)
    assert rendered.splitlines()[0] == (
        "bad.mlir:2:1: error: expected '\"' in string literal"
    )


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        ("1" * 5000 + " : i32", "integer constant out of range for attribute"),
        ("5000000000 : i32", "integer constant out of range for attribute"),
        (
            "0x" + "F" * 40 + " : f32",
            "hexadecimal float constant out of range for type",
        ),
    ],
)
def test_literals_out_of_range_get_mlirs_message(literal: str, message: str) -> None:
    # Python refuses to convert 5,000 decimal digits; xDSL's hex float
    # conversion overflows: both are MLIR's located errors.
    line = f"%c = arith.constant {literal}"
    assert parse_error(line + "\n") == caret(1, 21, message, line)


def test_a_lexer_error_on_the_first_token_is_located() -> None:
    assert parse_error('"J') == caret(1, 1, "expected '\"' in string literal", '"J')


def test_an_undefined_block_is_reported_at_its_first_use() -> None:
    text = "func.func @f() {\n  cf.br ^missing\n}\n"
    assert parse_error(text) == caret(
        2, 9, "reference to an undefined block", "  cf.br ^missing"
    )
    top = '"test.op"() [^bb1]: () -> ()\n'
    assert parse_error(top) == caret(
        1, 14, "reference to an undefined block", '"test.op"() [^bb1]: () -> ()'
    )


@pytest.mark.parametrize(
    ("source", "column", "message", "allow"),
    [
        ("  arith.foo", 3, "custom op 'arith.foo' is unknown", False),
        (
            "  %1 = foo",
            8,
            "custom op 'foo' is unknown (tried 'func.foo' as well)",
            False,
        ),
        ("  foo.op", 3, "Dialect `foo' not found for custom op 'foo.op' ", True),
        (
            '  "arith.foo"() : () -> ()',
            3,
            "unregistered operation 'arith.foo' found in dialect ('arith') that does "
            "not allow unknown operations",
            False,
        ),
        (
            '  "foo.foo"() : () -> ()',
            12,
            "operation being parsed with an unregistered dialect. If this is "
            "intended, please use -allow-unregistered-dialect with the MLIR tool used",
            False,
        ),
        (
            "  %t = gpu.thread_id  x upper_bound 64",
            8,
            "Operation gpu.thread_id does not have a custom format.",
            False,
        ),
    ],
)
def test_unknown_ops_get_mlir_opts_messages_and_positions(
    source: str, column: int, message: str, allow: bool
) -> None:
    text = f"func.func @f() {{\n{source}\n  func.return\n}}\n"
    rendered = parse_error(text, allow_unregistered=allow)
    assert rendered == caret(2, column, message, source)


# --- passflow-opt --------------------------------------------------------------------


def run_opt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, *args: str
) -> tuple[int, str, str]:
    source = tmp_path / "in.mlir"
    source.write_bytes(data)
    status = opt.main([str(source), "-o", str(tmp_path / "out.mlir"), *args])
    out, err = capsys.readouterr()
    return status, out, err.replace(str(source), "in.mlir")


def test_opt_reports_a_parse_error_once_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run_opt(tmp_path, capsys, EXTSI.encode())
    assert status == 1
    assert err == (
        "in.mlir:2:3: error: 'arith.extsi' op vector<4xi1> should be of base "
        "attribute integer_type\n"
        "  %0 = arith.extsi %a : vector<4xi1> to vector<4xi64>\n"
        "  ^\n"
    )
    assert not (tmp_path / "out.mlir").exists()


def test_opt_reads_bytes_that_are_not_utf8_as_an_unexpected_character(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run_opt(tmp_path, capsys, b"func.func @f() {\n  return \xff\n}\n")
    assert status == 1
    assert err.splitlines()[0] == "in.mlir:2:10: error: unexpected character"
    assert err.splitlines()[2] == " " * 9 + "^"


def test_opt_reads_undecodable_stdin_too(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"\xfe"), encoding="utf-8")
    monkeypatch.setattr("sys.stdin", stdin)
    assert opt.main(["-"]) == 1
    assert capsys.readouterr().err.startswith(
        "<stdin>:1:1: error: unexpected character"
    )


def test_opt_reports_a_closed_stdin_as_mlir_opt_does(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "passflow.tools.opt", "-", "-o", str(tmp_path / "o")],
        preexec_fn=lambda: os.close(0),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert done.stderr == "cannot open input file '-': Bad file descriptor\n"


def test_opt_prints_unverified_invalid_output_in_generic_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # xDSL's custom printer of arith.addi crashes on an op without operands;
    # mlir-opt prints IR that does not verify in generic form.
    text = '"arith.addi"() : () -> ()\n'
    status, _, err = run_opt(
        tmp_path,
        capsys,
        text.encode(),
        "--mlir-very-unsafe-disable-verifier-on-parsing",
    )
    assert (status, err) == (0, "")
    out = (tmp_path / "out.mlir").read_text()
    assert out.startswith('"builtin.module"() ({\n  "arith.addi"()')


def test_opt_split_chunks_each_get_their_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = f'{EXTSI}// -----\n"J\n// -----\nfunc.func @ok() {{\n  func.return\n}}\n'
    status, out, err = run_opt(tmp_path, capsys, text.encode(), "--split-input-file")
    assert status == 1
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert errors == [
        "in.mlir:2:3: error: 'arith.extsi' op vector<4xi1> should be of base "
        "attribute integer_type",
        "in.mlir:6:1: error: expected '\"' in string literal",
    ]
    assert out == ""
    assert not (tmp_path / "out.mlir").exists()  # as mlir-opt: no partial output
