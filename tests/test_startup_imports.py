"""What passflow-opt imports to start: only what the run needs (issue 32).

Each test runs passflow-opt in a fresh interpreter (this one has imported
everything) and lists the modules it loaded. A one-function run of the
default executor needs the IR, the pass manager and the two passes it names;
the sliced-run machinery, Dask, the other executors, the instruments and
command-line layers no flag asked for, the builder, the graph, reduce and the
plugin scan are left unloaded. Timings are the bench's (`bench/startup.py`),
never asserted here.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ONE_FUNCTION = """\
func.func @f(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %0 = arith.addi %a, %c0 : i32
  %1 = arith.addi %a, %c0 : i32
  %2 = arith.muli %0, %1 : i32
  func.return %2 : i32
}
"""

_LOADED = """
import contextlib, io, json, sys
from passflow.tools.opt import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    status = main(sys.argv[1:])
print(json.dumps([status, out.getvalue(), sorted(sys.modules)]))
"""
"""Runs passflow-opt's `main` on the arguments and prints its status, its
output and every module loaded."""


def loaded_by(*argv: str) -> tuple[int, str, set[str]]:
    """passflow-opt's exit status, output and loaded modules for `argv`, in a
    fresh interpreter."""
    printed = subprocess.run(
        [sys.executable, "-c", _LOADED, *argv],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    status, output, modules = json.loads(printed)
    return status, output, set(modules)


NOT_FOR_A_SMALL_RUN = (
    "dask",
    "distributed",
    "multiprocessing",
    "concurrent",
    "logging",
    "traceback",
    "sqlite3",
    "importlib.metadata",
    "rich",
    "passflow.builder",
    "passflow.graph",
    "passflow.reduce",
    "passflow.sliced",
    "passflow.executors.dask",
    "passflow.executors.shipping",
    "passflow.executors.threads",
    "passflow.actions",
    "passflow.remarks",
    "passflow.statistics_report",
    "passflow.instruments.action_logging",
    "passflow.instruments.action_profiler",
    "passflow.instruments.chrome_trace",
    "passflow.instruments.progress",
    "passflow.instruments.report",
    "passflow.tools.hints",
    "passflow.tools.help_cache",
    "passflow.tools.pass_doc",
    "passflow.testing.passes",
    "passflow.testing.test_dialect",
    "passflow.transforms.inline",
)
"""Modules (and their submodules) a one-function canonicalize+cse run of the
default executor must not load: the forking machinery (the run stays within
the serial budget), other executors and sliced runs (a file of one function
cannot gain from them), Dask, the cache, the plugin scan
(`importlib.metadata`), instruments and notes no flag or error asked for, the
builder, graph and reduce layers, and passes the pipeline does not name;
`concurrent.futures` (with `logging` and `traceback`), actions and remarks
with no handler or engine asked for, and the `test` dialect the input does not
use."""


def unwanted(modules: set[str], prefixes: tuple[str, ...]) -> list[str]:
    return sorted(
        name
        for name in modules
        if any(name == p or name.startswith(p + ".") for p in prefixes)
    )


def test_a_one_function_run_loads_only_what_it_needs(tmp_path: Path) -> None:
    path = tmp_path / "one.mlir"
    path.write_text(ONE_FUNCTION)
    status, output, modules = loaded_by(
        str(path), "--pass-pipeline=builtin.module(func.func(canonicalize,cse))"
    )
    assert status == 0 and "arith.muli %a, %a" in output
    assert "passflow.transforms.canonicalize" in modules  # the run did run
    assert "passflow.executors.forking" in modules  # the default executor
    assert unwanted(modules, NOT_FOR_A_SMALL_RUN) == []


def test_a_large_file_still_slices(tmp_path: Path) -> None:
    """The other side of the size rule: a file past `SMALL_INPUT` runs sliced
    on the default executor when it has two jobs (and loads no IR history,
    which no flag asked for)."""
    from passflow.tools.sliced_options import SMALL_INPUT

    count = SMALL_INPUT // len(ONE_FUNCTION) + 1
    text = "".join(ONE_FUNCTION.replace("@f(", f"@f{i}(") for i in range(count))
    path = tmp_path / "many.mlir"
    path.write_text(text)
    status, _, modules = loaded_by(
        str(path), "--jobs=2", "--pass-pipeline=builtin.module(func.func(cse))"
    )
    assert status == 0
    assert "passflow.sliced.run" in modules
    assert unwanted(modules, ("passflow.instruments.ir_history", "difflib")) == []


@pytest.mark.parametrize("flag", ["--version", "-version"])
def test_version_loads_no_ir(flag: str) -> None:
    status, output, modules = loaded_by(flag)
    assert status == 0 and output.startswith("passflow:\n  passflow version ")
    assert unwanted(modules, ("xdsl.ir", "xdsl.dialects", "passflow.ir")) == []


def loaded_after(code: str) -> set[str]:
    """The modules a fresh interpreter has loaded once it ran `code`."""
    probe = f"{code}\nimport sys\nprint(*sorted(sys.modules))\n"
    return set(
        subprocess.run(
            [sys.executable, "-c", probe], capture_output=True, text=True, check=True
        ).stdout.split()
    )


def test_declaring_the_flags_loads_no_ir() -> None:
    """`passflow-opt`'s parser (with every flag layer) is the tool's start-up:
    declaring the flags must not load the IR, the pass manager or the
    registry."""
    modules = loaded_after(
        "from passflow.tools.opt import build_parser\nbuild_parser()"
    )
    heavy = ("xdsl.ir", "passflow.ir", "passflow.pass_manager", "passflow.registry")
    assert unwanted(modules, heavy) == []
    # argparse asks the terminal's width (loading shutil) for help text only.
    assert "shutil" not in modules


def test_the_client_of_a_server_loads_no_ir() -> None:
    """With `PASSFLOW_SERVER` set, `passflow-opt` relays the run before it
    imports anything of the IR, the tool or the pass manager."""
    modules = loaded_after("from passflow.tools import opt_client")
    heavy = (
        "xdsl",
        "passflow.ir",
        "passflow.tools.opt",
        "passflow.registry",
        "argparse",
    )
    assert unwanted(modules, heavy) == []
