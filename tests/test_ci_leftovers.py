"""`.ci/leftovers`, which `.ci/run` wraps around `make test`: a file a run leaves
in the work tree fails CI; the venv, byte-code, caches, lit's Output/ and the
docs site are declared outputs and do not."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A git work tree with one tracked file and the script under test."""
    git = shutil.which("git")
    assert git is not None
    tree = tmp_path / "tree"
    (tree / ".ci").mkdir(parents=True)
    shutil.copy(ROOT / ".ci" / "leftovers", tree / ".ci" / "leftovers")
    (tree / ".gitignore").write_text(".venv/\n__pycache__/\nbuild/\nsite/\n")
    (tree / "kept.txt").write_text("tracked\n")
    for command in (["init", "-q"], ["add", "-A"]):
        subprocess.run([git, *command], cwd=tree, check=True)
    subprocess.run(
        [git, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start"],
        cwd=tree,
        check=True,
    )
    return tree


def leftovers(tree: Path, mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", ".ci/leftovers", mode, str(tree.parent / "state")],
        cwd=tree,
        capture_output=True,
        text=True,
        check=False,
    )


def test_declared_outputs_are_not_leftovers(clone: Path) -> None:
    (clone / "already there.txt").write_text("before the run\n")
    assert leftovers(clone, "snapshot").returncode == 0
    for name in (".venv/bin/python", "site/index.html", "pkg/__pycache__/m.pyc"):
        (clone / name).parent.mkdir(parents=True, exist_ok=True)
        (clone / name).write_text("")
    (clone / "tests" / "Output").mkdir(parents=True)
    (clone / "tests" / "Output" / "a.mlir.tmp").write_text("")
    done = leftovers(clone, "check")
    assert (done.returncode, done.stderr) == (0, "")


def test_a_file_the_run_left_fails_and_is_named(clone: Path) -> None:
    assert leftovers(clone, "snapshot").returncode == 0
    (clone / "build" / "bdist.linux-x86_64").mkdir(parents=True)
    (clone / "build" / "bdist.linux-x86_64" / "wheel").write_text("")
    (clone / "repro.mlir").write_text("")
    (clone / "kept.txt").write_text("changed by a test\n")
    done = leftovers(clone, "check")
    assert done.returncode == 1
    assert done.stderr.splitlines()[1:] == [
        "  build/bdist.linux-x86_64/wheel",
        "  kept.txt",
        "  repro.mlir",
    ]


def test_ci_run_checks_around_make_test() -> None:
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    steps = [line.split()[:2] for line in lines if line.startswith((".ci/", "make "))]
    # make test between the two checks; the newest xDSL's run (its own venv) after
    assert steps == [
        [".ci/leftovers", "snapshot"],
        ["make", "test"],
        [".ci/leftovers", "check"],
        ["make", "test-xdsl-newest"],
    ]
