"""A clean install: `make demo` installs passflow's runtime only, `make test` the dev
tools too, and the package metadata is the form current setuptools builds without
deprecation banners (a licence as an SPDX expression)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from packaging.licenses import canonicalize_license_expression

ROOT = Path(__file__).resolve().parent.parent


def make_dry_run(target: str, venv: Path) -> list[str]:
    """The commands `make TARGET` would run for a venv that does not exist yet
    (as a make of its own, also when the tests run under `make test`)."""
    make = shutil.which("make")
    assert make is not None, "make is one of the two things a fresh clone needs"
    outer = ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")
    env = {k: v for k, v in os.environ.items() if k not in outer}
    result = subprocess.run(
        [make, "--no-print-directory", "-n", target, f"VENV={venv}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout.splitlines()


def installs(commands: list[str]) -> list[str]:
    return [c for c in commands if "/pip install " in c and "--upgrade pip" not in c]


def test_make_demo_installs_the_runtime_package_only(tmp_path: Path) -> None:
    commands = make_dry_run("demo", tmp_path / "venv")
    assert installs(commands) == [f"{tmp_path}/venv/bin/pip install --quiet -e ."]
    assert commands[-1] == f"BIN={tmp_path}/venv/bin sh examples/demo.sh"


def test_make_test_installs_the_dev_extras(tmp_path: Path) -> None:
    commands = make_dry_run("test", tmp_path / "venv")
    assert installs(commands) == [
        f"{tmp_path}/venv/bin/pip install --quiet -e '.[dev]'"
    ]


def test_a_dev_install_also_satisfies_make_demo(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").touch()
    (venv / ".installed").touch()
    (venv / ".installed-runtime").touch()
    assert installs(make_dry_run("demo", venv)) == []


def test_the_licence_is_an_spdx_expression() -> None:
    text = (ROOT / "pyproject.toml").read_text()
    (licence,) = re.findall(r'^license = "(.*)"$', text, re.M)  # not a table:
    assert canonicalize_license_expression(licence) == licence  # deprecated in 77
    assert re.search(r'^requires = \["setuptools>=77"', text, re.M)


def source_copy(directory: Path) -> Path:
    """What a wheel is built from, copied into `directory`: setuptools builds in
    the source tree (`build/bdist.*`), and a test leaves the clone as it was."""
    copy = directory / "source"
    copy.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, copy / name)
    skip = shutil.ignore_patterns("*.egg-info", "__pycache__")
    shutil.copytree(ROOT / "src", copy / "src", ignore=skip)
    return copy


def test_the_wheel_installs_and_its_tools_run(tmp_path: Path) -> None:
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check"]
    source = source_copy(tmp_path)
    subprocess.run(
        [*pip, "wheel", "--no-deps", "-q", "-w", tmp_path / "dist", source],
        check=True,
        capture_output=True,
    )
    (wheel,) = (tmp_path / "dist").glob("passflow-*.whl")
    target = tmp_path / "installed"
    subprocess.run(
        [*pip, "install", "--no-deps", "-q", "--target", target, wheel],
        check=True,
        capture_output=True,
    )
    # The installed copy comes first; xDSL and rich come from this environment.
    env = {**os.environ, "PYTHONPATH": str(target)}

    def run(tool: str, *args: str) -> str:
        done = subprocess.run(
            [target / "bin" / tool, *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    where = subprocess.run(
        [sys.executable, "-c", "import passflow; print(passflow.__file__)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert where.startswith(str(target))
    assert run("passflow-opt", "--version").startswith("passflow")
    output = run(
        "passflow-opt",
        str(ROOT / "examples" / "functions.mlir"),
        "-p",
        "builtin.module(inline,func.func(canonicalize,cse),symbol-dce)",
    )
    assert "func.func @main" in output
    assert "--bisect" in run("passflow-reduce", "--help")
    assert not (target / "tests").exists()
