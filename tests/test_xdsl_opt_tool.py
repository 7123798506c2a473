"""passflow-xdsl-opt in process: the same output as xDSL's own `xDSLOptMain`, the
passes run by passflow's pass manager, and a subclass's registrations."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.xdsl_opt_main import xDSLOptMain

from passflow.tools.xdsl_opt import PassflowXDSLOptMain, main

SOURCE = """\
func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  %1 = arith.addi %a, %a : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}
"""


@pytest.fixture
def source(tmp_path: Path) -> Path:
    path = tmp_path / "in.mlir"
    path.write_text(SOURCE)
    return path


@pytest.mark.parametrize(
    "flags",
    [
        ["-p", "cse,dce", "--print-between-passes"],
        ["-p", "arith-add-fastmath{flags=fast}", "--print-op-generic"],
        ["--split-input-file", "-p", "canonicalize"],
    ],
)
def test_prints_what_xdsl_opt_prints(
    source: Path, flags: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    xDSLOptMain(args=[str(source), *flags]).run()
    expected = capsys.readouterr().out
    assert main([str(source), *flags]) == 0
    assert capsys.readouterr().out == expected


def test_the_passes_run_in_a_passflow_pass_manager(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`symbol-dce` is passflow's alone, and `--time-passes` names each pass
    as it ran."""
    assert main([str(source), "-p", "cse,symbol-dce", "--time-passes"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Pass cse took ")
    assert out[1].startswith("Pass symbol-dce took ")


def test_unknown_passes_are_one_line(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([str(source), "-p", "nope,cse,other"]) == 1
    err = capsys.readouterr().err
    assert err == "ValueError: Unrecognized passes: ['nope', 'other']\n"


@dataclass(frozen=True)
class OwnPass(ModulePass):
    """A project's pass: tags the module, `tag` its option."""

    name = "own-pass"
    tag: str = "seen"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        op.attributes["own"] = StringAttr(self.tag)


class ProjectOptMain(PassflowXDSLOptMain):
    def register_all_passes(self) -> None:
        super().register_all_passes()
        self.register_pass(OwnPass.name, lambda: OwnPass)


def test_a_subclass_keeps_xdsls_passes(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ProjectOptMain(args=[str(source), "-p", "cse"]).run()
    assert capsys.readouterr().out.count("arith.addi") == 1


def test_a_subclass_pass_runs_under_passflow_with_its_options(
    source: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ProjectOptMain(args=[str(source), "-p", "own-pass{tag=mine},cse"]).run()
    out = capsys.readouterr().out
    assert 'own = "mine"' in out
    assert out.count("arith.addi") == 1
