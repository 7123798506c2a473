"""passflow's xDSL range: the one in pyproject.toml, checked on import, and an
unsupported xDSL refused in one line naming the range."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from passflow.xdsl_version import (
    SUPPORTED_XDSL,
    installed_xdsl_version,
    is_supported,
    unsupported_message,
)

ROOT = Path(__file__).parent.parent


def test_the_range_is_the_one_pyproject_declares() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert f"xdsl{SUPPORTED_XDSL}" in project["dependencies"]


@pytest.mark.parametrize(
    ("version", "supported"),
    [
        ("0.74.0", True),
        ("0.75.0", True),
        ("0.75.3.dev2+g0abc", True),
        ("0.73.9", False),
        ("0.76.0", False),
        ("1.0", False),
        ("unknown", False),
    ],
)
def test_versions_in_and_out_of_the_range(version: str, supported: bool) -> None:
    assert is_supported(version) is supported
    message = unsupported_message(version)
    assert (message is None) is supported
    if message is not None:
        assert message == (
            f"passflow supports xDSL {SUPPORTED_XDSL}, but xDSL {version} is "
            f"installed; fix: pip install 'xdsl{SUPPORTED_XDSL}'"
        )


def test_the_installed_xdsl_is_found_and_supported() -> None:
    import xdsl

    version = installed_xdsl_version()
    assert version is not None and version == str(xdsl.__version__)
    assert is_supported(version)


def test_an_unsupported_xdsl_stops_passflow_opt_in_one_line(tmp_path: Path) -> None:
    """A fake xDSL 0.70.0 first on the path: passflow-opt prints one line and
    exits with 1, before anything of xDSL is imported."""
    (tmp_path / "xdsl").mkdir()
    (tmp_path / "xdsl" / "__init__.py").write_text("raise SystemExit('imported')\n")
    (tmp_path / "xdsl-0.70.0.dist-info").mkdir()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from passflow.tools.opt_client import main; main()",
            "--version",
        ],
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (
        f"error: passflow supports xDSL {SUPPORTED_XDSL}, but xDSL 0.70.0 is "
        f"installed; fix: pip install 'xdsl{SUPPORTED_XDSL}'\n"
    )


def test_a_program_can_catch_it_as_an_import_error(tmp_path: Path) -> None:
    (tmp_path / "xdsl").mkdir()
    (tmp_path / "xdsl" / "__init__.py").write_text("")
    (tmp_path / "xdsl-0.99.0.dist-info").mkdir()
    code = (
        "try:\n    import passflow\nexcept ImportError as err:\n"
        "    print(type(err).__name__, err)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("UnsupportedXDSLError passflow supports xDSL")
    assert "xDSL 0.99.0 is installed" in done.stdout
