"""`topological-sort` and `sort_topologically`: orders checked against mlir-opt 22.1.8."""

from __future__ import annotations

from transforms_support import context, run_pipeline

from passflow import ir
from passflow.registry import lookup_pass
from passflow.transforms import TopologicalSort
from passflow.transforms.topological_sort import sort_topologically


def _names(block_holder: ir.ModuleOp) -> list[str]:
    return [str(op.attributes["n"]).split()[0] for op in block_holder.body.block.ops]


def _module(body: str) -> ir.ModuleOp:
    return ir.parse_module(body, context())


def test_registered_under_mlirs_name() -> None:
    info = lookup_pass("topological-sort")
    assert info is not None and info.pass_class is TopologicalSort


def test_sorted_block_is_left_as_it_is() -> None:
    module = _module(
        '%0 = "t.a"() {n = 0} : () -> i32\n"t.b"(%0) {n = 1} : (i32) -> ()\n'
    )
    before = list(module.body.block.ops)
    assert sort_topologically(module.body.block)
    assert list(module.body.block.ops) == before


def test_cycle_is_reported_and_kept_in_order_at_the_end() -> None:
    module = _module(
        '%0 = "t.a"(%1) {n = 0} : (i32) -> i32\n'
        '%1 = "t.b"(%0) {n = 1} : (i32) -> i32\n'
        '%2 = "t.c"() {n = 2} : () -> i32\n'
    )
    assert not sort_topologically(module.body.block)
    assert _names(module) == ["2", "0", "1"]


def test_a_registered_terminator_stays_last() -> None:
    module = _module(
        'func.func @f() {\n  "t.use"(%0) : (i32) -> ()\n'
        '  %0 = "t.def"() : () -> i32\n  return\n}\n'
    )
    block = next(iter(module.body.block.ops)).regions[0].block
    sort_topologically(block)
    assert [ir.operation_name(op).name for op in block.ops] == [
        "t.def",
        "t.use",
        "func.return",
    ]


def test_pass_sorts_graph_regions_only() -> None:
    module = run_pipeline(
        '"t.u"() ({\n  "t.x"(%9) : (i32) -> ()\n  %9 = "t.y"() : () -> i32\n'
        "}) {n = 0} : () -> ()\n"
        '"t.x"(%0) {n = 1} : (i32) -> ()\n%0 = "t.y"() {n = 2} : () -> i32\n',
        "builtin.module(topological-sort)",
    )
    assert _names(module) == ["0", "2", "1"]
    inner = next(iter(module.body.block.ops)).regions[0].block
    assert [ir.operation_name(op).name for op in inner.ops] == ["t.x", "t.y"]
