# pyright: reportPrivateUsage=false
# These tests check xDSL's private hooks and fields by name: that is their point.
"""Canaries: one test per xDSL internal passflow relies on.

`passflow.ir` and `passflow.xdsl_internals` use things xDSL does not promise:
private hooks of its parser, fields of its classes, helpers of its passes, the
way it raises diagnostics. Each test here checks the one property passflow
relies on, so that after an xDSL upgrade the failing test names what changed
and which passflow function must follow.
"""

from __future__ import annotations

import dataclasses
import gc
import inspect
import io
import re
import weakref
from inspect import getattr_static

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, bigint, func, memref, test
from xdsl.dialects.builtin import (
    UNKNOWN_LOC,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    UnknownLoc,
    i32,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, SSAValue, TypeAttribute
from xdsl.parser import Parser
from xdsl.parser.core import UnresolvedOperand
from xdsl.parser.generic_parser import ParserState
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.traits import HasFolder
from xdsl.transforms.common_subexpression_elimination import (
    has_other_side_effecting_op_in_between,
)
from xdsl.transforms.dead_code_elimination import result_only_effects
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import (
    ArgSpecParseError,
    MultipleSpansParseError,
    ParseError,
    VerifyException,
)
from xdsl.utils.lexer import Input, Span
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRTokenKind

from passflow import ir, xdsl_internals
from passflow.diagnostics import IRParseError
from passflow.lexer import MAX_DECIMAL_DIGITS

FUNCTION = """\
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  func.return %0 : i32
}
"""


def _context() -> Context:
    return ir.default_context(allow_unregistered=True)


def _xdsl_parse_error(text: str) -> Exception:
    """What xDSL's own parser raises on `text`."""
    with pytest.raises(Exception) as caught:
        Parser(_context(), text, "canary.mlir").parse_module()
    return caught.value


def _ops(text: str) -> list[Operation]:
    return list(ir.parse_module(text, _context(), "canary.mlir").walk())


# --- passflow.ir: the context ---------------------------------------------------------


def test_context_get_optional_op_takes_dialect_stack() -> None:
    parameter = inspect.signature(Context.get_optional_op).parameters.get(
        "dialect_stack"
    )
    assert parameter is not None and parameter.kind is parameter.KEYWORD_ONLY, (
        "Context.get_optional_op(name, *, dialect_stack) changed: "
        "ir._Context.get_optional_op overrides it with that signature"
    )


def test_context_clone_keeps_its_state_in_the_instance_dict() -> None:
    ctx = _context()
    ir.load_dialects(ctx, ["arith"])
    copy = ctx.clone()
    assert isinstance(copy, ir._Context), "ir._Context.clone no longer returns one"
    assert copy.allow_unregistered, (
        "Context.clone's state is not all in its instance dict any more: "
        "ir._Context.clone copies vars(super().clone())"
    )
    assert {d.name for d in copy.loaded_dialects} == {
        d.name for d in ctx.loaded_dialects
    }
    assert set(copy.registered_dialect_names) == set(ctx.registered_dialect_names)
    assert copy.get_optional_op("test.unknown") is not None


# --- passflow.lexer -----------------------------------------------------------


def test_mlir_lexer_unescaped_characters_regex() -> None:
    pattern = getattr_static(MLIRLexer, "_unescaped_characters_regex", None)
    assert isinstance(pattern, re.Pattern), (
        "MLIRLexer._unescaped_characters_regex is gone: passflow.lexer.Lexer overrides it "
        "to lex strings in linear time"
    )

    class MatchesNothing(MLIRLexer):
        _unescaped_characters_regex = re.compile(r"(?!)")

    with pytest.raises(ParseError, match="before closing string literal"):
        MatchesNothing(Input('"abc"', "canary.mlir")).lex()


def test_mlir_lexer_lex_makes_every_token() -> None:
    digits = "9" * (MAX_DECIMAL_DIGITS + 1)
    with pytest.raises(IRParseError, match="integer constant out of range"):
        ir.parse_module(f"%0 = arith.constant {digits} : i64", _context())


def test_mlir_lexer_pos_is_settable() -> None:
    lexer = MLIRLexer(Input("%a %b", "canary.mlir"))
    lexer.pos = 3
    token = lexer.lex()
    assert (token.kind, token.text) == (MLIRTokenKind.PERCENT_IDENT, "%b"), (
        "MLIRLexer.pos no longer sets where lex() reads: ir._LocatingParser."
        "_op_name_token relies on it"
    )


# --- passflow.ir: the parser's state --------------------------------------------------


def test_parser_parser_state_can_be_replaced() -> None:
    parser = Parser(_context(), "", "canary.mlir")
    state = ParserState(MLIRLexer(Input("%x", "canary.mlir")))
    parser._parser_state = state
    assert parser.lexer is state.lexer, (
        "Parser.lexer does not read Parser._parser_state any more: "
        "ir._LocatingParser installs its own lexer there"
    )
    assert parser._current_token.kind is MLIRTokenKind.PERCENT_IDENT


def test_parser_current_token() -> None:
    parser = Parser(_context(), "  %x", "canary.mlir")
    token = parser._current_token
    assert (token.kind, token.span.start) == (MLIRTokenKind.PERCENT_IDENT, 2), (
        "Parser._current_token changed: ir._LocatingParser reads its kind and span"
    )


def test_parser_state_dialect_stack() -> None:
    state = ParserState(MLIRLexer(Input("", "canary.mlir")))
    assert state.dialect_stack == ["builtin"], (
        "ParserState.dialect_stack changed: ir._LocatingParser._get_op_by_name "
        "reads the default dialect from it"
    )


def test_parser_forward_references() -> None:
    parser = Parser(
        _context(), "func.func @f() {\n  func.return %x : i32\n}", "canary.mlir"
    )
    with pytest.raises(ParseError, match="values used but not defined"):
        parser.parse_module()
    assert "x" in parser.forward_ssa_references, (
        "Parser.forward_ssa_references is no longer keyed by value name: "
        "ir._LocatingParser.parse_module reports the first use from it"
    )
    assert isinstance(parser.ssa_values, dict)
    assert isinstance(parser.forward_block_references, dict)


def test_parser_resolve_operand_signature() -> None:
    assert list(inspect.signature(Parser.resolve_operand).parameters) == [
        "self",
        "operand",
        "type",
    ], "Parser.resolve_operand(operand, type) changed: ir._LocatingParser overrides it"
    operand = UnresolvedOperand(Span(0, 2, Input("%x", "canary.mlir")), 0)
    assert (operand.operand_name, operand.span.start) == ("x", 0), (
        "UnresolvedOperand.operand_name or .span changed: "
        "ir._LocatingParser.resolve_operand reads both"
    )


def test_parser_get_op_by_name() -> None:
    seen: list[str] = []

    class Spy(Parser):
        def _get_op_by_name(self, name: str) -> type[Operation]:
            seen.append(name)
            return super()._get_op_by_name(name)

    Spy(
        _context(), '%0 = arith.constant 1 : i32\n"test.op"() : () -> ()'
    ).parse_module()
    assert seen == ["arith.constant", "test.op"], (
        "Parser no longer looks op names up through _get_op_by_name: "
        "ir._LocatingParser overrides it for MLIR's unknown-op errors"
    )


def test_parser_parse_methods_passflow_overrides_are_called() -> None:
    called: set[str] = set()

    class Spy(Parser):
        def parse_operation(self) -> Operation:
            called.add("parse_operation")
            return super().parse_operation()

        def parse_optional_type(self) -> TypeAttribute | None:
            called.add("parse_optional_type")
            return super().parse_optional_type()

        def parse_optional_attribute(self) -> Attribute | None:
            called.add("parse_optional_attribute")
            return super().parse_optional_attribute()

        def parse_optional_builtin_int_or_float_attr(
            self,
        ) -> IntegerAttr | FloatAttr | None:
            called.add("parse_optional_builtin_int_or_float_attr")
            return super().parse_optional_builtin_int_or_float_attr()

    Spy(_context(), '"test.op"() {a = 1 : i32, b = [2]} : () -> i32').parse_module()
    assert called == {
        "parse_operation",
        "parse_optional_type",
        "parse_optional_attribute",
        "parse_optional_builtin_int_or_float_attr",
    }, f"xDSL's parser no longer calls these through self: {called}"


def test_parser_parse_file_metadata_dictionary() -> None:
    text = '"test.op"() : () -> ()\n{-#\n  external_resources: {\n    mlir_reproducer: {\n      pipeline: "builtin.module(cse)"\n    }\n  }\n#-}\n'
    module = ir.parse_module(text, _context())
    assert ir.file_metadata(module).startswith("{-#"), (
        "Parser._parse_file_metadata_dictionary is no longer how xDSL reads "
        "{-# ... #-}: ir._LocatingParser overrides it to keep the section"
    )
    assert ir.external_resources(module) == {
        "mlir_reproducer": {"pipeline": "builtin.module(cse)"}
    }, (
        "Parser._parse_external_resources is no longer called for "
        "external_resources: ir._LocatingParser overrides it"
    )


# --- passflow.ir: xDSL's messages -----------------------------------------------------


def test_parse_module_nothing_to_parse_message() -> None:
    err = _xdsl_parse_error("")
    assert isinstance(err, ParseError) and err.msg == "Could not parse entire input!", (
        "xDSL's message for input without an op changed: "
        "ir._LocatingParser.parse_module makes that input an empty module"
    )


def test_parse_module_undefined_value_message() -> None:
    err = _xdsl_parse_error("func.func @f() {\n  func.return %x : i32\n}")
    assert isinstance(err, ParseError)
    assert err.msg.startswith("values used but not defined")


def test_parse_module_missing_block_message() -> None:
    err = _xdsl_parse_error("func.func @f() {\n  cf.br ^bb9\n}")
    assert isinstance(err, MultipleSpansParseError), type(err)
    assert err.msg.startswith("region ends with missing block declarations")
    assert err.refs and all(isinstance(ref, tuple) for ref in err.refs), (
        "MultipleSpansParseError.refs no longer holds (span, message) pairs"
    )


def test_no_custom_format_message() -> None:
    err = _xdsl_parse_error("%0 = test.op_a")
    assert isinstance(err, ParseError)
    assert err.msg == ir._NO_CUSTOM_FORMAT.format("test.op_a")


def test_integer_out_of_range_message() -> None:
    err = _xdsl_parse_error("%0 = arith.constant 300 : i8")
    assert re.match(ir._INTEGER_OUT_OF_RANGE, str(err)), str(err)


def test_mlir_parse_messages() -> None:
    block = _xdsl_parse_error("func.func @f() {\n  5\n}")
    string = _xdsl_parse_error('"test.op"() {a = "abc')
    messages = {e.msg for e in (block, string) if isinstance(e, ParseError)}
    # The hexadecimal float's, xDSL 0.75's only: its own canary checks it.
    hexadecimal = {"Hexadecimal float constant out of range for type"}
    assert messages == set(ir._MLIR_PARSE_MESSAGES) - hexadecimal, (
        f"xDSL's messages changed, ir._MLIR_PARSE_MESSAGES translates: {messages}"
    )


def test_unexpected_character_message() -> None:
    err = _xdsl_parse_error("§")
    assert isinstance(err, ParseError) and err.msg.startswith("Unexpected character")


def test_parse_optional_builtin_int_or_float_attr_overflow() -> None:
    """xDSL 0.74 raises OverflowError for a hexadecimal float wider than its
    type, later ones a ParseError: passflow turns both into MLIR's message."""
    err = _xdsl_parse_error("%0 = arith.constant 0xFFFFFFFFFF : f16")
    if isinstance(err, ParseError):
        assert err.msg in ir._MLIR_PARSE_MESSAGES
    else:
        assert isinstance(err, OverflowError)
    with pytest.raises(IRParseError) as raised:
        ir.parse_module("%0 = arith.constant 0xFFFFFFFFFF : f16", _context(), "x.mlir")
    assert "hexadecimal float constant out of range for type" in str(raised.value)


# --- passflow.ir: locations -----------------------------------------------------------


def test_operation_default_location_is_the_shared_unknown_loc() -> None:
    plain, written = (
        Parser(_context(), '"test.a"() : () -> ()\n"test.b"() : () -> () loc(unknown)')
        .parse_module()
        .ops
    )
    assert plain.location is UNKNOWN_LOC, (
        "xDSL no longer gives an op without loc(...) its shared UNKNOWN_LOC: "
        "ir._LocatingParser.parse_operation tells them apart by identity"
    )
    assert isinstance(written.location, UnknownLoc) and written.location is not (
        UNKNOWN_LOC
    ), "a written loc(unknown) is now the shared UNKNOWN_LOC too"


def test_operation_is_weakly_referenceable_and_hashed_by_identity() -> None:
    op = test.TestOp()
    twin = test.TestOp()
    ref = weakref.ref(op)
    before = hash(op)
    op.attributes["changed"] = UNKNOWN_LOC
    assert hash(op) == before and op == op and op != twin, (
        "Operation no longer hashes and compares by identity: "
        "ir's position tables key on ops"
    )
    del op
    gc.collect()
    assert ref() is None


# --- passflow.ir: printing and verification -------------------------------------------


def test_printer_keeps_value_names_across_print_op() -> None:
    function = ir.direct_children(ir.parse_module(FUNCTION, _context()))[0]
    add = next(op for op in function.walk() if isinstance(op, arith.AddiOp))
    printer = Printer(stream=io.StringIO())
    printer.print_op(function)
    stream = io.StringIO()
    printer.stream = stream
    printer.print_op(add)
    assert stream.getvalue() == "%0 = arith.addi %a, %a : i32", (
        "Printer forgets value names between print_op calls, or its stream can "
        f"no longer be swapped (ir.print_op_in_scope): {stream.getvalue()!r}"
    )


def test_printer_print_region_prints_every_region() -> None:
    text = FUNCTION + "module @m {\n}\n"
    module = ir.parse_module(text, _context())
    printed = [ir.print_op_without_regions(op) for op in ir.direct_children(module)]
    assert printed == [
        "func.func @f(%a: i32) -> i32 {...}",
        "builtin.module @m {...}",
    ], f"a custom printer no longer prints its regions via print_region: {printed}"


def test_operation_verify_runs_verify_underscore_then_nested() -> None:
    parameters = inspect.signature(Operation.verify).parameters
    assert "verify_nested_ops" in parameters, (
        "Operation.verify(verify_nested_ops=...) changed: ir.verify calls it so"
    )
    op = arith.ConstantOp.create(result_types=[i32])
    with pytest.raises(VerifyException):
        op.verify_()


# --- passflow.xdsl_internals ----------------------------------------------------------


def test_ir_with_name_name_field() -> None:
    block = Block(arg_types=[i32])
    value: SSAValue = block.args[0]
    value.name_hint = "x_1"
    assert value.name_hint == "x", (
        "name_hint's setter keeps a trailing _<digits> now: "
        "xdsl_internals.set_name_hint_verbatim may use it"
    )
    for named in (value, block):
        xdsl_internals.set_name_hint_verbatim(named, "x_1")
        assert named.name_hint == "x_1", (
            "name_hint no longer reads the _name field "
            "xdsl_internals.set_name_hint_verbatim writes"
        )


def test_operation_fields_hold_all_of_an_ops_state() -> None:
    for op in _ops(FUNCTION):
        assert set(vars(op)) <= xdsl_internals.OP_FIELDS, (
            "an op object holds state beyond Operation's dataclass fields: "
            "xdsl_internals.foreign_op_state would send it as foreign state"
        )
    parameters = set(inspect.signature(Operation.create).parameters)
    assert {
        "operands",
        "result_types",
        "properties",
        "attributes",
        "location",
        "successors",
        "regions",
    } <= parameters, "Operation.create changed: executors.transfer rebuilds ops with it"


def test_diagnostic_raise_exception() -> None:
    op = test.TestOp()
    with pytest.raises(VerifyException) as caught:
        op.emit_error("canary message", VerifyException("boom"))
    assert xdsl_internals.diagnostic_op_messages(caught.value) == [
        (op, "canary message")
    ], (
        "xDSL's Diagnostic.raise_exception frame or its op_messages changed: "
        "xdsl_internals.diagnostic_op_messages reads them from the traceback"
    )


def test_arg_spec_parse_error_message() -> None:
    with pytest.raises(ArgSpecParseError) as caught:
        parse_spec("cse{a=}")
    assert (
        str(caught.value)
        .rstrip()
        .endswith("wrap argument in quotes to pass arbitrary string values")
    ), (
        "ArgSpecParseError's message no longer ends with the reason: "
        "xdsl_internals.arg_spec_error_reason reads its last line"
    )
    assert xdsl_internals.arg_spec_error_reason(caught.value).startswith(
        "Unknown argument value"
    )


def test_has_folder_fold() -> None:
    with pytest.raises(NotImplementedError):
        getattr_static(HasFolder, "fold").__func__(HasFolder, test.TestOp())
    constant = bigint.ConstantOp(1)
    assert constant.get_trait(HasFolder) is not None
    assert xdsl_internals.working_folder(constant) is None, (
        "bigint.constant's HasFolder now folds: xdsl_internals.working_folder "
        "may stop telling the bare trait apart"
    )
    add = _ops(FUNCTION)[2]
    assert xdsl_internals.working_folder(add) is not None


def test_pattern_rewriter_per_match_state() -> None:
    fields = {f.name for f in dataclasses.fields(PatternRewriter)}
    assert fields == {
        "operation_insertion_handler",
        "block_creation_handler",
        "operation_removal_handler",
        "operation_modification_handler",
        "operation_replacement_handler",
        "insertion_point",
        "_name_hint",
        "_current_operation",
        "has_done_action",
    }, (
        "PatternRewriter's state changed: xdsl_internals.retarget_rewriter "
        f"resets the per-match part of it ({sorted(fields)})"
    )
    ops = _ops(FUNCTION)
    add, ret = ops[2], ops[3]
    rewriter = PatternRewriter(InsertPoint.at_start(Block()))
    rewriter.has_done_action = True
    xdsl_internals.retarget_rewriter(rewriter, ret)
    assert not rewriter.has_done_action
    new = add.clone()
    rewriter.insert(new)
    assert ret.prev_op is new and rewriter.has_done_action


def test_result_only_effects() -> None:
    alloc = memref.AllocOp.get(i32, shape=[4])
    load = memref.LoadOp.get(alloc, [])
    store = memref.StoreOp.get(load, alloc, [])
    facts = [result_only_effects(op) for op in (load, store)]
    assert facts == [True, False], (
        "xDSL's result_only_effects changed meaning: "
        f"xdsl_internals.only_affects_own_results relies on it ({facts})"
    )
    unknown = func.CallOp("g", [], [])
    assert not xdsl_internals.only_affects_own_results(unknown)


def test_has_other_side_effecting_op_in_between() -> None:
    alloc = memref.AllocOp.get(i32, shape=[4])
    first = memref.LoadOp.get(alloc, [])
    store = memref.StoreOp.get(first, alloc, [])
    second = memref.LoadOp.get(alloc, [])
    block = Block([alloc, first, second])
    assert not has_other_side_effecting_op_in_between(first, second)
    block.insert_op_before(store, second)
    assert xdsl_internals.may_write_between(first, second), (
        "xDSL's has_other_side_effecting_op_in_between no longer sees a store "
        "between two loads: xdsl_internals.may_write_between relies on it"
    )


def test_module_op_is_what_the_parser_wraps_ops_in() -> None:
    module = Parser(_context(), '"test.a"() : () -> ()').parse_module()
    assert type(module) is ModuleOp and module.location is UNKNOWN_LOC, (
        "xDSL's implicit module changed: ir.parse_module tells it from a written "
        "module by identity with the last top-level op parsed"
    )


def test_context_keeps_registered_dialect_factories_unloaded() -> None:
    made: list[str] = []

    def lazy() -> Dialect:
        made.append("lazy")
        return test.Test

    ctx = Context()
    ctx.register_dialect("lazy", lazy)
    ctx.load_dialect(arith.Arith)
    factories = xdsl_internals.registered_dialect_factories(ctx)
    assert isinstance(getattr(ctx, "_registered_dialects", None), dict), (
        "xDSL's Context no longer keeps its dialect factories in _registered_dialects: "
        "xdsl_internals.registered_dialect_factories now loads every dialect"
    )
    assert set(factories) == {"lazy", "arith"} and made == []
    assert factories["arith"]() is arith.Arith


def test_printer_value_numbering_and_new_line() -> None:
    out = io.StringIO()
    printer = Printer(stream=out)
    assert [xdsl_internals.new_value_name_id(printer) for _ in range(2)] == ["0", "1"]
    printer.print_string("// a")
    xdsl_internals.print_new_line(printer)
    printer.print_string("// b")
    assert out.getvalue() == "// a\n// b"


def test_string_printer_prints_as_xdsl_and_keeps_its_column() -> None:
    text = (
        "func.func @f(%a: i32) -> i32 {\n  %b = arith.addi %a, %a : i32\n"
        '  "test.op"() ({\n    "test.inner"() : () -> ()\n  }) : () -> ()\n'
        "  func.return %b : i32\n}\n"
    )
    (op,) = ir.direct_children(ir.parse_module(text, _context()))
    theirs, ours = io.StringIO(), io.StringIO()
    plain = Printer(stream=theirs)
    fast = xdsl_internals.StringPrinter(stream=ours)
    for printer in (plain, fast):
        printer.print_op(op)
        printer.print_string(" // tail")
    assert ours.getvalue() == theirs.getvalue()
    columns = [getattr(p, "_current_column", None) for p in (plain, fast)]
    assert columns[0] is not None and columns[0] == columns[1], (
        "xDSL's printer no longer keeps its column in _current_column: "
        "xdsl_internals.StringPrinter must follow"
    )


def test_operands_and_successors_are_replaced_tuples() -> None:
    text = (
        "func.func @f(%a: i32, %b: i32) {\n"
        '  "test.op"(%a)[^bb1] : (i32) -> ()\n^bb1:\n  func.return\n}\n'
    )
    (function,) = ir.direct_children(ir.parse_module(text, _context()))
    assert isinstance(function, func.FuncOp)
    entry, exit_ = function.body.blocks
    op = entry.first_op
    assert op is not None
    operands = xdsl_internals.operand_tuple(op)
    successors = xdsl_internals.successor_tuple(op)
    assert isinstance(operands, tuple) and isinstance(successors, tuple)
    assert list(operands) == list(op.operands)
    assert list(successors) == list(op.successors)
    op.operands[0] = entry.args[1]
    op.successors = [entry]
    # The tuples taken before are snapshots: xDSL replaced, not edited, them.
    assert list(operands) == [entry.args[0]]
    assert list(successors) == [exit_]
    assert xdsl_internals.operand_tuple(op) == (entry.args[1],)
