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

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
"""Every page whose blocks the tests run."""

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
