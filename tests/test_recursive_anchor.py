"""Recursive anchors (`**func.func(...)`): parsed, printed, merged and run."""

from __future__ import annotations

from passflow import ir
from passflow.manager import OpToOpPassAdaptor
from passflow.pipeline_text import parse_pass_pipeline

NESTED = """
func.func @a() { func.return }
builtin.module @m {
  builtin.module @n { func.func @b() { func.return } }
  func.func @c() { func.return }
}
"""


def test_round_trip_keeps_the_marker() -> None:
    text = "builtin.module(**func.func(cse),func.func(symbol-dce))"
    pm = parse_pass_pipeline(text)
    assert str(pm) == text
    adaptor = pm.passes[0]
    assert isinstance(adaptor, OpToOpPassAdaptor)
    assert [m.recursive for m in adaptor.managers] == [True]
    assert "**func.func(" in pm.pretty()
    assert str(pm.clone()) == text


def test_recursive_and_direct_pipelines_do_not_merge() -> None:
    pm = parse_pass_pipeline("builtin.module(**func.func(cse),func.func(cse))")
    first, second = pm.passes
    assert isinstance(first, OpToOpPassAdaptor)
    assert isinstance(second, OpToOpPassAdaptor)
    assert second.try_merge_into(first, ir.default_context())
    assert sorted(str(m) for m in first.managers) == [
        "**func.func(cse)",
        "func.func(cse)",
    ]


def test_children_are_outermost_matches_in_program_order() -> None:
    module = ir.parse_module(NESTED)
    recursive = parse_pass_pipeline("builtin.module(**func.func(cse))").passes[0]
    direct = parse_pass_pipeline("builtin.module(func.func(cse))").passes[0]
    assert isinstance(recursive, OpToOpPassAdaptor)
    assert isinstance(direct, OpToOpPassAdaptor)
    names = [ir.symbol_name(op) for _, op in recursive.children_to_run(module)]
    assert names == ["a", "b", "c"]
    assert [ir.symbol_name(op) for _, op in direct.children_to_run(module)] == ["a"]
