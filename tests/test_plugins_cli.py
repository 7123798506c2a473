"""Passes and dialects from a file or module on the command line
(`--load-pass-plugin`, `--load-dialect-plugin`, `--irdl-file`, `--show-dialects`),
and registration that flows down: the registry and the IR bridge name none of
the passes and dialects they hold.

Each run is a fresh passflow-opt process, so what one plugin registers never
leaks into the next test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

INPUT = """func.func @f(%a: i32) -> i32 {
  %0 = arith.addi %a, %a : i32
  return %0 : i32
}
"""

PASS_PLUGIN = '''
"""A pass plugin registering at import."""
from passflow import OperationPass, Statistic, register_pass


@register_pass
class CountAdds(OperationPass):
    argument = "count-adds"
    summary = "Count arith.addi ops"
    op_name = "func.func"
    adds = Statistic("adds", "Number of additions")

    def run_on_operation(self) -> None:
        self.adds += sum(op.name == "arith.addi" for op in self.get_operation().walk())
        self.mark_all_analyses_preserved()
'''

REGISTER_PLUGIN = '''
"""A pass plugin with register(), as an entry point's target."""
from passflow import OperationPass, register_pipeline, parse_pass_pipeline_into


class Tag(OperationPass):
    argument = "tag-functions"
    summary = "Do nothing, by name"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        self.mark_all_analyses_preserved()


def register() -> None:
    from passflow import register_pass
    register_pass(Tag)
    register_pipeline(
        "tag-and-cse", "Tag, then CSE",
        lambda pm: parse_pass_pipeline_into("func.func(tag-functions,cse)", pm),
    )
'''

DIALECT_PLUGIN = '''
"""An xDSL dialect, as written for xDSL: no register() needed."""
from xdsl.dialects.builtin import i32
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def
from xdsl.ir import Dialect


@irdl_op_definition
class TwiceOp(IRDLOperation):
    name = "twice.twice"
    arg = operand_def(i32)
    res = result_def(i32)


