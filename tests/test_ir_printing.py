"""IR printing around passes (reference §9): filters, headers and blank lines of
mlir-opt 22.1.8, after-change, after-failure, module scope and the tree directory.

Bodies are passflow's (xDSL's) printing of the op; headers and the blank lines
around them are compared byte for byte with mlir-opt's.
"""

from __future__ import annotations

import dataclasses
import io
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from xdsl.dialects import arith, builtin

from passflow import OperationPass, PassManager, PassPipelineError, ir
from passflow.instruments import IRPrinterConfig, IRPrinterInstrumentation
from passflow.testing import TestInvalidIRPass

Parse = Callable[[str], ir.ModuleOp]

TWO_FUNCTIONS = """\
func.func @foo(%a: i32) -> i32 {
  func.return %a : i32
}
func.func @bar(%a: i32) -> i32 {
  func.return %a : i32
}
"""


class Unchanged(OperationPass):
    """Leaves the IR alone."""

    def run_on_operation(self) -> None:
        pass


class CSE(Unchanged):
    name = "CSE"
    argument = "cse"


class Canonicalizer(Unchanged):
    name = "Canonicalizer"
    argument = "canonicalize"


class SymbolDCE(Unchanged):
    name = "SymbolDCE"
    argument = "symbol-dce"
    op_name = "builtin.module"


class AddConstantToFoo(OperationPass):
    """Changes @foo only: prepends an `arith.constant`."""

    name = "AddConstant"
    argument = "add-constant"

    def run_on_operation(self) -> None:
        op = self.get_operation()
        if ir.symbol_name(op) != "foo":
            return
        block = op.regions[0].blocks.first
        assert block is not None and block.first_op is not None
        block.insert_op_before(
            arith.ConstantOp(builtin.IntegerAttr(0, builtin.i32)), block.first_op
        )


class FailOnFoo(OperationPass):
    name = "Canonicalizer"
    argument = "canonicalize"

    def run_on_operation(self) -> None:
        if ir.symbol_name(self.get_operation()) == "foo":
            self.signal_pass_failure()


def run_printing(
    pm: PassManager, module: ir.ModuleOp, config: IRPrinterConfig
) -> tuple[str, bool]:
    """Run `pm` on `module` printing to a buffer; the dumps and whether it succeeded."""
    stream = io.StringIO()
    pm.add_instrumentation(
        IRPrinterInstrumentation(dataclasses.replace(config, stream=stream))
    )
    try:
        pm.run(module)
    except PassPipelineError:
        return stream.getvalue(), False
    return stream.getvalue(), True


def nested(op: ir.Operation) -> str:
    """How a dump shows an op nested in a block: its print and one blank line."""
    return ir.print_op(op) + "\n\n"


def top_level(op: ir.Operation) -> str:
    """A top-level op's print ends with a newline: two blank lines follow."""
    return ir.print_op(op) + "\n\n\n"


def test_before_and_after_all_layout_matches_mlir_opt(parse: Parse) -> None:
    # mlir-opt f.mlir --mlir-disable-threading --mlir-print-ir-before=cse
    #   --mlir-print-ir-after-all -p 'builtin.module(func.func(cse,canonicalize),symbol-dce)'
    module = parse(TWO_FUNCTIONS)
    foo, bar = ir.direct_children(module)
    pm = PassManager()
    functions = pm.nest("func.func")
    functions.add(CSE())
    functions.add(Canonicalizer())
    pm.add(SymbolDCE())
    text, ok = run_printing(pm, module, IRPrinterConfig(before=["cse"], after_all=True))
    assert ok
    assert text == (
        "// -----// IR Dump Before CSE (cse) //----- //\n"
        + nested(foo)
        + "// -----// IR Dump After CSE (cse) //----- //\n"
        + nested(foo)
        + "// -----// IR Dump After Canonicalizer (canonicalize) //----- //\n"
        + nested(foo)
        + "// -----// IR Dump Before CSE (cse) //----- //\n"
        + nested(bar)
        + "// -----// IR Dump After CSE (cse) //----- //\n"
        + nested(bar)
        + "// -----// IR Dump After Canonicalizer (canonicalize) //----- //\n"
        + nested(bar)
        + "// -----// IR Dump After SymbolDCE (symbol-dce) //----- //\n"
        + top_level(module)
    )


def test_filters_match_every_instance_by_argument(parse: Parse) -> None:
    module = parse(TWO_FUNCTIONS)
    pm = PassManager()
    functions = pm.nest("func.func")
    functions.add(CSE())
    functions.add(Canonicalizer())
    functions.add(CSE())
    text, _ = run_printing(pm, module, IRPrinterConfig(after=["cse"]))
    headers = [line for line in text.splitlines() if line.startswith("// -----//")]
    assert headers == ["// -----// IR Dump After CSE (cse) //----- //"] * 4


