"""Pass statistics reports (reference §6): layouts taken from mlir-opt 22.1.8 runs,
sorting, grouping, and the merge of worker clones."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from passflow import OperationPass, PassManager, Statistic, ir
from passflow.statistics_report import statistics_report
from passflow.testing import TestStatisticPass

Parse = Callable[[str], ir.ModuleOp]

HEADER = (
    "===-------------------------------------------------------------------------===\n"
    "                         ... Pass statistics report ...\n"
    "===-------------------------------------------------------------------------===\n"
)

NESTED_INPUT = """\
func.func @foo(%a: i32) -> i32 {
  func.return %a : i32
}
func.func @bar(%a: i32) -> i32 {
  func.return %a : i32
}
builtin.module @inner {
  func.func @baz(%a: i32) -> i32 {
    func.return %a : i32
  }
}
"""

# Per symbol, the (num-cse'd, num-dce'd) values mlir-opt's CSE *assigns* on that
# op; the last op processed by an instance is what the report shows.
CSE_COUNTS = {"bar": (2, 10)}


class CSE(OperationPass):
    """Stands in for mlir-opt's CSE: same statistics, values set per symbol."""

    argument = "cse"
    num_cse = Statistic("num-cse'd", "Number of operations CSE'd")
    num_dce = Statistic("num-dce'd", "Number of operations DCE'd")

    def run_on_operation(self) -> None:
        symbol = ir.symbol_name(self.get_operation()) or ""
        self.num_cse, self.num_dce = CSE_COUNTS.get(symbol, (0, 0))


class Canonicalizer(OperationPass):
    argument = "canonicalize"

    def run_on_operation(self) -> None:
        pass


class SymbolDCE(OperationPass):
    argument = "symbol-dce"
    op_name = "builtin.module"
    num_dce = Statistic("num-dce'd", "Number of symbols DCE'd")

    def run_on_operation(self) -> None:
        self.num_dce = 0


def nested_pipeline() -> PassManager:
    """`builtin.module(func.func(cse,canonicalize),builtin.module(cse,func.func(cse)),symbol-dce)`"""
    pm = PassManager()
    functions = pm.nest("func.func")
    functions.add(CSE())
    functions.add(Canonicalizer())
    module = pm.nest("builtin.module")
    module.add(CSE())
    module.nest("func.func").add(CSE())
    pm.add(SymbolDCE())
    return pm


# mlir-opt g.mlir -p '<nested_pipeline>' --mlir-disable-threading
#   --mlir-pass-statistics --mlir-pass-statistics-display=pipeline
MLIR_OPT_PIPELINE = (
    HEADER
    + """\
Pipeline Collection : ['builtin.module', 'func.func']
  'builtin.module' Pipeline
    CSE
      (S) 0 num-cse'd - Number of operations CSE'd
      (S) 0 num-dce'd - Number of operations DCE'd
    'func.func' Pipeline
      CSE
        (S) 0 num-cse'd - Number of operations CSE'd
        (S) 0 num-dce'd - Number of operations DCE'd
  'func.func' Pipeline
    CSE
      (S)  2 num-cse'd - Number of operations CSE'd
      (S) 10 num-dce'd - Number of operations DCE'd
    Canonicalizer
SymbolDCE
  (S) 0 num-dce'd - Number of symbols DCE'd

"""
)

# Same run with --mlir-pass-statistics-display=list.
MLIR_OPT_LIST = (
    HEADER
    + """\
  CSE
    (S)  2 num-cse'd - Number of operations CSE'd
    (S) 10 num-dce'd - Number of operations DCE'd
  SymbolDCE
    (S) 0 num-dce'd - Number of symbols DCE'd

"""
)


def test_pipeline_view_matches_mlir_opt(parse: Parse) -> None:
    pm = nested_pipeline()
    pm.run(parse(NESTED_INPUT))
    assert statistics_report(pm) == MLIR_OPT_PIPELINE


def test_list_view_matches_mlir_opt(parse: Parse) -> None:
    pm = nested_pipeline()
    pm.run(parse(NESTED_INPUT))
    assert statistics_report(pm, "list") == MLIR_OPT_LIST


def test_pipeline_view_before_any_run_shows_the_declared_tree() -> None:
    # `func.func(cse),any(canonicalize)` are two adaptors until a run merges them.
    pm = PassManager()
    pm.nest("func.func").add(CSE())
    pm.nest("any").add(Canonicalizer())
    assert statistics_report(pm) == HEADER + (
        "'func.func' Pipeline\n"
        "  CSE\n"
        "    (S) 0 num-cse'd - Number of operations CSE'd\n"
        "    (S) 0 num-dce'd - Number of operations DCE'd\n"
        "'any' Pipeline\n"
        "  Canonicalizer\n"
        "\n"
    )


def test_statistics_sorted_by_name_and_aligned(parse: Parse) -> None:
    # TestStatisticPass declares num-ops2 before num-ops.
    pm = PassManager()
    pm.nest("func.func").add(TestStatisticPass())
    pm.run(parse(NESTED_INPUT))
    # Each function has 2 ops (func.func and func.return), two functions: 4.
    assert statistics_report(pm) == HEADER + (
        "'func.func' Pipeline\n"
        "  TestStatisticPass\n"
        "    (S) 4 num-ops  - Number of operations counted\n"
        "    (S) 4 num-ops2 - Number of operations counted one more time\n"
        "\n"
    )


class Counter(OperationPass):
    """Adds a fixed amount to wide-ranging statistics, to check alignment."""

    argument = "counter"
    zeta = Statistic("z", "last by name")
    alpha = Statistic("a-long-name", "first by name")

    def __init__(self, amount: int = 1) -> None:
        super().__init__()
        self.amount = amount

    def run_on_operation(self) -> None:
        self.zeta += self.amount * 1000
        self.alpha += self.amount


def test_list_view_groups_by_pass_name_and_sums(parse: Parse) -> None:
    pm = PassManager()
    pm.add(Counter(1))
    functions = pm.nest("func.func")
    functions.add(Counter(2))
    functions.add(Canonicalizer())
    functions.add(TestStatisticPass())
    pm.run(parse(NESTED_INPUT))
    # Module: 1 + 1000; two functions with amount 2: 4 + 4000; summed.
    assert statistics_report(pm, "list") == HEADER + (
        "  Counter\n"
        "    (S)    5 a-long-name - first by name\n"
        "    (S) 5000 z           - last by name\n"
        "  TestStatisticPass\n"
        "    (S) 4 num-ops  - Number of operations counted\n"
        "    (S) 4 num-ops2 - Number of operations counted one more time\n"
        "\n"
    )


def test_unknown_display_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown statistics display 'tree'"):
        statistics_report(PassManager(), "tree")  # type: ignore[arg-type]
