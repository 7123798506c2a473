"""Tests of `passflow.analyses.Liveness` (MLIR's `mlir::Liveness` semantics)."""

from __future__ import annotations

import io

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue

from passflow import OperationPass, PassManager, ir
from passflow.analyses import Liveness
from passflow.pipeline_text import parse_pass_pipeline
from passflow.testing import TestLivenessPass

# --- helpers -----------------------------------------------------------------


def _parse(text: str) -> ModuleOp:
    return ir.parse_module(text, ir.default_context(allow_unregistered=True))


def _func(module: ModuleOp, name: str | None = None) -> Operation:
    for op in module.body.block.ops:
        if name is None or ir.symbol_name(op) == name:
            return op
    raise AssertionError(f"no function {name}")


def _values(op: Operation) -> dict[str, SSAValue]:
    """Every value nested in `op`, by the name it was parsed with (`%sum` is `sum`)."""
    found: dict[str, SSAValue] = {}
    for block in op.walk_blocks():
        for arg in block.args:
            if arg.name_hint:
                found[arg.name_hint] = arg
        for nested in block.ops:
            for result in nested.results:
                if result.name_hint:
                    found[result.name_hint] = result
    return found


def _defining(value: SSAValue) -> Operation:
    owner = value.owner
    assert isinstance(owner, Operation)
    return owner


def _first(block: Block) -> Operation:
    first = block.first_op
    assert first is not None
    return first


def _names(values: set[SSAValue]) -> set[str]:
    return {v.name_hint or "?" for v in values}


def _blocks(op: Operation) -> list[Block]:
    return list(op.walk_blocks())


def _tagged(op: Operation, tag: str) -> Operation:
    for nested in op.walk():
        attr = nested.attributes.get("tag")
        if attr is not None and getattr(attr, "data", None) == tag:
            return nested
    raise AssertionError(f"no op tagged {tag}")


# --- straight-line code -----------------------------------------------------

STRAIGHT = """
func.func @f(%a: i32, %b: i32, %unused: i32) -> i32 {
  %x = arith.addi %a, %b {tag = "x"} : i32
  %y = arith.muli %x, %a {tag = "y"} : i32
  %z = arith.addi %y, %y {tag = "z"} : i32
  func.return %z : i32
}
"""


def test_a_single_block_has_nothing_live_in_or_out() -> None:
    func = _func(_parse(STRAIGHT))
    liveness = Liveness(func)
    (entry,) = _blocks(func)
    assert liveness.get_live_in(entry) == set()
    assert liveness.get_live_out(entry) == set()
    info = liveness.get_liveness(entry)
    assert info is not None and info.block is entry


def test_is_dead_after_the_last_use() -> None:
    func = _func(_parse(STRAIGHT))
    liveness = Liveness(func)
    v = _values(func)
    x_op, y_op, z_op = (_tagged(func, t) for t in ("x", "y", "z"))
    assert not liveness.is_dead_after(v["x"], x_op)
    assert liveness.is_dead_after(v["x"], y_op)  # its last user
    assert liveness.is_dead_after(v["x"], z_op)  # after its last user
    assert not liveness.is_dead_after(v["a"], x_op)
    assert liveness.is_dead_after(v["a"], y_op)
    # A value with no use in the block is dead after any op of it.
    assert liveness.is_dead_after(v["unused"], x_op)


def test_live_ranges_run_from_definition_to_last_use() -> None:
    func = _func(_parse(STRAIGHT))
    liveness = Liveness(func)
    v = _values(func)
    x_op, y_op, z_op = (_tagged(func, t) for t in ("x", "y", "z"))
    ret = z_op.next_op
    assert liveness.resolve_liveness(v["x"]) == [x_op, y_op]
    assert liveness.resolve_liveness(v["z"]) == [z_op, ret]
    # A block argument is live from the block's first op.
    assert liveness.resolve_liveness(v["b"]) == [x_op]


def test_currently_live_values_include_an_unused_argument_at_the_first_op() -> None:
    func = _func(_parse(STRAIGHT))
    liveness = Liveness(func)
    (entry,) = _blocks(func)
    info = liveness.get_liveness(entry)
    assert info is not None
    x_op, y_op = _tagged(func, "x"), _tagged(func, "y")
    # MLIR's quirk: an argument's range starts at the block's first op even if
    # nothing uses it, so `%unused` is live there and nowhere else.
    assert _names(info.currently_live_values(x_op)) == {"a", "b", "unused", "x"}
    assert _names(info.currently_live_values(y_op)) == {"a", "x", "y"}


