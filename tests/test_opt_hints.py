"""passflow-opt's messages say how to fix things: mlir-opt's first line, unchanged,
then a `note:` (or llvm::cl's own "Did you mean" line for a flag)."""

from __future__ import annotations

from pathlib import Path

import pytest

from passflow.tools import opt
from passflow.tools.hints import THREADING_NOTE

FUNCTIONS = "func.func @f(%x: i32) -> i32 {\n  func.return %x : i32\n}\n"


def run(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    *argv: str,
    source: str = FUNCTIONS,
) -> tuple[int, list[str]]:
    """Run passflow-opt on `source`; the exit status and the stderr lines."""
    path = tmp_path / "input.mlir"
    path.write_text(source)
    status = opt.main([str(path), *argv, "-o", str(tmp_path / "out.mlir")])
    return status, capsys.readouterr().err.splitlines()


def test_an_anchoring_error_says_which_pipeline_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = run(tmp_path, capsys, "-p", "func.func(cse)")
    assert status == 1
    assert lines == [
        f"{tmp_path}/input.mlir:0:0: error: can't run 'func.func' pass manager on "
        "'builtin.module' op",
        f"{tmp_path}/input.mlir:0:0: note: to run it on the 'func.func' ops in "
        "'builtin.module', write `builtin.module(func.func(cse))`",
    ]


def test_the_suggested_pipeline_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = run(tmp_path, capsys, "-p", "builtin.module(func.func(cse))")
    assert (status, lines) == (0, [])


def test_an_anchor_found_only_deeper_is_suggested_at_any_depth(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nested = f"module {{\n  module {{\n{FUNCTIONS}  }}\n}}\n"
    status, lines = run(tmp_path, capsys, "-p", "func.func(cse)", source=nested)
    assert status == 1
    assert "write `builtin.module(**func.func(cse))`" in lines[3]
    assert run(tmp_path, capsys, "-p", "builtin.module(**func.func(cse))")[0] == 0


def test_an_anchor_found_nowhere_names_the_top_level_op(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, lines = run(tmp_path, capsys, "-p", "func.func(cse)", source="")
    assert lines[1].endswith(
        "note: the input's top-level op is 'builtin.module', which holds no "
        "'func.func' op: anchor the pipeline on it, as `builtin.module(...)`"
    )


@pytest.mark.parametrize(
    "flags",
    [
        ["--mlir-pass-pipeline-local-reproducer"],
        ["--mlir-print-ir-module-scope", "--mlir-print-ir-after-all"],
    ],
)
def test_a_threading_refusal_names_the_flags_that_fix_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str]
) -> None:
    reproducer = f"--mlir-pass-pipeline-crash-reproducer={tmp_path}/r.mlir"
    argv = ["--executor=process", "--jobs=2", reproducer, *flags, "--cse"]
    status, lines = run(tmp_path, capsys, *argv)
    assert status == 1
    assert "without disabling multi-threading first" in lines[0]
    assert lines[-1] == f"<unknown>:0: note: {THREADING_NOTE}"
    for fix in ("--mlir-disable-threading", "--executor=serial", "--jobs=1"):
        assert fix in THREADING_NOTE
        assert run(tmp_path, capsys, *argv, fix)[0] == 0


@pytest.mark.parametrize(
    ("source", "first", "note"),
    [
        (
            '"foo.bar"() : () -> ()',
            "error: operation being parsed with an unregistered dialect.",
            "note: passflow-opt accepts ops of dialects it does not know, in generic "
            'form (`"dialect.op"(...) : (...) -> (...)`), with '
            "--allow-unregistered-dialect",
        ),
        (
            "foo.bar",
            "error: Dialect `foo' not found for custom op 'foo.bar' ",
            "note: an op of a dialect passflow-opt does not know has no custom form: "
            'write it in generic form (`"foo.bar"(...) : (...) -> (...)`) and pass '
            "--allow-unregistered-dialect",
        ),
        (
            "func.func @f() {\n  fnc.return\n}",
            "error: Dialect `fnc' not found for custom op 'fnc.return' ",
            "note: did you mean 'func.return'?",
        ),
        (
            "func.func @f() {\n  retrn\n}",
            "error: custom op 'retrn' is unknown (tried 'func.retrn' as well)",
            "note: did you mean 'func.return'?",
        ),
        (
            '"func.retrun"() : () -> ()',
            "error: unregistered operation 'func.retrun' found in dialect ('func') "
            "that does not allow unknown operations",
            "note: did you mean 'func.return'?",
        ),
        (
            '"func.zzz"() : () -> ()',
            "error: unregistered operation 'func.zzz' found in dialect ('func') "
            "that does not allow unknown operations",
            "note: the 'func' dialect has no such op; --allow-unregistered-dialect "
            "accepts it anyway",
        ),
    ],
)
def test_an_unknown_op_gets_a_note_after_mlir_opts_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    source: str,
    first: str,
    note: str,
) -> None:
    status, lines = run(tmp_path, capsys, source=source)
    assert status == 1
    assert lines[0].split(": ", 1)[1].startswith(first)
    notes = [line for line in lines if ": note: " in line]
    assert [line.split(": ", 1)[1] for line in notes] == [note]


