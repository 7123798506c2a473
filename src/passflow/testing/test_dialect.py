"""MLIR's `test` dialect: the ops of `mlir/test/lib/Dialect/Test` that lit tests use.

mlir-opt, built with its test passes, loads a `test` dialect whose behaviour lit
tests rely on: it allows unknown operations (`"test.op"() : () -> ()` parses as an
*unregistered* op, so passes refuse to be scheduled on it), and it defines a few
ops with MLIR's traits (`test.symbol` is a symbol). passflow's contexts load this
dialect in place of xDSL's own `test` dialect (`passflow.testing.register`),
so the same files parse and behave the same under passflow-opt.

The ops here are those of `TestOps.td` that the pass-manager suite and the
`test-patterns` pass use, with the same names, operand and attribute constraints
and traits. Inherent attributes are properties, as in MLIR, so `{sym_name = "foo"}`
in generic form is read into `<{sym_name = "foo"}>`.

`generated_patterns` are the declarative (DRR) rewrites `TestOps.td` defines on
these ops, which MLIR's `test-patterns` applies with the greedy driver.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import test as xdsl_test
from xdsl.dialects.builtin import (
    I32,
    FlatSymbolRefAttrConstr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    i32,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.traits import (
    CallableOpInterface,
    NoMemoryEffect,
    SymbolOpInterface,
    SymbolTable,
    SymbolUserOpInterface,
)
from xdsl.utils.exceptions import VerifyException

from passflow.ir import AllowsUnknownOperations

__all__ = [
    "DIALECT",
    "OpA",
    "OpB",
    "OpC",
    "OpD",
    "OpE",
    "OpF",
    "OpG",
    "OpH",
    "OpI",
    "OpJ",
    "OpK",
    "OpN",
    "OpO",
    "SymbolOp",
    "TestCallOp",
    "generated_patterns",
]


# --- Test Symbols ---------------------------------------------------------------


@irdl_op_definition
class SymbolOp(IRDLOperation):
    """`test.symbol`: an operation which defines a new symbol (`[NoMemoryEffect,
    Symbol]`)."""

    name = "test.symbol"

    sym_name = prop_def(StringAttr)
    sym_visibility = opt_prop_def(StringAttr)

    traits = traits_def(NoMemoryEffect(), SymbolOpInterface())


# --- Test Calls -------------------------------------------------------------------


class _CalleeIsAFunction(SymbolUserOpInterface):
    """`TestCallOp::verifySymbolUses`: the callee must name a function."""

    def verify(self, op: Operation) -> None:
        if not isinstance(op, TestCallOp):
            return
        callee = SymbolTable.lookup_symbol(op, op.callee)
        if callee is None or callee.get_trait(CallableOpInterface) is None:
            raise VerifyException(
                f"'{op.callee.string_value()}' does not reference a valid function"
            )


@irdl_op_definition
class TestCallOp(IRDLOperation):
    """`test.call @callee(operands) : (types) -> results`: a call whose callee
    must be a function of an enclosing symbol table (what `test-pass-invalid-
    parent` inserts with an unknown callee, to break its parent)."""

    name = "test.call"

    callee = prop_def(FlatSymbolRefAttrConstr)
    arguments = var_operand_def()
    res = var_result_def()

    traits = traits_def(_CalleeIsAFunction())

    assembly_format = (
        "$callee `(` $arguments `)` attr-dict `:` functional-type($arguments, $res)"
    )

    def __init__(
        self,
        callee: str,
        arguments: list[SSAValue | Operation] | None = None,
        result_types: list[Attribute] | None = None,
    ) -> None:
        super().__init__(
            operands=[arguments or []],
            result_types=[result_types or []],
            properties={"callee": SymbolRefAttr(callee)},
        )


# --- Test Patterns: the ops `TestOps.td` rewrites with DRR -----------------------


class _UnaryI32(IRDLOperation):
    """`Arguments<(ins I32)>, Results<(outs I32)>`."""

    input = operand_def(I32)
    output = result_def(I32)

    def __init__(self, input: SSAValue | Operation) -> None:
        super().__init__(operands=[input], result_types=[i32])


class _WithI32Attr(IRDLOperation):
    """`(ins I32, I32Attr:$attr)`, `(outs I32)`: ops `op_a` and `op_b`."""

    input = operand_def(I32)
    attr = prop_def(IntegerAttr[I32])
    output = result_def(I32)

    def __init__(self, input: SSAValue | Operation, attr: IntegerAttr[I32]) -> None:
        super().__init__(
            operands=[input], result_types=[i32], properties={"attr": attr}
        )


@irdl_op_definition
class OpA(_WithI32Attr):
    name = "test.op_a"


@irdl_op_definition
class OpB(_WithI32Attr):
    name = "test.op_b"


@irdl_op_definition
class OpC(_UnaryI32):
    name = "test.op_c"


@irdl_op_definition
class OpD(_UnaryI32):
    name = "test.op_d"


@irdl_op_definition
class OpE(_UnaryI32):
    name = "test.op_e"


@irdl_op_definition
class OpF(_UnaryI32):
    name = "test.op_f"


@irdl_op_definition
class OpG(_UnaryI32):
    name = "test.op_g"


@irdl_op_definition
class OpH(IRDLOperation):
    """A zero-result op (`Results<(outs)>`)."""

    name = "test.op_h"

    input = operand_def(I32)

    def __init__(self, input: SSAValue | Operation) -> None:
        super().__init__(operands=[input])


@irdl_op_definition
class OpI(IRDLOperation):
    name = "test.op_i"

    input = operand_def(I32)

    def __init__(self, input: SSAValue | Operation) -> None:
        super().__init__(operands=[input])


@irdl_op_definition
class OpJ(IRDLOperation):
    """A zero-operand op (`Arguments<(ins)>`)."""

    name = "test.op_j"

    output = result_def(I32)

    def __init__(self) -> None:
        super().__init__(result_types=[i32])


@irdl_op_definition
class OpK(IRDLOperation):
    name = "test.op_k"

    output = result_def(I32)

    def __init__(self) -> None:
        super().__init__(result_types=[i32])


@irdl_op_definition
class OpN(IRDLOperation):
    name = "test.op_n"

    lhs = operand_def(I32)
    rhs = operand_def(I32)
    output = result_def(I32)


@irdl_op_definition
class OpO(_UnaryI32):
    name = "test.op_o"


# --- the DRR patterns -----------------------------------------------------------


@dataclass(frozen=True)
class _Rewrite(RewritePattern):
    """One declarative rewrite: `rewrite(op)` gives the replacement op, or None when
    the source pattern does not match. `benefit` is DRR's: the number of ops the
    source pattern matches, plus any `addBenefit`."""

    root: type[Operation]
    benefit: int
    rewrite: Callable[[Operation], Operation | None]
    label: str

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, self.root):
            return
        replacement = self.rewrite(op)
        if replacement is not None:
            rewriter.replace(op, replacement)


def _i32(value: int) -> IntegerAttr[I32]:
    return IntegerAttr(value, i32)


def _producer(value: SSAValue, kind: type[Operation]) -> Operation | None:
    owner = value.owner
    return owner if isinstance(owner, kind) else None


def _a_to_b(op: Operation) -> Operation | None:
    assert isinstance(op, OpA)
    return OpB(op.input, op.attr)


def _a_of_a_to_b(op: Operation) -> Operation | None:
    assert isinstance(op, OpA)
    inner = _producer(op.input, OpA)
    if not isinstance(inner, OpA):
        return None
    return OpB(inner.input, op.attr)


def _c_to_b(op: Operation) -> Operation | None:
    assert isinstance(op, OpC)
    return OpB(op.input, _i32(17))


def _d_to_e(op: Operation) -> Operation | None:
    assert isinstance(op, OpD)
    return OpE(op.input)


def _d_to_f(op: Operation) -> Operation | None:
    assert isinstance(op, OpD)
    return OpF(op.input)


def _g_to_b(op: Operation) -> Operation | None:
    assert isinstance(op, OpG)
    return OpB(op.input, _i32(20))


def _g_of_g_to_b(op: Operation) -> Operation | None:
    assert isinstance(op, OpG)
    inner = _producer(op.input, OpG)
    if not isinstance(inner, OpG):
        return None
    return OpB(inner.input, _i32(34))


def _h_to_i(op: Operation) -> Operation | None:
    assert isinstance(op, OpH)
    return OpI(op.input)


def _j_to_k(op: Operation) -> Operation | None:
    return OpK()


def _equal_args(op: Operation) -> Operation | None:
    assert isinstance(op, OpN)
    return OpO(op.lhs) if op.lhs is op.rhs else None


_PATTERNS: tuple[_Rewrite, ...] = (
    _Rewrite(OpA, 1, _a_to_b, "TestNamedPatternRule"),
    _Rewrite(OpA, 2, _a_of_a_to_b, "OpA(OpA) -> OpB"),
    _Rewrite(OpC, 1, _c_to_b, "OpC -> OpB{attr=17}"),
    _Rewrite(OpD, 1, _d_to_e, "OpD -> OpE"),
    _Rewrite(OpD, 11, _d_to_f, "OpD -> OpF (addBenefit 10)"),
    _Rewrite(OpG, 1, _g_to_b, "OpG -> OpB{attr=20}"),
    _Rewrite(OpG, 2, _g_of_g_to_b, "OpG(OpG) -> OpB{attr=34}"),
    _Rewrite(OpH, 1, _h_to_i, "OpH -> OpI"),
    _Rewrite(OpJ, 1, _j_to_k, "OpJ -> OpK"),
    _Rewrite(OpN, 1, _equal_args, "TestEqualArgsPattern"),
)


def _by_root() -> dict[type[Operation], tuple[RewritePattern, ...]]:
    """The patterns of each root op class, highest benefit first (ties keep their
    declaration order), as MLIR's pattern applicator orders them."""
    table: dict[type[Operation], list[_Rewrite]] = {}
    for pattern in _PATTERNS:
        table.setdefault(pattern.root, []).append(pattern)
    ordered: dict[type[Operation], tuple[RewritePattern, ...]] = {}
    for root, patterns in table.items():
        patterns.sort(key=_highest_benefit_first)
        ordered[root] = tuple(patterns)
    return ordered