def test_after_change_prints_only_changed_ops(
    parse: Parse, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = parse(TWO_FUNCTIONS)
    fingerprinted: list[str] = []
    fingerprint = ir.fingerprint

    def recording(op: ir.Operation) -> int:
        fingerprinted.append(ir.operation_name(op).name)
        return fingerprint(op)

    monkeypatch.setattr(ir, "fingerprint", recording)
    pm = PassManager()
    functions = pm.nest("func.func")
    functions.add(AddConstantToFoo())
    functions.add(Canonicalizer())
    pm.add(SymbolDCE())
    text, _ = run_printing(
        pm, module, IRPrinterConfig(after_all=True, after_change=True)
    )
    foo = ir.direct_children(module)[0]
    assert text == (
        "// -----// IR Dump After AddConstant (add-constant) //----- //\n" + nested(foo)
    )
    # Only the pass's own op is fingerprinted, never the module for a
    # function pass (the module is fingerprinted for SymbolDCE alone).
    assert fingerprinted == ["func.func"] * 8 + ["builtin.module"] * 2


def test_after_change_skips_fingerprints_for_passes_not_printed(
    parse: Parse, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[ir.Operation] = []

    def recording(op: ir.Operation) -> int:
        calls.append(op)
        return 0

    monkeypatch.setattr(ir, "fingerprint", recording)
    pm = PassManager()
    pm.nest("func.func").add(CSE())
    run_printing(
        pm,
        parse(TWO_FUNCTIONS),
        IRPrinterConfig(after=["canonicalize"], after_change=True),
    )
    assert calls == []


def test_after_failure_prints_only_the_failed_pass(parse: Parse) -> None:
    # mlir-opt --mlir-print-ir-after-failure on canonicalize{max-iterations=1
    # test-convergence=true}, which fails on @foo only.
    module = parse(TWO_FUNCTIONS)
    pm = PassManager()
    functions = pm.nest("func.func")
    functions.add(CSE())
    functions.add(FailOnFoo())
    text, ok = run_printing(pm, module, IRPrinterConfig(after_failure=True))
    assert not ok
    foo = ir.direct_children(module)[0]
    assert text == (
        "// -----// IR Dump After Canonicalizer Failed (canonicalize) //----- //\n"
        + nested(foo)
    )


def test_after_all_also_shows_failures_even_with_after_change(parse: Parse) -> None:
    module = parse(TWO_FUNCTIONS)
    pm = PassManager()
    pm.nest("func.func").add(FailOnFoo())
    text, _ = run_printing(
        pm, module, IRPrinterConfig(after_all=True, after_change=True)
    )
    assert text.splitlines()[0] == (
        "// -----// IR Dump After Canonicalizer Failed (canonicalize) //----- //"
    )
    assert text.count("// -----//") == 1  # @bar is unchanged


def test_invalid_ir_after_failure_is_printed_generically(parse: Parse) -> None:
    module = parse(TWO_FUNCTIONS)
    pm = PassManager()
    pm.nest("func.func").add(TestInvalidIRPass(signal_pass_failure_=True))
    text, ok = run_printing(pm, module, IRPrinterConfig(after_failure=True))
    assert not ok
    header = (
        "// -----// IR Dump After TestInvalidIRPass Failed "
        "(test-pass-create-invalid-ir) //----- //\n"
    )
    foo, bar = ir.direct_children(module)
    assert text == (
        header
        + ir.print_op(foo, generic=True)
        + "\n\n"
        + header
        + ir.print_op(bar, generic=True)
        + "\n\n"
    )
    assert text.splitlines()[1].startswith('"func.func"()')


def test_module_scope_prints_the_top_level_op_with_mlir_headers(parse: Parse) -> None:
    # mlir-opt --mlir-disable-threading --mlir-print-ir-after-all
    #   --mlir-print-ir-module-scope
    module = parse(TWO_FUNCTIONS)
    pm = PassManager()
    pm.nest("func.func").add(CSE())
    pm.add(SymbolDCE())
    text, _ = run_printing(
        pm,
        module,
        IRPrinterConfig(before=["symbol-dce"], after=["cse"], module_scope=True),
    )
    assert text == (
        "// -----// IR Dump After CSE (cse) ('func.func' operation: @foo) //----- //\n"
        + top_level(module)
        + "// -----// IR Dump After CSE (cse) ('func.func' operation: @bar) //----- //\n"
        + top_level(module)
        + "// -----// IR Dump Before SymbolDCE (symbol-dce) "
        "('builtin.module' operation) //----- //\n" + top_level(module)
    )


def test_nothing_is_enabled_without_a_filter() -> None:
    assert not IRPrinterConfig(after_change=True, module_scope=True).enabled
    assert IRPrinterConfig(after_failure=True).enabled
    assert IRPrinterConfig(before=["cse"]).enabled


NESTED_INPUT = """\
func.func @foo() {
  func.return
}
builtin.module @inner {
  func.func @bar() {
    func.return
  }
}
"""


def nested_pipeline() -> PassManager:
    """`builtin.module(func.func(cse,canonicalize),symbol-dce,
    builtin.module(func.func(cse)),func.func(cse))`"""
    pm = PassManager()
    functions = pm.nest("func.func")
    functions.add(CSE())
    functions.add(Canonicalizer())
    pm.add(SymbolDCE())
    pm.nest("builtin.module").nest("func.func").add(CSE())
    pm.nest("func.func").add(CSE())
    return pm


def test_tree_dir_layout_matches_mlir_opt(parse: Parse, tmp_path: Path) -> None:
    # mlir-opt --mlir-print-ir-before-all --mlir-print-ir-after-all
    #   --mlir-print-ir-tree-dir=d on the same pipeline and input.
    module = parse(NESTED_INPUT)
    text, ok = run_printing(
        nested_pipeline(),
        module,
        IRPrinterConfig(before_all=True, after_all=True, tree_dir=str(tmp_path / "d")),
    )
    assert ok and text == ""
    files = sorted(
        os.path.relpath(os.path.join(root, name), tmp_path)
        for root, _, names in os.walk(tmp_path)
        for name in names
    )
    top = "d/builtin_module_no-symbol-name"
    assert files == [
        f"{top}/1_symbol-dce.mlir",
        f"{top}/2_symbol-dce.mlir",
        f"{top}/builtin_module_inner/func_func_bar/2_0_0_cse.mlir",
        f"{top}/builtin_module_inner/func_func_bar/2_0_1_cse.mlir",
        f"{top}/func_func_foo/0_0_cse.mlir",
        f"{top}/func_func_foo/0_1_cse.mlir",
        f"{top}/func_func_foo/0_2_canonicalize.mlir",
        f"{top}/func_func_foo/0_3_canonicalize.mlir",
        f"{top}/func_func_foo/2_4_cse.mlir",
        f"{top}/func_func_foo/2_5_cse.mlir",
    ]
    foo = ir.direct_children(module)[0]
    assert (tmp_path / top / "func_func_foo" / "0_0_cse.mlir").read_text() == (
        "// -----// IR Dump Before CSE (cse) //----- //\n" + nested(foo)
    )
    assert (tmp_path / top / "1_symbol-dce.mlir").read_text() == (
        "// -----// IR Dump Before SymbolDCE (symbol-dce) //----- //\n"
        + top_level(module)
    )


def test_tree_dir_errors_are_reported_and_the_dump_skipped(
    parse: Parse, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A file where the top-level directory should be, as in mlir-opt's run:
    # creating the nested directory fails, opening the module's dump fails.
    (tmp_path / "builtin_module_no-symbol-name").write_text("")
    pm = PassManager()
    pm.nest("func.func").add(CSE())
    pm.add(SymbolDCE())
    _, ok = run_printing(
        pm, parse(NESTED_INPUT), IRPrinterConfig(after_all=True, tree_dir=str(tmp_path))
    )
    assert ok
    top = f"{tmp_path}/builtin_module_no-symbol-name"
    assert capsys.readouterr().err == (
        f"Error while creating directory {top}/func_func_foo: Not a directory\n"
        f"Error opening output file {top}/1_symbol-dce.mlir: cannot open output "
        f"file '{top}/1_symbol-dce.mlir': Not a directory\n"
    )


def test_tree_dir_file_names_never_hold_separators_or_nul(
    parse: Parse, tmp_path: Path
) -> None:
    # A symbol name may hold any byte; the OS refuses NUL in a path, which used
    # to abort the whole run.
    module = parse(
        'func.func @"a\\00b/c\\\\d"() {\n  func.return\n}\n'
        "func.func @ok() {\n  func.return\n}\n"
    )
    pm = PassManager()
    pm.nest("func.func").add(CSE())
    _, ok = run_printing(
        pm, module, IRPrinterConfig(after_all=True, tree_dir=str(tmp_path))
    )
    assert ok
    top = tmp_path / "builtin_module_no-symbol-name"
    assert sorted(p.name for p in top.iterdir()) == [
        "func_func_a_b_c_d",
        "func_func_ok",
    ]
    assert (top / "func_func_a_b_c_d" / "0_0_cse.mlir").exists()


def test_default_stream_is_stderr_at_dump_time(
    parse: Parse, capsys: pytest.CaptureFixture[str]
) -> None:
    pm = PassManager()
    pm.add(SymbolDCE())
    pm.add_instrumentation(IRPrinterInstrumentation(IRPrinterConfig(after_all=True)))
    module = parse(TWO_FUNCTIONS)
    pm.run(module)
    assert capsys.readouterr().err == (
        "// -----// IR Dump After SymbolDCE (symbol-dce) //----- //\n"
        + top_level(module)
    )
