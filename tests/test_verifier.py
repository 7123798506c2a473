"""MLIR's verifier (`passflow.verifier`): what it checks beyond xDSL's op
verifiers, and that the pass manager runs it after every pass, adaptor or not.

The planted-bug tests replace the verifier with one that skips a kind of call
(the recursive calls after ordinary passes, or the non-recursive ones after an
adaptor) and show that the runs below then pass unnoticed: so each run's error
comes from that very verification step, and a runner that skipped it would fail
these tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from xdsl.dialects import arith, builtin
from xdsl.dialects.builtin import IndexType, IntegerAttr, StringAttr

from passflow import OperationPass, PassManager, PassPipelineError, ir, verifier
from passflow.execution import ChildExecutor
from passflow.executors import ProcessExecutor, ThreadExecutor
from passflow.llvm_integers import index_range, wrap_index

Parse = Callable[[str], ir.ModuleOp]


def message(op: ir.Operation, *, recursive: bool = True) -> str:
    problem = verifier.verify(op, recursive=recursive)
    assert problem is not None
    return "\n".join(
        [problem.message, *(f"note: {note.message}" for note in problem.notes)]
    )


# --- dominance ----------------------------------------------------------------

USE_BEFORE_DEFINITION = """\
func.func @f() -> i32 {
  %y = arith.addi %x, %x : i32
  %x = arith.constant 1 : i32
  func.return %y : i32
}
"""


def test_a_use_before_its_definition_in_a_block(parse: Parse) -> None:
    module = parse(USE_BEFORE_DEFINITION)
    problem = verifier.verify(module)
    assert problem is not None
    assert problem.message == "operand #0 does not dominate this use"
    assert str(problem.location) == "input.mlir:2:8"  # the op's name, as MLIR
    (note,) = [n for n in problem.notes if n.message.startswith("operand")]
    assert note.message == "operand defined here (op in the same block)"
    assert str(note.location) == "input.mlir:3:8"


def test_graph_regions_and_unreachable_blocks_need_no_dominance(parse: Parse) -> None:
    module = parse(
        '%y = "test.a"(%x) : (i32) -> i32\n'
        '%x = "test.b"() : () -> i32\n'
        '"test.graph"() ({\n'
        '  "test.c"(%d) : (i32) -> ()\n'
        '  %d = "test.d"() : () -> i32\n'
        "}) : () -> ()\n"
        "func.func @f() {\n"
        "  func.return\n"
        "^bb1:\n"
        "  %u = arith.addi %v, %v : i32\n"
        "  %v = arith.constant 2 : i32\n"
        "  cf.br ^bb1\n"
        "}\n"
    )
    assert verifier.verify(module) is None


def test_a_multi_block_region_of_an_unregistered_op_has_ssa_dominance(
    parse: Parse,
) -> None:
    module = parse(
        '"test.op"() ({\n'
        '  "test.use"(%a) : (i32) -> ()\n'
        "^bb1(%a: i32):\n"
        '  "test.end"() : () -> ()\n'
        "}) : () -> ()\n"
    )
    assert message(module) == (
        "operand #0 does not dominate this use\n"
        "note: operand defined as a block argument (block #1 in the same region)"
    )


def test_e_graph_classes_may_use_values_defined_later(parse: Parse) -> None:
    module = parse(
        "func.func @f(%a: index) -> index {\n"
        "  %one = arith.constant 1 : index\n"
        "  %m = arith.muli %a_eq, %one : index\n"
        "  %a_eq = equivalence.class %m, %a : index\n"
        "  func.return %a_eq : index\n"
        "}\n"
    )
    assert verifier.verify(module) is None


def test_a_use_of_an_erased_op_is_unlinked(parse: Parse) -> None:
    module = parse(
        "func.func @f() -> i32 {\n"
        "  %x = arith.constant 1 : i32\n"
        "  func.return %x : i32\n"
        "}\n"
    )
    func = next(iter(module.ops))
    constant = func.regions[0].block.first_op
    assert constant is not None
    constant.detach()
    assert message(module).startswith(
        "operation's operand is unlinked\nnote: operand #0 is a result of an op "
        "that is no longer in the IR"
    )


def test_a_use_across_an_isolated_op(parse: Parse) -> None:
    module = parse(
        "func.func @f(%a: i32) {\n"
        '  "test.holder"() ({\n'
        "    func.func @inner() {\n"
        '      "test.use"(%a) : (i32) -> ()\n'
        "      func.return\n"
        "    }\n"
        '    "test.end"() : () -> ()\n'
        "  }) : () -> ()\n"
        "  func.return\n"
        "}\n"
    )
    problem = verifier.verify(module)
    assert problem is not None
    assert problem.message == "'test.use' op using value defined outside the region"
    note = problem.notes[-1]
    assert note.message == "required by region isolation constraints"
    assert str(note.location) == "input.mlir:3:5"


def test_without_recursion_only_the_direct_uses_are_checked(parse: Parse) -> None:
    module = parse(USE_BEFORE_DEFINITION)
    assert verifier.verify(module, recursive=False) is None
    func = next(iter(module.ops))
    assert message(func, recursive=False).startswith(
        "operand #0 does not dominate this use"
    )


# --- structure and attributes ---------------------------------------------------


def test_terminators_and_entry_blocks_in_mlir_words(parse: Parse) -> None:
    no_terminator = parse(
        "func.func @f(%c: i1) {\n"
        "  cf.cond_br %c, ^bb1, ^bb2\n"
        "^bb1:\n"
        "  %x = arith.constant 1 : i32\n"
        "^bb2:\n"
        "  func.return\n"
        "}\n"
    )
    assert message(no_terminator) == (
        "block with no terminator, has %x = arith.constant 1 : i32"
    )
    entry = parse("func.func @f() {\n^bb0:\n  cf.br ^bb0\n}\n")
    assert message(entry) == "entry block of region may not have predecessors"
    empty = parse(
        '"test.r"() ({\n^bb0:\n^bb1:\n  "test.t"() : () -> ()\n}) : () -> ()\n'
    )
    assert message(empty) == "empty block: expect at least a terminator"


def test_index_attributes_hold_64_bit_signed_values(parse: Parse) -> None:
    module = parse("func.func @f() {\n  func.return\n}\n")
    func = next(iter(module.ops))
    block = func.regions[0].block
    lowest, end = index_range()
    for value, valid in (
        (lowest, True),
        (end - 1, True),
        (end, False),
        (-end - 1, False),
    ):
        constant = arith.ConstantOp(IntegerAttr(value, IndexType()))
        assert block.first_op is not None
        block.insert_op_before(constant, block.first_op)
        problem = verifier.verify(module)
        assert (problem is None) is valid, value
        if problem is not None:
            assert problem.message == (
                "'arith.constant' op integer constant out of range for attribute "
                f"'value': {value} : index"
            )
        constant.detach()
    nested = builtin.ArrayAttr([IntegerAttr(end, IndexType())])
    func.attributes["nested"] = nested
    assert message(module).startswith(
        "'func.func' op integer constant out of range for attribute 'nested'"
    )


def test_wrap_index_is_twos_complement() -> None:
    lowest, end = index_range()
    assert wrap_index(end) == lowest
    assert wrap_index(lowest - 1) == end - 1
    assert wrap_index((end - 1) * (end - 1)) == 1
    assert wrap_index(-5) == -5


# --- the pass manager runs it after every pass ------------------------------------------


class SwapFirstOps(OperationPass):
    """Moves the first op of each function after the second: a use before its
    definition. On `builtin.module` it edits every function; on `func.func` its own."""

    argument = "swap-first-ops"

    def run_on_operation(self) -> None:
        op = self.get_operation()
        funcs = [op] if op.name == "func.func" else list(op.regions[0].block.ops)
        for func in funcs:
            block = func.regions[0].block
            first = block.first_op
            second = None if first is None else first.next_op
            assert first is not None and second is not None
            first.detach()
            block.insert_op_after(first, second)


class Rename(OperationPass):
    """Renames its function `b`: each function stays valid, the module has two `b`s.
    Only the verification of the module after the adaptor sees it, as MLIR's
    invalid-parent.mlir."""

    argument = "rename"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        self.get_operation().properties["sym_name"] = StringAttr("b")


FUNCS = """\
func.func @a() -> i32 {
  %x = arith.constant 1 : i32
  %y = arith.addi %x, %x : i32
  func.return %y : i32
}
func.func @b() -> i32 {
  %x = arith.constant 2 : i32
  %y = arith.addi %x, %x : i32
  func.return %y : i32
}
"""


def errors_of(pm: PassManager, module: ir.ModuleOp) -> list[str]:
    try:
        pm.run(module)
    except PassPipelineError as failure:
        return [d.message for d in failure.diagnostics]
    return []


@pytest.fixture(params=["serial", "thread", "process"])
def executor(request: pytest.FixtureRequest) -> Iterator[ChildExecutor | None]:
    if request.param == "serial":
        yield None
    elif request.param == "thread":
        yield ThreadExecutor(2)
    else:
        made = ProcessExecutor(2, serial_budget=0, timeout=60)
        yield made
        made.close()


def plant_skip(monkeypatch: pytest.MonkeyPatch, *, recursive: bool) -> None:
    """The planted bug: the runner's verification is skipped for the calls with
    this `recursive` flag (True: after ordinary passes; False: after adaptors)."""
    real = verifier.verify

    def planted(op: ir.Operation, *, recursive: bool = True) -> object:
        return None if recursive == skipped else real(op, recursive=recursive)

    skipped = recursive
    monkeypatch.setattr(verifier, "verify", planted)


@pytest.mark.parametrize("nested", [False, True])
def test_dominance_is_verified_after_a_pass(parse: Parse, nested: bool) -> None:
    pm = PassManager()
    (pm.nest("func.func") if nested else pm).add(SwapFirstOps())
    errors = errors_of(pm, parse(FUNCS))
    assert "operand #0 does not dominate this use" in errors


@pytest.mark.parametrize(
    ("broken", "expected"),
    [
        (SwapFirstOps, ["operand #0 does not dominate this use"] * 2),
        (Rename, ["'builtin.module' op Redefinition of symbol \"b\""]),
    ],
)
def test_verified_after_a_nested_pass_and_its_adaptor_by_any_executor(
    parse: Parse,
    executor: ChildExecutor | None,
    broken: type[OperationPass],
    expected: list[str],
) -> None:
    """`SwapFirstOps` breaks its function (the verification after the pass finds
    it), `Rename` the module (only the one after the adaptor can)."""
    pm = PassManager(executor=executor)
    pm.nest("func.func").add(broken())
    assert errors_of(pm, parse(FUNCS)) == expected


@pytest.mark.parametrize("nested", [False, True])
def test_planted_skip_after_a_pass_goes_unnoticed(
    parse: Parse, monkeypatch: pytest.MonkeyPatch, nested: bool
) -> None:
    plant_skip(monkeypatch, recursive=True)
    pm = PassManager()
    (pm.nest("func.func") if nested else pm).add(SwapFirstOps())
    assert errors_of(pm, parse(FUNCS)) == []


def test_planted_skip_after_an_adaptor_goes_unnoticed(
    parse: Parse, monkeypatch: pytest.MonkeyPatch
) -> None:
    plant_skip(monkeypatch, recursive=False)
    pm = PassManager()
    pm.nest("func.func").add(Rename())
    assert errors_of(pm, parse(FUNCS)) == []
