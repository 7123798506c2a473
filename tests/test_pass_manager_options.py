"""passflow.tools.pass_manager_options: mlir-opt's pass-manager flags as a layer a
tool of its own can use (MLIR's `PassManagerOptions.cpp`), with one rule for
"threading disabled" across the command line and the pass manager."""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest

import passflow
from passflow import PassManager
from passflow.diagnostics import PassflowError
from passflow.execution import ChildExecutor
from passflow.executors import ProcessExecutor, SerialExecutor, ThreadExecutor
from passflow.instruments.ir_printing import IRPrinterConfig
from passflow.pipeline_text import parse_pass_pipeline
from passflow.tools import opt
from passflow.tools.command_line import CommandLineError, FlagParser
from passflow.tools.hints import THREADING_NOTE
from passflow.tools.pass_manager_options import (
    LOCAL_REPRODUCER_THREADING_ERROR,
    MODULE_SCOPE_THREADING_TOOL_ERROR,
    PassManagerOptions,
    add_pass_manager_flags,
)

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide.md"
INPUT = """\
func.func @foo() -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.constant 1 : i32
  %c = arith.addi %a, %b : i32
  func.return %c : i32
}
"""
FIX = f"<unknown>:0: note: {THREADING_NOTE}\n"  # how to fix it, after mlir-opt's line
MODULE_SCOPE_REFUSED = f"<unknown>:0: error: {MODULE_SCOPE_THREADING_TOOL_ERROR}\n{FIX}"
LOCAL_REFUSED = f"<unknown>:0: error: {LOCAL_REPRODUCER_THREADING_ERROR}\n{FIX}"
SERIAL_FLAGS = [
    ["--mlir-disable-threading"],
    ["--executor=serial"],
    ["--jobs=1"],
    ["--executor=thread", "--jobs=1"],
    ["--executor=process", "--jobs=1"],
]
THREADED_FLAGS = [
    ["--executor=thread", "--jobs=2"],
    ["--executor=process", "--jobs=2"],
]


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "in.mlir"
    path.write_text(INPUT)
    return path


def parse(argv: list[str]) -> PassManagerOptions:
    parser = FlagParser(prog="tool")
    add_pass_manager_flags(parser)
    return PassManagerOptions.from_args(parser.parse_command_line(argv))


# --- the layer ----------------------------------------------------------------


def test_no_flags_are_the_defaults() -> None:
    assert parse([]) == PassManagerOptions()


def test_every_flag_is_read() -> None:
    options = parse(
        [
            "-verify-each=false",
            "--mlir-pass-pipeline-crash-reproducer=r.mlir",
            "--mlir-pass-pipeline-local-reproducer",
            "--mlir-pass-statistics",
            "--mlir-pass-statistics-display=list",
            "--mlir-print-ir-before=cse,canonicalize",
            "--mlir-print-ir-before=symbol-dce",
            "--mlir-print-ir-after=cse",
            "--mlir-print-ir-before-all",
            "--mlir-print-ir-after-all",
            "--mlir-print-ir-after-change",
            "--mlir-print-ir-after-failure",
            "--mlir-unsafe-print-assume-verified",
            "--mlir-print-ir-module-scope",
            "--mlir-print-ir-tree-dir=dumps",
            "--mlir-disable-threading",
            "--executor=thread",
            "--jobs=3",
            "--scheduler=tcp://host:8786",
            "--progress",
        ]
    )
    assert options == PassManagerOptions(
        verify_each=False,
        crash_reproducer="r.mlir",
        local_reproducer=True,
        statistics=True,
        statistics_display="list",
        print_ir=IRPrinterConfig(
            before=("cse", "canonicalize", "symbol-dce"),
            after=("cse",),
            before_all=True,
            after_all=True,
            after_change=True,
            after_failure=True,
            module_scope=True,
            tree_dir="dumps",
            assume_verified=True,
        ),
        disable_threading=True,
        executor_kind="thread",
        jobs=3,
        scheduler="tcp://host:8786",
        progress=True,
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--mlir-pass-statistics-display=tree", "--mlir-print-ir-before=nope"],
            "for the --mlir-pass-statistics-display option: Cannot find option "
            "named 'tree'!",
        ),
        (
            ["--mlir-print-ir-after=nope", "--mlir-print-ir-before=cse,nope2"],
            "for the --mlir-print-ir-before option: Cannot find option named 'nope2'!",
        ),
        (
            ["--mlir-print-ir-after=nope"],
            "for the --mlir-print-ir-after option: Cannot find option named 'nope'!",
        ),
        (
            ["--no-such-flag"],
            "Unknown command line argument '--no-such-flag'.  Try: 'tool --help'",
        ),
    ],
)
def test_bad_values_are_llvm_cl_errors(argv: list[str], message: str) -> None:
    with pytest.raises(CommandLineError) as caught:
        parse(argv)
    assert str(caught.value).splitlines()[0] == message  # then how to fix it
    assert isinstance(caught.value, PassflowError)