def _highest_benefit_first(pattern: _Rewrite) -> int:
    return -pattern.benefit


_BY_ROOT = _by_root()


def generated_patterns(op: Operation) -> Sequence[RewritePattern]:
    """The DRR patterns whose root is `op`'s kind, in the order they are tried
    (MLIR's `populateWithGenerated` of `TestOps.td`, for the ops defined here)."""
    return _BY_ROOT.get(type(op), ())


XDSL_TEST_OPS: tuple[type[IRDLOperation], ...] = (
    xdsl_test.TestTermOp,
    xdsl_test.TestPureOp,
    xdsl_test.TestReadOp,
    xdsl_test.TestWriteOp,
    xdsl_test.TestSymbolOp,
    xdsl_test.TestAllocatableOp,
)
"""xDSL's `test` ops, which xDSL's own tests use: ops with one trait each (a
terminator, a pure op, a memory read or write, a symbol, an op with allocatable
registers), as xDSL's `test` dialect registers them. Their names are not MLIR's, so they clash with nothing
mlir-opt's tests rely on. xDSL's trait-less `test.op` is left out: in MLIR's
`test` dialect that name is an unregistered op, and MLIR's tests depend on it
being one (a pass cannot be scheduled on it)."""

XDSL_TEST_ATTRIBUTES = (xdsl_test.TestType, xdsl_test.TestRegisterType)
"""xDSL's `!test.type<"...">` and register type `!test.reg<...>`."""


DIALECT = Dialect(
    "test",
    [
        SymbolOp,
        TestCallOp,
        OpA,
        OpB,
        OpC,
        OpD,
        OpE,
        OpF,
        OpG,
        OpH,
        OpI,
        OpJ,
        OpK,
        OpN,
        OpO,
        *XDSL_TEST_OPS,
    ],
    list(XDSL_TEST_ATTRIBUTES),
    [AllowsUnknownOperations()],
)
"""MLIR's `test` dialect as passflow knows it, with xDSL's test ops; it allows
unknown operations."""
