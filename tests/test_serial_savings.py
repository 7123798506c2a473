"""The serial savings of docs/parallel.md keep every verifier diagnostic.

`ir.verify` skips the constraint half of an op's generated verifier when an op
of the same shape (class, operand and result types, properties, attributes)
already passed it; trait and custom verifiers still run on every op. Each test
here builds IR whose error a wrong shortcut would miss or reword.
"""

from __future__ import annotations

import gc
import weakref
from collections.abc import Callable

import pytest
from xdsl.dialects import arith, builtin
from xdsl.irdl.operations import OpDef

from passflow import OperationPass, PassManager, PassPipelineError, ir

Parse = Callable[[str], ir.ModuleOp]

RETURNS = """\
func.func @ok(%a: i32) -> i32 {
  func.return %a : i32
}
func.func @bad(%a: i32) -> i64 {
  func.return %a : i32
}
"""


def test_custom_verifier_runs_on_a_remembered_shape(parse: Parse) -> None:
    # Both returns have the same shape; only the second disagrees with its function.
    problem = ir.verify(parse(RETURNS))
    assert str(problem) == (
        "input.mlir:5:3: error: 'func.return' op Expected arguments to have the "
        "same types as the function output types: expected [i64], got [i32]"
    )


def test_trait_verifier_runs_on_a_remembered_shape(parse: Parse) -> None:
    module = parse(
        "func.func @ok(%a: i32) -> i32 {\n"
        "  func.return %a : i32\n"
        "}\n"
        '"test.region"() ({\n'
        "^bb0(%a: i32):\n"
        "  func.return %a : i32\n"
        "}) : () -> ()\n"
    )
    assert str(ir.verify(module)) == (
        "input.mlir:6:3: error: 'func.return' op expects parent op 'func.func'"
    )


ADD = """\
func.func @f(%a: i32, %x: f32) -> i32 {
  %0 = arith.addi %a, %a : i32
  func.return %0 : i32
}
"""


def _add_of(module: ir.ModuleOp) -> ir.Operation:
    body = ir.direct_children(ir.direct_children(module)[0])
    return body[0]


def test_an_unseen_shape_of_a_known_class_is_checked(parse: Parse) -> None:
    module = parse(ADD)
    assert ir.verify(module) is None  # arith.addi on i32 is remembered
    add = _add_of(module)
    block = add.parent
    assert block is not None
    floats = arith.AddiOp(block.args[1], block.args[1])
    block.insert_op_before(floats, add)
    assert str(ir.verify(module)) == (
        "<unknown>:0: error: 'arith.addi' op operand 'lhs' at position 0 does not "
        "verify: Unexpected attribute f32"
    )


def test_a_changed_property_is_checked_again(parse: Parse) -> None:
    module = parse(ADD)
    assert ir.verify(module) is None
    _add_of(module).properties["overflowFlags"] = builtin.StringAttr("wrap")
    assert str(ir.verify(module)) == (
        "input.mlir:2:8: error: 'arith.addi' op \"wrap\" should be of base "
        "attribute arith.overflow"
    )


class BreakReturnType(OperationPass):
    """Makes each function return i64: its (unchanged, already verified)
    `func.return` of an i32 is now invalid."""

    argument = "break-return-type"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        function = self.get_operation()
        assert isinstance(function, ir.Operation)
        old = function.properties["function_type"]
        assert isinstance(old, builtin.FunctionType)
        function.properties["function_type"] = builtin.FunctionType.from_lists(
            old.inputs.data, [builtin.i64]
        )


def test_invalid_ir_made_by_a_pass_is_reported_after_it(parse: Parse) -> None:
    module = parse(ADD)
    assert ir.verify(module) is None  # as passflow-opt verifies after parsing
    pm = PassManager()
    pm.nest("func.func").add(BreakReturnType())
    with pytest.raises(PassPipelineError) as info:
        pm.run(module)
    assert [str(d) for d in info.value.diagnostics] == [
        "input.mlir:3:3: error: 'func.return' op Expected arguments to have the "
        "same types as the function output types: expected [i64], got [i32]"
    ]


def test_constraints_of_a_remembered_shape_are_not_checked_again(
    parse: Parse, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The saving itself: were it lost (say, by an xDSL upgrade changing the
    # generated verifier), verification would stay correct but slow again.
    module = parse(RETURNS.replace("-> i64", "-> i32"))
    assert ir.verify(module) is None
    checked: list[str] = []
    original = OpDef.verify

    def counting(self: OpDef, op: ir.Operation) -> None:
        checked.append(self.name)
        original(self, op)

    monkeypatch.setattr(OpDef, "verify", counting)
    assert ir.verify(module) is None
    # ops with regions are checked in full each time; the returns are not
    assert sorted(checked) == ["builtin.module", "func.func", "func.func"]


def test_bulk_data_is_not_kept_alive_by_the_saving(parse: Parse) -> None:
    module = parse(
        "func.func @f() -> tensor<4xi32> {\n"
        "  %0 = arith.constant dense<[1, 2, 3, 4]> : tensor<4xi32>\n"
        "  func.return %0 : tensor<4xi32>\n"
        "}\n"
    )
    assert ir.verify(module) is None
    constant = ir.direct_children(ir.direct_children(module)[0])[0]
    data = weakref.ref(constant.properties["value"])
    del constant, module
    gc.collect()
    assert data() is None