@pytest.mark.parametrize(
    ("argv", "kind"),
    [
        (["--mlir-disable-threading", "--executor=thread", "--jobs=4"], None),
        (["--executor=serial"], SerialExecutor),
        (["--executor=thread", "--jobs=1"], SerialExecutor),
        (["--executor=thread", "--jobs=2"], ThreadExecutor),
        (["--executor=process", "--jobs=2"], ProcessExecutor),
    ],
)
def test_make_executor(argv: list[str], kind: type[ChildExecutor] | None) -> None:
    executor = parse(argv).make_executor()
    try:
        assert (None if executor is None else type(executor)) is kind
    finally:
        if executor is not None:
            executor.close()


def test_make_executor_errors_are_make_executors() -> None:
    with pytest.raises(PassflowError, match="the number of jobs must be at least 1"):
        parse(["--jobs=0"]).make_executor()
    with pytest.raises(PassflowError, match="a scheduler address needs the dask"):
        parse(["--executor=thread", "--scheduler=tcp://h:1"]).make_executor()


def serial_executors() -> list[ChildExecutor | None]:
    return [None, SerialExecutor(), ThreadExecutor(1), ProcessExecutor(1)]


@pytest.mark.parametrize("index", range(4))
def test_apply_accepts_module_scope_and_local_reproducer_without_threads(
    index: int, tmp_path: Path
) -> None:
    executor = serial_executors()[index]
    options = PassManagerOptions(
        crash_reproducer=str(tmp_path / "r.mlir"),
        local_reproducer=True,
        print_ir=IRPrinterConfig(before_all=True, module_scope=True),
    )
    pm = PassManager(executor=executor)
    assert pm.threading_disabled
    options.check_executor(executor)
    options.apply(pm)
    pm.close()


@pytest.mark.parametrize("kind", [ThreadExecutor, ProcessExecutor])
def test_apply_refuses_them_with_threads(kind: type[ThreadExecutor]) -> None:
    pm = PassManager(executor=kind(2))
    try:
        module_scope = PassManagerOptions(print_ir=IRPrinterConfig(module_scope=True))
        with pytest.raises(PassflowError) as caught:
            module_scope.apply(pm)
        assert str(caught.value) == MODULE_SCOPE_THREADING_TOOL_ERROR
        local = PassManagerOptions(crash_reproducer="r.mlir", local_reproducer=True)
        with pytest.raises(PassflowError) as caught:
            local.apply(pm)
        assert str(caught.value) == LOCAL_REPRODUCER_THREADING_ERROR
        with pytest.raises(PassflowError):
            local.check_executor(pm.executor)
    finally:
        pm.close()