# --- control flow -----------------------------------------------------------

BRANCHES = """
func.func @f(%cond: i1, %a: i32, %b: i32) -> i32 {
  %x = arith.addi %a, %b : i32
  %dead = arith.muli %a, %a : i32
  cf.cond_br %cond, ^left, ^right
^left:
  %l = arith.addi %x, %b : i32
  cf.br ^exit(%l : i32)
^right:
  cf.br ^exit(%a : i32)
^exit(%sum: i32):
  %r = arith.addi %sum, %x : i32
  func.return %r : i32
}
"""


def test_values_used_in_other_blocks_are_live_out_and_in() -> None:
    func = _func(_parse(BRANCHES))
    liveness = Liveness(func)
    entry, left, right, exit_ = _blocks(func)
    assert _names(liveness.get_live_out(entry)) == {"a", "b", "x"}
    assert _names(liveness.get_live_in(left)) == {"b", "x"}
    assert _names(liveness.get_live_out(left)) == {"x"}
    # `%a` is used by the branch of ^right, so live in; `%x` passes through.
    assert _names(liveness.get_live_in(right)) == {"a", "x"}
    assert _names(liveness.get_live_out(right)) == {"x"}
    assert _names(liveness.get_live_in(exit_)) == {"x"}
    assert liveness.get_live_out(exit_) == set()


def test_a_value_used_only_in_its_block_does_not_escape() -> None:
    func = _func(_parse(BRANCHES))
    liveness = Liveness(func)
    v = _values(func)
    entry = _blocks(func)[0]
    assert v["dead"] not in liveness.get_live_out(entry)
    assert liveness.is_dead_after(v["dead"], _defining(v["dead"]))


def test_live_ranges_follow_successors_with_the_value_live_in() -> None:
    func = _func(_parse(BRANCHES))
    liveness = Liveness(func)
    v = _values(func)
    live = liveness.resolve_liveness(v["x"])
    # Every op from %x's definition to the end of the entry block, all of ^left
    # and ^right, and ^exit up to its use.
    names = sorted(ir.operation_name(op).name for op in live)
    assert len(live) == 3 + 2 + 1 + 1
    assert names.count("cf.br") == 2 and "func.return" not in names
    assert not liveness.is_dead_after(v["x"], _first(_blocks(func)[1]))


LOOP = """
func.func @f(%n: i32, %step: i32) -> i32 {
  %zero = arith.constant 0 : i32
  cf.br ^head(%zero : i32)
^head(%i: i32):
  %more = arith.cmpi slt, %i, %n : i32
  cf.cond_br %more, ^body, ^exit
^body:
  %next = arith.addi %i, %step : i32
  cf.br ^head(%next : i32)
^exit:
  func.return %i : i32
}
"""


def test_loop_invariants_stay_live_around_the_back_edge() -> None:
    func = _func(_parse(LOOP))
    liveness = Liveness(func)
    entry, head, body, exit_ = _blocks(func)
    assert _names(liveness.get_live_out(entry)) == {"n", "step"}
    assert _names(liveness.get_live_in(head)) == {"n", "step"}
    assert _names(liveness.get_live_out(head)) == {"n", "step", "i"}
    assert _names(liveness.get_live_in(body)) == {"n", "step", "i"}
    assert _names(liveness.get_live_out(body)) == {"n", "step"}
    assert _names(liveness.get_live_in(exit_)) == {"i"}


# --- nested regions ---------------------------------------------------------

NESTED = """
func.func @f(%lb: index, %ub: index, %a: i32, %b: i32, %buf: memref<i32>) -> i32 {
  %x = arith.addi %a, %b : i32
  %kept = arith.muli %a, %b : i32
  scf.for %iv = %lb to %ub step %lb {
    %y = arith.addi %x, %a : i32
    memref.store %y, %buf[] : memref<i32>
  } {tag = "loop"}
  func.return %kept : i32
}
"""


