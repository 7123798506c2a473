"""The fenced code blocks of README.md and docs/*.md, for the tests that run them.

A fence's info string is a language and, optionally, attributes in braces, which
MkDocs (pymdownx.superfences) and GitHub both accept and do not show:

- `{excerpt=FILE}`: a condensed part of FILE, a program the test suite runs;
- `{continues}`: a Python block that goes on from the previous Python block of
  the page (they run, and type-check, as one program);
- `{file=NAME}`: the contents of NAME, written into the directory where the
  page's shell blocks run, before the next shell block runs;
- `{no-run="why"}`: a block that cannot run in the test suite, and why not.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
"""The venv's bin: where the tools the blocks run are."""
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""Every page whose blocks the tests run."""

SETUP = 'export PATH="$PWD/.venv/bin:$PATH"'
"""The README's one instruction for finding the commands, applied to every block."""

SHELL = frozenset({"sh", "shell", "bash", "console"})
ATTRIBUTES = frozenset({"excerpt", "continues", "file", "no-run"})

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>```+)(?P<info>[^\n`]*)\n(?P<code>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.M | re.S,
)
_INFO = re.compile(r"(?P<language>[\w+-]*)\s*(?:\{(?P<attributes>[^}]*)\})?\s*")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and attributes, its code."""

    page: Path
    line: int
    language: str
    attributes: dict[str, str]
    code: str

    @property
    def where(self) -> str:
        """`page:line` of the opening fence, for test ids and messages."""
        return f"{self.page.relative_to(ROOT)}:{self.line}"


class BlockSyntaxError(Exception):
    """A fence whose info string the tests cannot read."""


def _attributes(text: str, where: str) -> dict[str, str]:
    attributes: dict[str, str] = {}
    for word in shlex.split(text):
        key, _, value = word.partition("=")
        if key not in ATTRIBUTES:
            raise BlockSyntaxError(f"{where}: unknown block attribute {key!r}")
        attributes[key] = value
    return attributes


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of `page`, in order, indentation removed."""
    text = page.read_text()
    found: list[Block] = []
    for match in _FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        where = f"{page.relative_to(ROOT)}:{line}"
        info = _INFO.fullmatch(match["info"])
        if info is None:
            raise BlockSyntaxError(f"{where}: unreadable info string {match['info']!r}")
        indent = len(match["indent"])
        code = "".join(
            "\n" if not row.strip() else row[indent:]
            for row in match["code"].splitlines(keepends=True)
        )
        found.append(
            Block(
                page,
                line,
                info["language"],
                _attributes(info["attributes"] or "", where),
                code,
            )
        )
    return found


def all_blocks() -> list[Block]:
    """The blocks of every page."""
    return [block for page in PAGES for block in blocks(page)]


@dataclass(frozen=True)
class Program:
    """Python blocks that run as one program: a block and its continuations."""

    blocks: tuple[Block, ...]

    @property
    def where(self) -> str:
        return self.blocks[0].where

    @property
    def code(self) -> str:
        return "".join(block.code for block in self.blocks)


def python_programs() -> list[Program]:
    """The runnable Python programs of every page (excerpts and no-run
    blocks excluded; a `continues` block joins the program before it)."""
    programs: list[Program] = []
    for page in PAGES:
        current: list[Block] = []
        for block in blocks(page):
            if block.language != "python":
                continue
            if {"excerpt", "no-run", "file"} & set(block.attributes):
                if current:
                    programs.append(Program(tuple(current)))
                current = []
                continue
            if "continues" in block.attributes:
                if not current:
                    raise BlockSyntaxError(f"{block.where}: continues no Python block")
                current.append(block)
                continue
            if current:
                programs.append(Program(tuple(current)))
            current = [block]
        if current:
            programs.append(Program(tuple(current)))
    return programs


# --- transcripts: `$ command` lines and the output each shows ------------------


def _complete(command: str) -> bool:
    """Whether `command` is a whole shell command (not cut at a loop or `\\`)."""
    return (
        not command.endswith("\\\n")
        and subprocess.run(
            ["bash", "-n", "-c", command], capture_output=True
        ).returncode
        == 0
    )


def sessions(code: str) -> list[tuple[str, list[str]]]:
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


def matches(expected: list[str], actual: list[str]) -> bool:
    pattern = "".join(
        r"(?:.*\n)*?" if line == "..." else re.escape(line) + r"\n" for line in expected
    )
    return re.fullmatch(pattern, "".join(f"{line}\n" for line in actual)) is not None


def run_block(block: Block, directory: Path, env: dict[str, str]) -> None:
    """Run a shell block in `directory` with `env` after `SETUP`: a transcript's
    commands must print what it shows, a script must exit 0."""
    if block.code.startswith("$ "):
        for command, expected in sessions(block.code):
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
            assert matches(expected, actual), (
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


def workspace(directory: Path) -> dict[str, str]:
    """Make `directory` look like a fresh clone after `make demo` (`examples/`,
    `bench/` and `.venv` linked to the repository's), and the environment of a
    shell there whose PATH holds no passflow tool."""
    (directory / "examples").symlink_to(ROOT / "examples")
    (directory / "bench").symlink_to(ROOT / "bench")
    (directory / ".venv").symlink_to(BIN.parent)
    path = [
        entry
        for entry in os.environ["PATH"].split(os.pathsep)
        if entry and not (Path(entry) / "passflow-opt").exists()
    ]
    return {**os.environ, "PATH": os.pathsep.join(path)}