def test_apply_sets_the_verifier_and_prints_statistics(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from passflow import ir

    pm = PassManager()
    pm.assign(parse_pass_pipeline("builtin.module(func.func(cse))"))
    PassManagerOptions(verify_each=False, statistics=True).apply(pm)
    assert not pm.verify_each
    pm.run(ir.parse_module(INPUT, pm.context))
    assert "... Pass statistics report ..." in capsys.readouterr().err


def test_tools_read_no_private_argparse_fields() -> None:
    private = re.compile(
        r"\._(actions|option_string_actions|optionals|positionals|defaults|"
        r"registries|action_groups|mutually_exclusive_groups|get_\w+)\b"
    )
    offenders = [
        f"{path.name}:{number}"
        for path in sorted((ROOT / "src" / "passflow" / "tools").glob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if private.search(line)
    ]
    assert offenders == []


# --- passflow-opt: one rule for "threading disabled" ---------------------------


def run_opt(source: Path, *argv: str) -> int:
    return opt.main([str(source), *argv, "-o", str(source.with_suffix(".out"))])


@pytest.mark.parametrize("flags", SERIAL_FLAGS)
def test_module_scope_printing_needs_only_threading_disabled(
    flags: list[str], source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["-p", "builtin.module(func.func(cse))", "--mlir-print-ir-before=cse"]
    assert run_opt(source, *argv, "--mlir-print-ir-module-scope", *flags) == 0
    err = capsys.readouterr().err
    assert err.startswith(
        "// -----// IR Dump Before CSE (cse) ('func.func' operation: @foo) //----- //\n"
        "builtin.module {\n"
    )


@pytest.mark.parametrize("flags", [*THREADED_FLAGS, []])
def test_module_scope_printing_is_refused_with_threads(
    flags: list[str], source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if not flags and PassManagerOptions().make_executor() is None:
        pytest.skip("the default executor is serial here")
    argv = ["-p", "builtin.module(func.func(cse))", "--mlir-print-ir-before=cse"]
    assert run_opt(source, *argv, "--mlir-print-ir-module-scope", *flags) == 1
    assert capsys.readouterr().err == MODULE_SCOPE_REFUSED


@pytest.mark.parametrize("flags", SERIAL_FLAGS)
def test_local_reproducer_needs_only_threading_disabled(
    flags: list[str], source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reproducer = source.with_name("r.mlir")
    argv = [
        "-p",
        "builtin.module(func.func(cse,test-pass-failure))",
        f"--mlir-pass-pipeline-crash-reproducer={reproducer}",
        "--mlir-pass-pipeline-local-reproducer",
    ]
    assert run_opt(source, *argv, *flags) == 1
    err = capsys.readouterr().err
    assert "note: Pipeline failed while executing `TestFailurePass`" in err
    text = reproducer.read_text()
    assert 'pipeline: "builtin.module(func.func(test-pass-failure' in text
    assert "disable_threading: true" in text


@pytest.mark.parametrize("flags", THREADED_FLAGS)
def test_local_reproducer_is_refused_with_threads(
    flags: list[str], source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reproducer = source.with_name("r.mlir")
    argv = [
        "-p",
        "builtin.module(func.func(test-pass-failure))",
        f"--mlir-pass-pipeline-crash-reproducer={reproducer}",
        "--mlir-pass-pipeline-local-reproducer",
    ]
    assert run_opt(source, *argv, *flags) == 1
    assert capsys.readouterr().err == LOCAL_REFUSED
    assert not reproducer.exists()


@pytest.mark.parametrize(
    "pipeline",
    [
        "any(cse)",
        "builtin.module(func.func(cse),any(canonicalize),symbol-dce)",
        "builtin.module(cse, canonicalize)",
    ],
)
def test_generated_reproducer_pipeline_is_the_pass_managers_text(
    pipeline: str, source: Path
) -> None:
    """mlir-opt 22 writes `printAsTextualPipeline` of its pass manager (anchor
    included, `,` between passes): `str(pm)`."""
    reproducer = source.with_name("generated.mlir")
    argv = ["-p", pipeline, f"--mlir-generate-reproducer={reproducer}"]
    assert run_opt(source, *argv) == 0
    written = re.search(r'pipeline: "(.*)",', reproducer.read_text())
    assert written is not None
    assert written[1] == str(parse_pass_pipeline(pipeline))


# --- the guide's example tool -------------------------------------------------


def guide_tool() -> Callable[[list[str]], int]:
    """`main` of the tool in docs/guide.md ("Your own tool: the pass-manager flags")."""
    section = GUIDE.read_text().split("## Your own tool: the pass-manager flags")[1]
    code = re.search(r"```python[^\n]*\n(.*?)```", section, re.DOTALL)
    assert code is not None
    namespace: dict[str, object] = {"__name__": "my_opt"}
    exec(compile(code[1], str(GUIDE), "exec"), namespace)
    return cast(Callable[[list[str]], int], namespace["main"])


def test_guide_tool_runs_with_the_flags(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main = guide_tool()
    argv = [str(source), "-mlir-print-ir-after-all", "--mlir-pass-statistics"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "%c = arith.constant 2 : i32" in out  # canonicalize folded the addition
    assert "// -----// IR Dump After Canonicalizer (canonicalize) //----- //" in err
    assert "// -----// IR Dump After CSE (cse) //----- //" in err
    assert "... Pass statistics report ..." in err


@pytest.mark.parametrize("flags", SERIAL_FLAGS)
def test_guide_tool_prints_module_scope_without_threads(
    flags: list[str], source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main = guide_tool()
    argv = [str(source), "-p", "builtin.module(func.func(cse))"]
    assert (
        main(
            [
                *argv,
                "--mlir-print-ir-before-all",
                "--mlir-print-ir-module-scope",
                *flags,
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert err.startswith(
        "// -----// IR Dump Before CSE (cse) ('func.func' operation: @foo) //----- //\n"
        "builtin.module {\n"
    )


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (
            ["--mlir-print-ir-module-scope", "--executor=thread", "--jobs=2"],
            f"my-opt: {MODULE_SCOPE_THREADING_TOOL_ERROR}\n",
        ),
        (
            ["--mlir-print-ir-before=nope"],
            "my-opt: for the --mlir-print-ir-before option: Cannot find option "
            "named 'nope'!\n",
        ),
        (
            ["-no-such-flag"],
            "my-opt: Unknown command line argument '--no-such-flag'.  "
            "Try: 'my-opt --help'\n",
        ),
        (["--jobs=0"], "my-opt: the number of jobs must be at least 1, got 0\n"),
    ],
)
def test_guide_tool_reports_errors(
    flags: list[str], message: str, source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert guide_tool()([str(source), *flags]) == 1
    assert capsys.readouterr().err == message


def test_version_prints_passflows_and_xdsls_versions(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert opt.main(["--version"]) == 0
    assert capsys.readouterr().out == (
        f"passflow:\n  passflow version {passflow.__version__}\n"
        f"  xDSL version {importlib.metadata.version('xdsl')}\n"
    )
    assert passflow.__version__ == importlib.metadata.version("passflow")
