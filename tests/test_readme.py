"""docs/opt.md documents every passflow-opt flag; the README says what the install
needs, and the Makefile checks it first."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from importlib.metadata import metadata
from pathlib import Path

import pytest

from passflow.tools.opt import build_parser

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_every_flag_is_on_the_passflow_opt_page() -> None:
    text = (ROOT / "docs" / "opt.md").read_text()
    missing = [
        flag
        for flag in sorted(build_parser().known)
        if not re.search(rf"`{re.escape(flag)}(?![\w-])", text)
        and not re.search(rf"`-{re.escape(flag.lstrip('-'))}(?![\w-])", text)
    ]
    assert missing == []


def _minimum(requires_python: str) -> tuple[int, int]:
    found = re.fullmatch(r">=\s*3\.(\d+)", requires_python.strip())
    assert found is not None, requires_python
    return (3, int(found[1]))


def _required_python() -> tuple[int, int]:
    found = re.search(
        r'^requires-python = "(.*)"$', (ROOT / "pyproject.toml").read_text(), re.M
    )
    assert found is not None
    return _minimum(found[1])


def test_the_readme_is_a_front_page() -> None:
    """What it is, install, the two commands, one example, where to go next:
    the rest is in docs/, which it links."""
    text = README.read_text()
    assert text.count("\n") <= 250
    assert "make demo" in text and "make test" in text
    linked = set(re.findall(r"\]\(docs/(\w+)\.md", text))
    pages = {page.stem for page in (ROOT / "docs").glob("*.md")} - {"index"}
    assert pages - linked == set()


def test_the_python_claimed_is_the_one_xdsl_needs() -> None:
    required = _required_python()
    assert required >= _minimum(metadata("xdsl")["Requires-Python"])
    version = ".".join(map(str, required))
    assert f"**{version} or newer**" in README.read_text()
    claims = {
        f"{page.relative_to(ROOT)}: {claim}"
        for page in PAGES
        for claim in re.findall(r"3\.\d+ or newer|>= ?3\.\d+", page.read_text())
        if version not in claim
    }
    assert claims == set()
    assert f"sys.version_info < {required}" in (ROOT / "Makefile").read_text()


def _old_python() -> str | None:
    """An interpreter older than the one passflow needs, if this machine has one."""
    required = _required_python()
    names = [f"python3.{minor}" for minor in range(required[1] - 1, 7, -1)]
    pyenv = Path.home() / ".pyenv" / "versions"
    candidates = [shutil.which(name) for name in names]
    candidates += (
        sorted(str(p) for p in pyenv.glob("3.*/bin/python3")) if pyenv.is_dir() else []
    )
    for candidate in filter(None, candidates):
        done = subprocess.run(
            [candidate, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0 and tuple(map(int, done.stdout.split())) < required:
            return candidate
    return None


def test_make_demo_with_an_old_python_stops_before_making_a_venv(
    tmp_path: Path,
) -> None:
    old = _old_python()
    if old is None:
        pytest.skip("no Python older than the one passflow needs on this machine")
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    done = subprocess.run(
        ["make", "--no-print-directory", "demo", f"PYTHON={old}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    first = done.stderr.splitlines()[0]
    assert first.startswith("make: passflow needs Python 3.11 or newer (xDSL does); ")
    assert first.endswith(": run make with PYTHON=python3.11 (or newer)")
    assert not (tmp_path / ".venv").exists()


@pytest.mark.parametrize(
    ("sudo", "command"),
    [
        ("echo would-run", "'echo would-run apt-get install -y chromium'"),
        ("", "'apt-get install -y chromium'"),  # as root: no stray space
    ],
)
def test_make_browser_asks_before_installing_chromium(
    tmp_path: Path, sudo: str, command: str
) -> None:
    """Without a terminal to ask on and without CHROMIUM_INSTALL=yes, `make
    browser` installs nothing: it says what the browser is for and what to run."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    done = subprocess.run(
        [
            "make",
            "--no-print-directory",
            "browser",
            f"CHROMIUM={tmp_path}/no-chromium",
            f"SUDO={sudo}",
        ],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        # make passes command-line variables (CI's CHROMIUM_INSTALL=yes) on to
        # the makes its recipes start, through MAKEFLAGS: this one starts clean.
        env={
            **{k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS")},
            "CHROMIUM_INSTALL": "",
        },
    )
    assert done.returncode != 0
    assert "would-run" not in done.stdout
    assert "tests/test_report_browser.py" in done.stderr
    assert command in done.stderr
    assert "CHROMIUM_INSTALL=yes" in done.stderr


def _clean_make_env() -> dict[str, str]:
    """This environment without the variables an outer make (`make test`)
    passes on to the makes its recipes start."""
    outer = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "CHROMIUM_INSTALL")
    return {k: v for k, v in os.environ.items() if k not in outer}


def test_make_test_checks_its_prerequisites_before_anything_long(
    tmp_path: Path,
) -> None:
    """Python, Node.js and Chromium are checked first: a missing one stops
    `make test` in its first second, not after the venv and the linters."""
    done = subprocess.run(
        ["make", "--no-print-directory", "-n", "test", f"VENV={tmp_path}/venv"],
        cwd=ROOT,
        env=_clean_make_env(),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = done.stdout.splitlines()

    def first(text: str) -> int:
        return next(i for i, line in enumerate(lines) if text in line)

    checks = [first("sys.version_info <"), first("command -v node"), first("chromium")]
    assert checks == sorted(checks)
    assert checks[-1] < first(" -m venv ") < first("pip install")


def test_make_test_without_node_stops_first_and_says_what_to_install(
    tmp_path: Path,
) -> None:
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    done = subprocess.run(
        ["make", "--no-print-directory", "test", "NODE=/nonexistent/node"],
        cwd=tmp_path,
        env=_clean_make_env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode != 0
    assert done.stderr.splitlines()[0].startswith(
        "make: pyright (make typecheck) needs Node.js on PATH"
    )
    assert "apt-get install -y nodejs'" in done.stderr
    assert not (tmp_path / ".venv").exists()
