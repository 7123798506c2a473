"""Every shell block of README.md and docs/*.md runs, and prints what it shows.

A page's shell blocks run in order in one temporary directory that looks like a
fresh clone after `make demo`: it holds `examples/` and `.venv` (links to the
repository's) and every block marked `{file=NAME}` above the block that runs,
nothing else. Each block runs as written, in a fresh shell whose PATH holds no
passflow tool, with only the README's setup line (`SETUP`) run first. A block
of `$ command` lines is a transcript, fenced `console`: it shows each command's
output (stdout and stderr, as a terminal shows them; a `...` line stands for
any lines), and the output must be that. A block without prompts is a script:
it must exit 0. `{no-run="why"}` says why a block cannot run here
(tests/docs_blocks.py describes the markers).
"""

from __future__ import annotations

import os
import re
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


SETUP = 'export PATH="$PWD/.venv/bin:$PATH"'
"""The README's one instruction for finding the commands, applied to every block."""


def _workspace(directory: Path) -> dict[str, str]:
    (directory / "examples").symlink_to(ROOT / "examples")
    (directory / ".venv").symlink_to(BIN.parent)
    path = [
        entry
        for entry in os.environ["PATH"].split(os.pathsep)
        if entry and not (Path(entry) / "passflow-opt").exists()
    ]
    return {**os.environ, "PATH": os.pathsep.join(path)}


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
                ["bash", "-o", "pipefail", "-c", f"{SETUP}\n{command}"],
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
        ["bash", "-e", "-u", "-o", "pipefail", "-c", f"{SETUP}\n{block.code}"],
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


def test_the_readme_gives_the_setup_the_blocks_run_with() -> None:
    assert (
        f"\n{SETUP}    # or: source .venv/bin/activate\n"
        in (ROOT / "README.md").read_text()
    )


SHELL_BLOCKS = [block for block in all_blocks() if block.language in SHELL]


@pytest.mark.parametrize(
    "block", SHELL_BLOCKS, ids=[block.where for block in SHELL_BLOCKS]
)
def test_a_transcript_is_fenced_console_and_a_script_is_not(block: Block) -> None:
    transcript = block.code.startswith("$ ")
    assert transcript == (block.language == "console"), (
        f"{block.where}: a block of `$ command` lines and their output is fenced "
        "`console`; a script is fenced `sh`"
    )