def test_values_used_in_a_nested_region_are_live_into_it_not_out_of_the_block() -> None:
    func = _func(_parse(NESTED))
    liveness = Liveness(func)
    v = _values(func)
    entry, body = _blocks(func)
    assert liveness.get_live_out(entry) == set()
    assert _names(liveness.get_live_in(body)) == {"x", "a", "buf"}
    loop = _tagged(func, "loop")
    # The use inside the loop counts as a use by the loop op itself.
    assert not liveness.is_dead_after(v["x"], _defining(v["kept"]))
    assert liveness.is_dead_after(v["x"], loop)
    info = liveness.get_liveness(entry)
    assert info is not None
    assert _names(info.currently_live_values(loop)) >= {"x", "kept", "a", "buf"}


def test_every_nested_block_is_covered_and_others_are_not() -> None:
    module = _parse(NESTED + "func.func @g() {\n  func.return\n}\n")
    liveness = Liveness(_func(module, "f"))
    assert all(liveness.get_liveness(b) is not None for b in _blocks(_func(module)))
    other = _blocks(_func(module, "g"))[0]
    assert liveness.get_liveness(other) is None
    with pytest.raises(ValueError, match="not covered"):
        liveness.get_live_in(other)


# --- the printer ------------------------------------------------------------

PRINTED = """
func.func @p(%a: i32, %c: i1) -> i32 {
  %x = arith.addi %a, %a : i32
  cf.cond_br %c, ^bb1, ^bb1
^bb1:
  func.return %x : i32
}
"""

EXPECTED = (
    "// ---- Liveness -----\n"
    "// - Block: 0\n"
    "// --- LiveIn: \n"
    "// --- LiveOut: val_2 \n"
    "// --- BeginLivenessIntervals\n"
    "// val_2 :\n"
    "//     %x = arith.addi %a, %a : i32\n"
    "//     cf.cond_br %c, ^bb1, ^bb1\n"
    "//     func.return %x : i32\n"
    "// --- EndLivenessIntervals\n"
    "// --- BeginCurrentlyLive\n"
    "//     %x = arith.addi %a, %a : i32 [arg0@0 arg1@0 val_2 \b]\n"
    "//     cf.cond_br %c, ^bb1, ^bb1 [arg1@0 val_2 \b]\n"
    "// --- EndCurrentlyLive\n"
    "// - Block: 1\n"
    "// --- LiveIn: val_2 \n"
    "// --- LiveOut: \n"
    "// --- BeginLivenessIntervals\n"
    "// --- EndLivenessIntervals\n"
    "// --- BeginCurrentlyLive\n"
    "//     func.return %x : i32 [val_2 \b]\n"
    "// --- EndCurrentlyLive\n"
    "// -------------------\n"
)


def test_print_is_mlirs_report() -> None:
    liveness = Liveness(_func(_parse(PRINTED)))
    stream = io.StringIO()
    liveness.print(stream)
    assert stream.getvalue() == EXPECTED
    assert liveness.format() == EXPECTED


def test_multi_result_ops_print_each_result_without_a_newline_between() -> None:
    text = """
    func.func @m() {
      %p:2 = "test.two"() : () -> (i32, i32)
      "test.use"(%p#0, %p#1) : (i32, i32) -> ()
      func.return
    }
    """
    report = Liveness(_func(_parse(text))).format()
    # MLIR starts the second result's line right after the first one's last op.
    assert "// val_0 :\n" in report
    assert "(i32, i32) -> ()// val_1 :\n" in report


# --- through the analysis manager --------------------------------------------


class _AskTwice(OperationPass):
    op_name = "func.func"
    seen: list[Liveness]

    def run_on_operation(self) -> None:
        self.seen.append(self.get_analysis(Liveness))
        self.seen.append(self.get_analysis(Liveness))
        self.mark_analyses_preserved(Liveness)


def test_passes_get_it_from_the_analysis_manager() -> None:
    module = _parse(PRINTED)
    asker = _AskTwice()
    asker.seen = []
    pm = PassManager()
    pm.nest("func.func").add(asker)
    pm.run(module)
    first, second = asker.seen
    assert first is second and first.operation is _func(module)


def test_test_print_liveness_names_the_symbol(
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = _parse(PRINTED)
    pm = PassManager()
    pm.assign(parse_pass_pipeline("builtin.module(func.func(test-print-liveness))"))
    pm.run(module)
    err = capsys.readouterr().err
    assert err == "Testing : p\n" + EXPECTED
    assert TestLivenessPass.argument == "test-print-liveness"
