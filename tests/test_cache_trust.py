"""What the result cache trusts (docs/cache.md, SECURITY.md): a store that is
not the user's alone is refused and the run goes on uncached; files a pass
reads are in the key, and a pass that starts a program is never cached; an
op moved by lines above it, or whose callee's callee changed, runs again; and
the small traps of the cache's flags (`--cache-stats` with a run,
`--cache-max-size` without `--cache`)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pwd
import shutil
import sqlite3
import stat
import subprocess
import sys
import types
from pathlib import Path

import pytest
from test_cache import PIPELINES, in_process, tool
from test_sliced import module

from passflow import PassManager, ir
from passflow.cache.code import pipeline_code
from passflow.cache.keys import run_keys
from passflow.cache.store import DATABASE, ResultCache
from passflow.pipeline_text import parse_pass_pipeline
from passflow.sliced import SlicedOutcome, run_sliced, scan_slices
from passflow.tools import opt_server

OTHER_USER = "passflow-cache-other"

__all__ = ["in_process"]  # test_cache's fixture: every batch in this process


@pytest.fixture(autouse=True)
def _no_cache_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PASSFLOW_CACHE_DIR", raising=False)


@pytest.fixture(scope="session")
def other_uid() -> int:
    """The uid of a second local user, made here if missing (as root only)."""
    with contextlib.suppress(KeyError):
        return pwd.getpwnam(OTHER_USER).pw_uid
    if os.getuid() != 0:
        pytest.skip("another user's files can only be made as root")
    if shutil.which("useradd") is None:
        pytest.skip("no useradd to make a second user with")
    subprocess.run(
        ["useradd", "--no-create-home", "--system", OTHER_USER],
        check=True,
        capture_output=True,
    )
    return pwd.getpwnam(OTHER_USER).pw_uid


def cli(argv: list[str]) -> tuple[int, str, str]:
    """passflow-opt `argv` in a process of its own (for plugins, which stay
    loaded in the process that loads them)."""
    done = subprocess.run(
        [str(Path(sys.executable).parent / "passflow-opt"), *argv],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def _plain(path: Path, pipeline: str = PIPELINES[0]) -> tuple[int, str, str]:
    return tool([str(path), "-p", pipeline, "--mlir-disable-threading"])


def _forge(directory: Path, text: str) -> None:
    """Rewrite every stored entry and shell as an attacker would: valid JSON
    with a matching checksum."""
    piece: dict[str, object] = {
        "events": [],
        "failed": False,
        "body": text,
        "initial_symbols": [],
        "symbols": [],
        "header": None,
    }
    value = json.dumps(piece, separators=(",", ":"))
    checksum = hashlib.sha256(value.encode()).hexdigest()
    with contextlib.closing(sqlite3.connect(directory / DATABASE)) as db:
        db.execute("UPDATE entries SET value = ?, checksum = ?", (value, checksum))
        db.commit()


# --- owner-only ------------------------------------------------------------------


@pytest.mark.usefixtures("in_process")
def test_a_directory_of_another_user_is_refused(tmp_path: Path, other_uid: int) -> None:
    """The attack of the issue: another user owns the cache directory (mode
    0777) and forges its entries; the victim's run prints the truth."""
    cache = tmp_path / "shared"
    path = tmp_path / "input.mlir"
    path.write_text(module(6))
    argv = [str(path), "-p", PIPELINES[0], f"--cache={cache}"]
    tool(argv)
    _forge(cache, '  "evil.op"() {msg = "attacker was here"} : () -> ()')
    for file in cache.iterdir():
        os.chown(file, other_uid, -1)
    os.chown(cache, other_uid, -1)
    cache.chmod(0o777)
    status, out, err = tool(argv)
    assert (status, out) == _plain(path)[:2] and "evil" not in out
    assert err == (
        "passflow-opt: note: running without the cache: cannot use the cache in "
        f"'{cache}': the directory is not yours alone (owner uid {other_uid}, "
        "mode 0777); use one only you can write to (mkdir -m 700)\n"
    )