def test_a_misspelt_flag_gets_llvm_cls_did_you_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        run(tmp_path, capsys, "-mlir-timng")
    assert exit_info.value.code == 1
    assert capsys.readouterr().err.splitlines() == [
        "passflow-opt: Unknown command line argument '--mlir-timng'.  "
        "Try: 'passflow-opt --help'",
        "passflow-opt: Did you mean '--mlir-timing'?",
    ]


def test_a_misspelt_pass_flag_keeps_its_options_in_the_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        run(tmp_path, capsys, "--cannonicalize=top-down=false")
    err = capsys.readouterr().err
    assert err.endswith("passflow-opt: Did you mean '--canonicalize=top-down=false'?\n")


def test_a_flag_like_nothing_gets_no_suggestion(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        run(tmp_path, capsys, "--zzzzzzzzzzzzzzzz")
    assert "Did you mean" not in capsys.readouterr().err


def test_a_misspelt_pass_in_a_pipeline_gets_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = run(tmp_path, capsys, "-p", "builtin.module(cannonicalize)")
    assert status == 1
    assert lines[0] == (
        "<unknown>:0: error: MLIR Textual PassPipeline Parser:1:1: error: "
        "'cannonicalize' does not refer to a registered pass or pass pipeline"
    )
    assert lines[-1] == "<unknown>:0: note: did you mean 'canonicalize'?"


def test_an_xdsl_pass_is_suggested_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, lines = run(tmp_path, capsys, "-p", "builtin.module(convert-arith-to-rscv)")
    assert lines[-1] == "<unknown>:0: note: did you mean 'convert-arith-to-riscv'?"


@pytest.mark.parametrize(
    "argv",
    [
        ["-p", "builtin.module(func.func(cse,canonicalize{top-dwn=false}))"],
        ["--canonicalize=top-dwn=false"],
    ],
)
def test_a_misspelt_option_gets_a_note_naming_its_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    status, lines = run(tmp_path, capsys, *argv)
    assert status == 1
    assert (
        lines[0] == "<unknown>:0: error: <Pass-Options-Parser>: no such option top-dwn"
    )
    assert lines[-1] == (
        "<unknown>:0: note: did you mean 'top-down' (an option of 'canonicalize')?"
    )


@pytest.mark.parametrize("fmt", ["dot", "json"])
def test_dump_pipeline_graph_without_a_graph_says_so_and_runs_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    status, lines = run(tmp_path, capsys, f"--dump-pipeline-graph={fmt}", "--cse")
    assert status == 0
    assert lines == [opt.NO_PIPELINE_GRAPH]
    assert (tmp_path / "out.mlir").read_text().startswith("builtin.module {")


def test_verify_diagnostics_sees_only_mlir_opts_diagnostics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = "func.func @f() {\n  retrn // expected-error {{custom op 'retrn' is unknown}}\n}\n"
    status, lines = run(tmp_path, capsys, "--verify-diagnostics", source=source)
    assert (status, lines) == (0, [])


# --- common mistakes: mlir-opt's first line, then the fix -----------------------


@pytest.mark.parametrize(
    ("argv", "first", "note"),
    [
        (
            ["-p", "builtin.module(func.func(cse{a=1,b=2}))"],
            "<unknown>:0: error: <Pass-Options-Parser>: no such option a",
            "MLIR separates a pass's options with spaces, not commas: write "
            "`cse{a=1 b=2}`",
        ),
        (
            ["-p", "builtin.module(canonicalize{max-iterations=3,top-down=false})"],
            "passflow-opt: for the --max-iterations option: '3,top-down=false' value "
            "invalid for long argument!",
            "MLIR separates a pass's options with spaces, not commas: write "
            "`canonicalize{max-iterations=3 top-down=false}`",
        ),
        (
            ["-p", "builtin.module(test-function-pass)"],
            "<unknown>:0: error: Can't add pass 'TestFunctionPass' restricted to "
            "'func.func' on a PassManager intended to run on 'builtin.module', did "
            "you intend to nest?",
            "'test-function-pass' runs on 'func.func' ops: nest it in a pipeline on "
            "them, as `builtin.module(func.func(test-function-pass))`",
        ),
        (
            ["-p", "builtin.module(func.func(test-module-pass))"],
            "<unknown>:0: error: Can't add pass 'TestModulePass' restricted to "
            "'builtin.module' on a PassManager intended to run on 'func.func', did "
            "you intend to nest?",
            "'test-module-pass' runs on the 'builtin.module' op itself, not on the "
            "'func.func' ops in it: move it out of `func.func(...)`, as "
            "`builtin.module(func.func(...),test-module-pass)`",
        ),
        (
            ["-p", "cse"],
            "<unknown>:0: error: expected pass pipeline to be wrapped with the anchor "
            "operation type, e.g. 'builtin.module(...)'",
            "a pass pipeline starts with the op it runs on: write `builtin.module(cse)`",
        ),
        (
            ["-p", "builtin.module(canonicalize{region-simplify=agressive})"],
            "passflow-opt: for the --region-simplify option: Cannot find option named "
            "'agressive'!",
            "did you mean 'region-simplify=aggressive'?",
        ),
        (
            ["--canonicalize=region-simplify=on"],
            "passflow-opt: for the --region-simplify option: Cannot find option named "
            "'on'!",
            "'region-simplify' (an option of 'canonicalize') takes one of: disabled, "
            "normal, aggressive",
        ),
        (
            ["-p", "builtin.module(canonicalize{max-iterations=many})"],
            "passflow-opt: for the --max-iterations option: 'many' value invalid for "
            "long argument!",
            "'max-iterations' (an option of 'canonicalize') takes an integer, as in "
            "`canonicalize{max-iterations=10}`",
        ),
        (
            ["-p", "builtin.module(cse{aggressive=true})"],
            "<unknown>:0: error: <Pass-Options-Parser>: no such option aggressive",
            "'cse' takes no options: write `cse`",
        ),
        (
            ["-p", "builtin.module(canonicalize{fast=1})"],
            "<unknown>:0: error: <Pass-Options-Parser>: no such option fast",
            "the options of 'canonicalize' are: top-down, region-simplify, "
            "max-iterations, max-num-rewrites, test-convergence, disable-patterns, "
            "enable-patterns",
        ),
        (
            ["-p", "builtin.module(lower-affine{fast=1})"],
            '<unknown>:0: error: <Pass-Options-Parser>: Provided arguments ["fast"] '
            "not found in expected arguments []",
            "'lower-affine' takes no options: write `lower-affine`",
        ),
    ],
)
def test_a_common_pipeline_mistake_gets_the_fix(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    first: str,
    note: str,
) -> None:
    status, lines = run(tmp_path, capsys, *argv)
    assert status == 1
    assert lines[0] == first
    assert lines[-1] == f"<unknown>:0: note: {note}"


@pytest.mark.parametrize("name", ["symbol-dce", "inline"])
def test_a_symbol_pass_under_func_func_says_where_it_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    status, lines = run(tmp_path, capsys, "-p", f"builtin.module(func.func({name}))")
    assert status == 1
    under = "SymbolDCE" if name == "symbol-dce" else "the inliner"
    path = f"{tmp_path}/input.mlir"
    assert lines[0] == (
        f"{path}:1:1: error: 'func.func' op  was scheduled to run under {under}, but "
        "does not define a symbol table"
    )
    assert lines[3] == (
        f"{path}:1:1: note: {name} runs on an op that defines a symbol table, such "
        f"as 'builtin.module': put it in that op's pipeline, as "
        f"`builtin.module({name})`, not in `func.func(...)`"
    )


@pytest.mark.parametrize(
    "pipeline",
    [
        "builtin.module(canonicalize{max-iterations=3 top-down=false})",
        "builtin.module(func.func(test-function-pass))",
        "builtin.module(func.func(cse),test-module-pass)",
        "builtin.module(canonicalize{region-simplify=aggressive})",
        "builtin.module(cse)",
        "builtin.module(symbol-dce)",
    ],
)
def test_the_fixes_the_notes_give_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], pipeline: str
) -> None:
    assert run(tmp_path, capsys, "-p", pipeline) == (0, [])


def test_hints_stay_out_of_verify_diagnostics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines = run(
        tmp_path, capsys, "-p", "builtin.module(cse{a=1,b=2})", "--verify-diagnostics"
    )
    assert status == 1
    assert not any(": note: " in line for line in lines)


def test_a_misspelt_pass_in_print_ir_after_gets_llvm_cls_did_you_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        run(tmp_path, capsys, "--cse", "--mlir-print-ir-after=csee")
    assert capsys.readouterr().err.splitlines() == [
        "passflow-opt: for the --mlir-print-ir-after option: Cannot find option "
        "named 'csee'!",
        "passflow-opt: Did you mean '--mlir-print-ir-after=cse'?",
    ]
