"""`--help` and `--list-passes` from the cached listing: the same bytes as the
listing built by importing every pass, no pass imported, and never stale after
the code or the installed plugins change."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from passflow.tools import help_cache
from passflow.tools.pass_listing import PassEntry, PassGroup

BIN = Path(sys.executable).parent
PLUGIN = """\
from passflow import OperationPass, register_pass


class Demo(OperationPass):
    argument = "{name}"
    summary = "{summary}"

    def run_on_operation(self) -> None:
        pass


def register() -> None:
    register_pass(Demo)
"""


def _opt(*argv: str, cache: str, pythonpath: str = "") -> str:
    env = {**os.environ, "COLUMNS": "100", help_cache.CACHE_ENV: cache}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return subprocess.run(
        [str(BIN / "passflow-opt"), *argv],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout


@pytest.mark.parametrize("flag", ["--help", "--list-passes"])
def test_the_cached_listing_prints_what_the_built_one_does(
    tmp_path: Path, flag: str
) -> None:
    cache = str(tmp_path / "cache")
    built = _opt(flag, cache="off")
    _opt("--help", cache=cache)  # builds and stores the listing
    assert list((tmp_path / "cache").glob("listing-*.json"))
    assert _opt(flag, cache=cache) == built
    assert "convert-arith-to-riscv" in built and "test-pass-failure" in built


def test_a_cached_help_imports_no_pass(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "from passflow.tools.opt import main\n"
        "assert main(['--help']) == 0\n"
        "sys.stderr.write(' '.join(sys.modules))\n"
    )
    env = {**os.environ, help_cache.CACHE_ENV: str(tmp_path / "cache")}
    runs = [
        subprocess.run(
            [sys.executable, "-c", probe],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        for _ in range(2)  # the first builds the listing, the second reads it
    ]
    loaded = runs[1].stderr.split()
    assert "passflow.registry" in runs[0].stderr.split()
    heavy = ("passflow.registry", "passflow.ir", "xdsl.transforms", "xdsl.ir")
    assert [m for m in loaded if m.startswith(heavy)] == []


def _install(site: Path, name: str, summary: str) -> None:
    """A plugin distribution in `site`, as pip records one."""
    module = name.replace("-", "_")
    (site / f"{module}.py").write_text(PLUGIN.format(name=name, summary=summary))
    info = site / f"{module}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        f"[passflow.passes]\n{name} = {module}:register\n"
    )


def test_the_listing_follows_plugins_installed_edited_and_removed(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    cache = str(tmp_path / "cache")

    def listed() -> str:
        return _opt("--list-passes", cache=cache, pythonpath=str(site))

    def helped() -> str:
        return _opt("--help", cache=cache, pythonpath=str(site))

    _install(site, "helpdemo-one", "The first demo pass.")
    assert "The first demo pass." in helped()
    assert "helpdemo-one" in listed()
    _install(site, "helpdemo-two", "The second demo pass.")
    assert "helpdemo-two" in helped()
    (site / "helpdemo_one.py").write_text(
        PLUGIN.format(name="helpdemo-one", summary="Edited.")
    )
    shown = helped()
    assert "Edited." in shown and "The first demo pass." not in shown
    for path in (site / "helpdemo_two-1.0.dist-info").iterdir():
        path.unlink()
    (site / "helpdemo_two-1.0.dist-info").rmdir()
    assert "helpdemo-two" not in helped()
    assert "helpdemo-two" not in listed()


GROUPS = [PassGroup("group", [PassEntry("a-pass", "Does a.", [("-x", "An x.")])])]


def test_a_changed_module_file_invalidates_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "site").mkdir()
    source = tmp_path / "site" / "helpcache_probe_module.py"
    source.write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))  # pyright: ignore[reportUnknownMemberType]
    importlib.import_module("helpcache_probe_module")

    cache = tmp_path / "cache"
    help_cache.write(cache, GROUPS)
    assert help_cache.read(cache) == GROUPS
    source.write_text("VALUE = 22\n")
    assert help_cache.read(cache) is None
    monkeypatch.delitem(sys.modules, "helpcache_probe_module")


def test_an_unreadable_cache_is_rebuilt(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    help_cache.write(cache, GROUPS)
    (listing,) = cache.glob("listing-*.json")
    assert listing.stat().st_mode & 0o777 == 0o600
    assert cache.stat().st_mode & 0o777 == 0o700
    listing.write_text('{"environment": 3')
    assert help_cache.read(cache) is None
    listing.write_text('{"environment": "another python"}')
    assert help_cache.read(cache) is None
