"""Every shell block of README.md and docs/*.md runs, and prints what it shows.

A page's shell blocks run in order in one temporary directory, with the venv's
bin first on PATH; the directory holds `in.mlir` and `input.mlir` (copies of
examples/functions.mlir), `examples/` and `.venv` (links to the repository's),
and every block marked `{file=NAME}` above the block that runs. A block of
`$ command` lines shows each command's output (stdout and stderr, as a terminal
shows them; a `...` line stands for any lines): the output must be that. A block
without prompts is a script: it must exit 0. `{no-run="why"}` says why a block
cannot run here (tests/docs_blocks.py describes the markers).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from docs_blocks import PAGES, ROOT, SHELL, Block, all_blocks, blocks

BIN = Path(sys.executable).parent
SHELL_PAGES = [
    page for page in PAGES if any(block.language in SHELL for block in blocks(page))
]
NO_RUN = [block for block in all_blocks() if "no-run" in block.attributes]


def _workspace(directory: Path) -> dict[str, str]:
    for name in ("in.mlir", "input.mlir"):
        shutil.copy(ROOT / "examples" / "functions.mlir", directory / name)
    (directory / "examples").symlink_to(ROOT / "examples")
    (directory / ".venv").symlink_to(BIN.parent)
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}


def _complete(command: str) -> bool:
    """Whether `command` is a whole shell command (not cut at a loop or `\\`)."""
    return (
        not command.endswith("\\\n")
        and subprocess.run(
            ["bash", "-n", "-c", command], capture_output=True
        ).returncode
        == 0
    )


def _sessions(code: str) -> list[tuple[str, list[str]]]:
    """The `$ command`s of a block and the output lines each shows."""
    sessions: list[tuple[str, list[str]]] = []
    lines = code.splitlines(keepends=True)
    index = 0
    while index < len(lines):
        if not lines[index].startswith("$ "):
            raise AssertionError(f"output before any command: {lines[index]!r}")
        command = lines[index][2:]
        index += 1
        while not _complete(command) and index < len(lines):
            command += lines[index]
            index += 1
        output: list[str] = []
        while index < len(lines) and not lines[index].startswith("$ "):
            output.append(lines[index].rstrip())
            index += 1
        sessions.append((command, output))
    return sessions


def _matches(expected: list[str], actual: list[str]) -> bool:
    pattern = "".join(
        r"(?:.*\n)*?" if line == "..." else re.escape(line) + r"\n" for line in expected
    )
    return re.fullmatch(pattern, "".join(f"{line}\n" for line in actual)) is not None


def _run(block: Block, directory: Path, env: dict[str, str]) -> None:
    if block.code.startswith("$ "):
        for command, expected in _sessions(block.code):
            done = subprocess.run(
                ["bash", "-o", "pipefail", "-c", command],
                cwd=directory,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=120,
                check=False,
            )
            actual = [line.rstrip() for line in done.stdout.splitlines()]
            assert "Traceback" not in done.stdout, f"{block.where}: {done.stdout}"
            assert _matches(expected, actual), (
                f"{block.where}: `{command.strip()}` printed:\n{done.stdout}"
            )
        return
    done = subprocess.run(
        ["bash", "-e", "-u", "-o", "pipefail", "-c", block.code],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{done.stderr}"
    assert "Traceback" not in done.stdout + done.stderr, f"{block.where}: {done.stderr}"


@pytest.mark.parametrize(
    "page", SHELL_PAGES, ids=[str(page.relative_to(ROOT)) for page in SHELL_PAGES]
)
def test_the_shell_blocks_of_the_page_run(page: Path, tmp_path: Path) -> None:
    env = _workspace(tmp_path)
    for block in blocks(page):
        if "file" in block.attributes:
            target = tmp_path / block.attributes["file"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code)
        elif block.language in SHELL and "no-run" not in block.attributes:
            _run(block, tmp_path, env)


@pytest.mark.parametrize("block", NO_RUN, ids=[block.where for block in NO_RUN])
def test_a_block_that_cannot_run_says_why(block: Block) -> None:
    assert len(block.attributes["no-run"].split()) >= 3, block.where