@pytest.mark.usefixtures("in_process")
def test_a_directory_others_may_write_is_refused(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    path = tmp_path / "input.mlir"
    path.write_text(module(3))
    for mode in (0o777, 0o770, 0o702):
        cache.chmod(mode)
        status, out, err = tool([str(path), "-p", PIPELINES[0], f"--cache={cache}"])
        assert (status, out) == _plain(path)[:2]
        assert f"mode {mode:04o}" in err and err.count("\n") == 1
        assert not (cache / DATABASE).exists()
    cache.chmod(0o755)  # readable is fine: the files are 0600
    assert tool([str(path), "-p", PIPELINES[0], f"--cache={cache}"])[2] == ""


@pytest.mark.parametrize("name", [DATABASE, f"{DATABASE}-wal", f"{DATABASE}-shm"])
@pytest.mark.usefixtures("in_process")
def test_a_database_file_of_another_user_is_refused(
    name: str, tmp_path: Path, other_uid: int
) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    planted = cache / name
    planted.write_bytes(b"")
    os.chown(planted, other_uid, -1)
    path = tmp_path / "input.mlir"
    path.write_text(module(3))
    status, out, err = tool([str(path), "-p", PIPELINES[0], f"--cache={cache}"])
    assert (status, out) == _plain(path)[:2]
    assert f"'{name}' is not yours (owner uid {other_uid}" in err
    assert err.count("\n") == 1
    planted.unlink()
    planted.symlink_to(tmp_path / "elsewhere")
    err = tool([str(path), "-p", PIPELINES[0], f"--cache={cache}"])[2]
    assert f"'{name}' is not yours (a symbolic link)" in err


def test_the_store_is_made_owner_only(tmp_path: Path) -> None:
    cache = tmp_path / "new" / "cache"
    with contextlib.closing(ResultCache(cache)) as store:
        store.put_shell("k", "builtin.module {")
        modes = {
            file.name: stat.S_IMODE(file.stat().st_mode) for file in cache.iterdir()
        }
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert modes and set(modes.values()) == {0o600}, modes
    assert {DATABASE, f"{DATABASE}-wal"} <= set(modes)
    # A database left 0644 by an older passflow is made 0600.
    (cache / DATABASE).chmod(0o644)
    ResultCache(cache).close()
    assert stat.S_IMODE((cache / DATABASE).stat().st_mode) == 0o600


def test_the_server_refuses_another_users_directory(
    tmp_path: Path, other_uid: int
) -> None:
    """The server's socket directory goes through the same check."""
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o700)
    os.chown(shared, other_uid, -1)
    with pytest.raises(opt_server.ServerError, match=f"owner uid {other_uid}"):
        opt_server.listen(shared / "socket")


# --- inputs outside the IR -------------------------------------------------------

PATTERN = """\
pdl.pattern @p : benefit(1) {
  %t = pdl.type
  %v = pdl.attribute = 1 : i32
  %op = pdl.operation "arith.constant" {"value" = %v} -> (%t : !pdl.type)
  pdl.rewrite %op {
    %v2 = pdl.attribute = VALUE : i32
    %new = pdl.operation "arith.constant" {"value" = %v2} -> (%t : !pdl.type)
    pdl.replace %op with %new
  }
}
"""

MODULES = "".join(
    f'builtin.module @m{i} {{\n  %c = arith.constant 1 : i32\n  "test.use"(%c) : '
    "(i32) -> ()\n}\n"
    for i in range(3)
)


@pytest.mark.usefixtures("in_process")
def test_an_edited_pdl_file_gives_the_fresh_result(tmp_path: Path) -> None:
    rules = tmp_path / "rules.mlir"
    rules.write_text(PATTERN.replace("VALUE", "2"))
    path = tmp_path / "input.mlir"
    path.write_text(MODULES)
    pipeline = f'builtin.module(builtin.module(apply-pdl{{pdl_file="{rules}"}}))'
    common = [str(path), "-p", pipeline, "--allow-unregistered-dialect"]
    cached = [*common, f"--cache={tmp_path / 'cache'}", "--cache-stats"]
    tool(cached)
    status, out, _ = tool(cached)
    assert status == 0 and "arith.constant 2" in out and "3 hits" in out
    rules.write_text(PATTERN.replace("VALUE", "5"))
    status, out, err = tool(cached)
    fresh = tool([*common, "--mlir-disable-threading"])
    assert "arith.constant 5" in fresh[1]
    assert (status, out.partition("cache directory:")[0], err) == fresh
    assert "3 hits, 6 misses" in out