Twice = Dialect("twice", [TwiceOp])
'''

IRDL = """irdl.dialect @cplx {
  irdl.operation @norm {
    %0 = irdl.is i32
    irdl.operands(arg: %0)
    irdl.results(res: %0)
  }
}
"""


def opt(
    tmp_path: Path, *args: str, stdin: str = INPUT, **env_vars: str
) -> tuple[int, str, str]:
    env = {**os.environ, "PYTHONHASHSEED": "0", **env_vars}
    done = subprocess.run(
        [sys.executable, "-m", "passflow.tools.opt", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def python(code: str, **env_vars: str) -> subprocess.CompletedProcess[str]:
    """`code` run by a fresh interpreter (nothing registered yet)."""
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, **env_vars},
        timeout=120,
        check=False,
    )


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_a_pass_from_a_file_runs_by_pipeline_and_by_flag(tmp_path: Path) -> None:
    plugin = write(tmp_path, "count_adds.py", PASS_PLUGIN)
    status, out, err = opt(
        tmp_path,
        f"--load-pass-plugin={plugin}",
        "-p",
        "builtin.module(func.func(count-adds))",
        "--mlir-pass-statistics",
        "--mlir-disable-threading",
    )
    assert status == 0, err
    assert "arith.addi" in out
    assert "(S) 1 adds - Number of additions" in err
    # As an individual pass flag: the plugin loads before the flags are read.
    status, out, err = opt(tmp_path, "--load-pass-plugin", plugin, "--count-adds")
    assert status == 0, err


def test_a_plugin_register_function_is_called(tmp_path: Path) -> None:
    plugin = write(tmp_path, "tagging.py", REGISTER_PLUGIN)
    status, _, err = opt(
        tmp_path,
        f"--load-pass-plugin={plugin}",
        "-p",
        "builtin.module(tag-and-cse)",
        "--dump-pass-pipeline",
    )
    assert status == 0, err
    assert err.split() == [
        *("Pass", "Manager", "with", "1", "passes:", "builtin.module("),
        "func.func(",
        "tag-functions,",
        "cse",
        ")",
        ")",
    ]


def test_a_module_plugin_is_imported_by_name(tmp_path: Path) -> None:
    write(tmp_path, "tagging_module.py", REGISTER_PLUGIN)
    env_path = f"{tmp_path}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "passflow.tools.opt",
            "--load-pass-plugin=tagging_module",
            "--list-passes",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": env_path},
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Passes and pipelines of plugin tagging_module:" in done.stdout
    group = done.stdout.split("Passes and pipelines of plugin tagging_module:")[1]
    group = group.split("\n\n")[0]
    assert "tag-and-cse" in group
    assert "tag-functions" in group
    assert "count-adds" not in done.stdout


def test_list_passes_groups_plugin_passes_under_their_file(tmp_path: Path) -> None:
    plugin = write(tmp_path, "count_adds.py", PASS_PLUGIN)
    status, out, err = opt(tmp_path, f"--load-pass-plugin={plugin}", "--list-passes")
    assert status == 0, err
    titles = [line for line in out.splitlines() if line.endswith(":")]
    assert titles == [
        "passflow's passes and pipelines:",
        f"Passes and pipelines of plugin {plugin}:",
        "xDSL's passes:",
        "Test passes and pipelines (MLIR's test/Pass):",
    ]
    own = out.split(f"plugin {plugin}:\n")[1].split("\n\n")[0]
    assert own.split() == ["count-adds", "Count", "arith.addi", "ops"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (None, "FileNotFoundError: no such file"),
        ("def broken(:\n", "SyntaxError"),
        ("raise KeyError('boom')\n", "KeyError: 'boom'"),
        ("def register():\n    raise ValueError('bad')\n", "ValueError: bad"),
        ("register = 3\n", "is not a function"),
    ],
)
def test_a_plugin_that_fails_is_one_line_with_its_reason_and_exit_1(
    tmp_path: Path, text: str | None, reason: str
) -> None:
    plugin = str(tmp_path / "plugin.py")
    if text is not None:
        Path(plugin).write_text(text)
    status, out, err = opt(tmp_path, f"--load-pass-plugin={plugin}", "-p", "cse")
    assert status == 1
    assert out == ""
    lines = err.splitlines()
    assert lines[0].startswith(f"passflow-opt: Failed to load passes from '{plugin}': ")
    assert reason in lines[0]
    assert lines[1].startswith("note: a plugin is a Python file")
    assert len(lines) == 2  # not "Request ignored." and then that it stopped
    assert "ignored" not in err


def test_a_pass_plugin_that_registers_nothing_says_so_and_how(tmp_path: Path) -> None:
    plugin = write(tmp_path, "forgot.py", PASS_PLUGIN.replace("@register_pass\n", ""))
    status, _, err = opt(tmp_path, f"--load-pass-plugin={plugin}", "--cse")
    assert status == 0, err
    lines = err.splitlines()
    assert lines[0] == f"passflow-opt: warning: plugin '{plugin}' registered no passes"
    assert lines[1].startswith("note: ") and "@register_pass" in lines[1]
    assert "register()" in lines[1]
    status, _, err = opt(
        tmp_path,
        f"--load-pass-plugin={plugin}",
        "-p",
        "builtin.module(func.func(count-adds))",
    )
    assert status == 1
    assert "registered no passes" in err.splitlines()[0]
    assert "count-adds" in err  # and then the unknown pass, as before


def test_a_plugin_that_registers_passes_or_dialects_gets_no_warning(
    tmp_path: Path,
) -> None:
    for name, text in (("passes.py", REGISTER_PLUGIN), ("twice.py", DIALECT_PLUGIN)):
        plugin = write(tmp_path, name, text)
        status, _, err = opt(tmp_path, f"--load-pass-plugin={plugin}", "--cse")
        assert (status, err) == (0, "")


def test_a_dialect_plugin_file_of_xdsl_dialects(tmp_path: Path) -> None:
    plugin = write(tmp_path, "twice.py", DIALECT_PLUGIN)
    source = 'func.func @f(%a: i32) -> i32 {\n  %0 = "twice.twice"(%a) : (i32) -> i32\n  return %0 : i32\n}\n'
    status, out, err = opt(tmp_path, f"--load-dialect-plugin={plugin}", stdin=source)
    assert status == 0, err
    assert "twice.twice" in out
    status, out, err = opt(tmp_path, stdin=source)
    assert status == 1
    assert "twice.twice" in err  # unregistered without the plugin
    status, out, err = opt(
        tmp_path, f"--load-dialect-plugin={plugin}", "--show-dialects"
    )
    assert status == 0
    assert "twice" in out.removeprefix("Available Dialects: ").strip().split(",")
    status, out, err = opt(tmp_path, "--load-dialect-plugin=/nonexistent/d.py")
    assert status == 1
    assert err.splitlines()[0] == (
        "passflow-opt: Failed to load dialect plugin from '/nonexistent/d.py': "
        "FileNotFoundError: no such file"
    )


def test_show_dialects_is_mlir_opts_one_sorted_line(tmp_path: Path) -> None:
    status, out, err = opt(tmp_path, "--show-dialects")
    assert status == 0, err
    assert out.startswith("Available Dialects: ")
    assert out.endswith("\n") and out.count("\n") == 1
    names = out.removeprefix("Available Dialects: ").strip().split(",")
    assert names == sorted(names)
    assert {"arith", "builtin", "func", "test"} <= set(names)


def test_an_irdl_file_defines_a_dialect(tmp_path: Path) -> None:
    irdl = write(tmp_path, "cplx.irdl.mlir", IRDL)
    ok = 'func.func @f(%a: i32) -> i32 {\n  %0 = "cplx.norm"(%a) : (i32) -> i32\n  return %0 : i32\n}\n'
    status, out, err = opt(tmp_path, f"--irdl-file={irdl}", stdin=ok)
    assert status == 0, err
    assert '"cplx.norm"' in out
    bad = ok.replace("(%a) : (i32)", "(%a, %a) : (i32, i32)")
    status, out, err = opt(tmp_path, f"--irdl-file={irdl}", stdin=bad)
    assert status == 1
    assert err.startswith("<stdin>:2:")
    assert "Traceback" not in err
    status, out, err = opt(tmp_path, "--irdl-file=missing.mlir")
    assert status == 1
    assert err == (
        "passflow-opt: error: cannot open input file 'missing.mlir': "
        "No such file or directory\n"
    )


def test_the_registry_and_the_ir_bridge_name_none_of_their_users() -> None:
    # Registration flows down: the tools (or register_all_passes) name the
    # passes and dialects; the layers that hold them do not.
    for module in ("registry.py", "ir.py", "pipeline_text.py", "pass_manager.py"):
        source = (ROOT / "src" / "passflow" / module).read_text()
        assert "passflow.transforms" not in source, module
        assert "passflow.testing" not in source, module


def test_importing_passflow_registers_nothing() -> None:
    code = (
        "from passflow import registry, ir\n"
        "import sys\n"
        "assert not registry.loaded_plugins(), registry.loaded_plugins()\n"
        "mlir_test = lambda: ir.default_context().get_optional_dialect('test')"
        ".has_interface(ir.AllowsUnknownOperations)\n"
        "assert not mlir_test()  # xDSL's own test dialect\n"
        "assert 'passflow.transforms' not in sys.modules\n"
        "assert 'passflow.testing' not in sys.modules\n"
        "from passflow.all_passes import register_all_passes\n"
        "register_all_passes()\n"
        "assert mlir_test()  # MLIR's, passflow.testing's\n"
        "assert registry.lookup_pass('test-module-pass').source"
        " == 'passflow.testing:register'\n"
        "assert 'passflow.transforms.cse' not in sys.modules\n"
    )
    done = python(code)
    assert done.returncode == 0, done.stderr


def test_a_plugin_owns_what_its_modules_registered_before_it_loaded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from passflow import registry

    (tmp_path / "early_plugin.py").write_text(
        textwrap.dedent(PASS_PLUGIN)
        + "\n\ndef register() -> None:\n"
        + "    from passflow import register_lazy\n"
        + "    register_lazy('count-adds', 'early_plugin:CountAdds')\n"
    )
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.setattr(registry, "_plugins", registry.loaded_plugins())
    import early_plugin  # noqa: F401  # pyright: ignore[reportMissingImports, reportUnusedImport]

    try:
        info = registry.lookup_pass("count-adds")
        assert info is not None and info.source == ""  # registered by importing
        title = registry.load_plugin("early_plugin:register", "Early")
        info = registry.lookup_pass("count-adds")
        assert info is not None and info.source == "early_plugin:register"
        assert registry.loaded_plugins()[info.source] == title == "Early"
    finally:
        registry.unregister("count-adds")
        sys.modules.pop("early_plugin", None)


def test_the_cached_help_has_a_listing_for_each_set_of_plugins(tmp_path: Path) -> None:
    plugin = write(tmp_path, "count_adds.py", PASS_PLUGIN)
    cache = {"PASSFLOW_HELP_CACHE": str(tmp_path / "help")}
    with_plugin = [f"--load-pass-plugin={plugin}", "--help"]
    for _ in range(2):  # built, then read from the cache
        status, out, err = opt(tmp_path, *with_plugin, **cache)
        assert status == 0, err
        assert "--count-adds" in out
        status, out, err = opt(tmp_path, "--help", **cache)
        assert status == 0, err
        assert "--count-adds" not in out
    Path(plugin).write_text(PASS_PLUGIN.replace("count-adds", "count-sums"))
    status, out, err = opt(tmp_path, *with_plugin, **cache)  # an edited plugin
    assert "--count-sums" in out and "--count-adds" not in out


def test_the_result_cache_keys_on_the_irdl_file_and_plugins_it_loads(
    tmp_path: Path,
) -> None:
    irdl = write(tmp_path, "cplx.irdl.mlir", IRDL)
    source = tmp_path / "in.mlir"
    source.write_text(
        'func.func @f(%a: i32) -> i32 {\n  %0 = "cplx.norm"(%a) : (i32) -> i32\n'
        "  return %0 : i32\n}\n"
    )
    run = (
        str(source),
        f"--cache={tmp_path / 'cache'}",
        f"--irdl-file={irdl}",
        "-p",
        "builtin.module(func.func(cse))",
    )
    for _ in range(2):  # cold, then warm
        status, out, err = opt(tmp_path, *run)
        assert status == 0, err
        assert '"cplx.norm"' in out
    Path(irdl).write_text(IRDL.replace("irdl.is i32", "irdl.is i64"))
    status, out, err = opt(tmp_path, *run)
    assert status == 1, out  # the edited dialect refuses the op: no stale hit
    assert out == ""
    assert "cplx.norm" in err


def test_passflows_passes_are_grouped_as_its_own_whoever_loaded_them() -> None:
    # A program that never calls register_all_passes finds cse through
    # passflow's own entry points; the listing still calls them passflow's.
    code = (
        "from passflow import registry\n"
        "assert registry.lookup_pass('cse').source == 'passflow.transforms:register'\n"
        "from passflow.tools.pass_doc import pass_groups\n"
        "groups = pass_groups(options=False)\n"
        'assert groups[0].title == "passflow\'s passes and pipelines", groups[0].title\n'
        "assert 'cse' in [e.argument for e in groups[0].entries]\n"
        "assert not [g.title for g in groups if 'plugin passflow' in g.title]\n"
    )
    done = python(code)
    assert done.returncode == 0, done.stderr


def test_the_cached_help_tells_same_named_plugin_files_apart(tmp_path: Path) -> None:
    # The installed tool, whose sys.path does not hold the working directory.
    tool = str(Path(sys.executable).parent / "passflow-opt")
    env = {**os.environ, "PASSFLOW_HELP_CACHE": str(tmp_path / "help")}
    for name in ("count-adds", "count-subs"):
        directory = tmp_path / name
        directory.mkdir()
        write(directory, "plugin.py", PASS_PLUGIN.replace("count-adds", name))
        done = subprocess.run(
            [tool, "--load-pass-plugin=plugin.py", "--help"],
            capture_output=True,
            text=True,
            cwd=directory,
            env=env,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert f"--{name} " in done.stdout