PLUGIN = '''
from pathlib import Path

from xdsl.dialects.builtin import StringAttr

from passflow import OperationPass, Option, register_pass


@register_pass
class Stamp(OperationPass):
    """Puts the text of a file on every function."""

    argument = "test-cache-stamp"
    op_name = "func.func"
    path = Option("", help="the file to read")

    def unsafe_effect(self):
        return "reads the file named by its 'path' option"

    def external_inputs(self):
        return (self.path,)

    def run_on_operation(self):
        text = Path(self.path).read_text().strip()
        self.get_operation().attributes["stamp"] = StringAttr(text)


@register_pass
class Launch(OperationPass):
    """Would start a program: it says so, and declares no inputs."""

    argument = "test-cache-launch"
    op_name = "func.func"

    def unsafe_effect(self):
        return "starts a program"

    def run_on_operation(self):
        pass
'''


def test_a_plugin_pass_declares_the_files_it_reads(tmp_path: Path) -> None:
    plugin = tmp_path / "stamp_plugin.py"
    plugin.write_text(PLUGIN)
    data = tmp_path / "data.txt"
    data.write_text("first")
    path = tmp_path / "input.mlir"
    path.write_text(module(4))
    pipeline = f"builtin.module(func.func(test-cache-stamp{{path={data}}}))"
    common = [str(path), "-p", pipeline, f"--load-pass-plugin={plugin}"]
    cached = [*common, f"--cache={tmp_path / 'cache'}"]
    assert cli(cached) == cli(cached) == cli([*common, "--mlir-disable-threading"])
    data.write_text("second")
    fresh = cli([*common, "--mlir-disable-threading"])
    assert 'stamp = "second"' in fresh[1]
    assert cli(cached) == fresh


def test_a_pass_that_starts_a_program_is_never_cached(tmp_path: Path) -> None:
    plugin = tmp_path / "launch_plugin.py"
    plugin.write_text(PLUGIN)
    path = tmp_path / "input.mlir"
    path.write_text(module(4))
    cache = tmp_path / "cache"
    argv = [
        str(path),
        "-p",
        "builtin.module(func.func(test-cache-launch))",
        f"--load-pass-plugin={plugin}",
        f"--cache={cache}",
        "--cache-stats",
    ]
    out = ""
    for _ in range(2):
        status, out, err = cli(argv)
        assert status == 0 and err == ""
        assert out.endswith(
            "lookups: 0: 0 hits, 0 misses\n"
            "not cached: pass 'test-cache-launch' starts a program\n"
        )
    assert "entries: 0\n" in out


def test_xdsl_passes_with_file_options_declare_them() -> None:
    from passflow import registry

    for name, option in (
        ("apply-pdl", "pdl_file"),
        ("apply-pdl-interp", "pdl_interp_file"),
        ("eqsat-add-costs", "cost_file"),
    ):
        info = registry.lookup_pass(name)
        assert info is not None
        pass_ = info.create()
        assert pass_.external_inputs() == ()
        pass_.initialize_options(f'{option}="/some/file"')
        assert pass_.external_inputs() == ("/some/file",)
    launcher = registry.lookup_pass("mlir-opt")
    assert launcher is not None and launcher.create().external_inputs() is None


# --- positions and references ----------------------------------------------------


@pytest.mark.usefixtures("in_process")
def test_a_function_moved_by_blank_lines_reports_its_new_line(tmp_path: Path) -> None:
    """Two blank lines above the third function move it and all below: a
    cached diagnostic at the old line would be a lie."""
    path = tmp_path / "input.mlir"
    text = module(6)
    path.write_text(text)
    argv = [str(path), "-p", PIPELINES[1], f"--cache={tmp_path / 'cache'}"]
    tool(argv)
    cut = text.index("func.func @f2")
    path.write_text(text[:cut] + "\n\n" + text[cut:])
    plain = _plain(path, PIPELINES[1])
    assert plain[0] == 1 and f"{path}:" in plain[2]
    assert tool(argv) == plain
    assert tool(argv) == plain


def _keys(text: str) -> list[str]:
    slices = scan_slices(text)
    assert slices is not None
    pm = PassManager("builtin.module", ir.default_context())
    pm.assign(parse_pass_pipeline(PIPELINES[0]))
    code = pipeline_code(pm)
    assert not isinstance(code, str)
    return list(run_keys(None, code, "in.mlir", slices, "").pieces)


def _calls(name: str, callee: str | None, body: str = "") -> str:
    call = f"  func.call @{callee}() : () -> ()\n" if callee else ""
    return f"func.func @{name}() {{\n{call}{body}  func.return\n}}\n"


def test_a_callee_of_a_callee_is_in_the_key() -> None:
    """`a` calls `b` calls `c`: an edit in `c` (on its own line, so nothing
    moves) changes the keys of all three, and not `d`'s."""

    def text(value: int) -> str:
        body = f'  "test.op"() {{v = {value}}} : () -> ()\n'
        return (
            _calls("a", "b")
            + _calls("b", "c")
            + _calls("c", None, body)
            + _calls("d", None)
        )

    before, after = _keys(text(1)), _keys(text(2))
    changed = [x != y for x, y in zip(before, after, strict=True)]
    assert changed == [True, True, True, False]


# --- the cache's flags -----------------------------------------------------------


@pytest.mark.usefixtures("in_process")
def test_cache_stats_with_a_run_prints_after_it(tmp_path: Path) -> None:
    path = tmp_path / "input.mlir"
    path.write_text(module(5))
    output = tmp_path / "out.mlir"
    argv = [str(path), "-p", PIPELINES[0], f"--cache={tmp_path / 'cache'}"]
    status, out, err = tool([*argv, "--cache-stats", "-o", str(output)])
    assert (status, err) == (0, "")
    assert output.read_text() == _plain(path)[1]
    assert out == (
        f"cache directory: {tmp_path / 'cache'}\nentries: 5\n"
        + out.partition("\nentries: 5\n")[2]
    )
    assert "lookups: 5: 0 hits, 5 misses" in out
    status, out, _ = tool([*argv, "--cache-stats"])  # to stdout: output, stats
    assert status == 0 and out.startswith(_plain(path)[1])
    assert out.endswith("lookups: 10: 5 hits, 5 misses (50.0% hits)\n")
    status, out, _ = tool([*argv, "--cache-clear", "--cache-stats"])
    assert out.endswith("lookups: 5: 0 hits, 5 misses (0.0% hits)\n")


def test_a_bad_cache_size_is_an_error_with_or_without_the_cache(
    tmp_path: Path,
) -> None:
    path = tmp_path / "input.mlir"
    path.write_text(module(2))
    message = (
        "passflow-opt: for the --cache-max-size option: 'lots' is not a size "
        "(a number, or with K, M, G, T)\n"
    )
    for cache in ([], [f"--cache={tmp_path / 'cache'}"]):
        argv = [str(path), "-p", PIPELINES[0], "--cache-max-size=lots", *cache]
        assert cli(argv) == (1, "", message)
    assert not (tmp_path / "cache").exists()


def test_a_pass_defined_in_no_file_is_never_cached(tmp_path: Path) -> None:
    """A pass class typed at a prompt or in a notebook has no file the key
    could hash: a run of it is not cached, and the cache says why."""
    notebook = types.ModuleType("notebook_cell")
    sys.modules["notebook_cell"] = notebook
    try:
        exec(  # a class with no file, as a notebook makes one
            "from passflow import OperationPass\n"
            "class Cell(OperationPass):\n"
            "    argument = 'test-notebook-cell'\n"
            "    op_name = 'func.func'\n"
            "    def run_on_operation(self):\n"
            "        pass\n",
            notebook.__dict__,
        )
        pm = PassManager("builtin.module", ir.default_context())
        pm.nest("func.func").add(notebook.Cell())
        with contextlib.closing(ResultCache(tmp_path / "cache")) as cache:
            outcome = run_sliced(
                module(4), "in.mlir", pm, jobs=1, serial_budget=1e9, cache=cache
            )
            assert isinstance(outcome, SlicedOutcome) and outcome.output
            found = cache.stats()
        assert found.entries == 0 and found.bypassed == (
            "pass 'test-notebook-cell' is defined where no file holds its code",
        )
    finally:
        del sys.modules["notebook_cell"]
