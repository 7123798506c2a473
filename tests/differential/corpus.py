"""xDSL's shipped filecheck tests: their RUN lines, and which of them passflow can run.

A RUN line is *applicable* when its first command is `xdsl-opt` on the test file
with a pass pipeline (`-p`/`--passes`) and no flag that passflow-opt has no
counterpart for. Every other RUN line is kept too, with the reason it is not
applicable, so the suite can count it: nothing is dropped silently.

Flags are read by xDSL's own argument parser (`xDSLOptMain`), so abbreviations
(`--verify-diagnostic`) and spellings (`--passes=`) mean what they mean to
`xdsl-opt`.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import NoReturn

import xdsl
from xdsl.xdsl_opt_main import xDSLOptMain

__all__ = [
    "CORPUS",
    "Case",
    "Chunk",
    "NotApplicable",
    "RunLine",
    "discover",
    "split_chunks",
]

CORPUS = Path(xdsl.__file__).resolve().parent.parent / "tests" / "filecheck"
"""The filecheck tests the xDSL wheel installs beside the `xdsl` package."""

_RUN = re.compile(r"^\s*(?://|#|;)\s*RUN:\s?(.*)$")
_XDSL_MARKER = b"// -----"


@dataclass(frozen=True)
class RunLine:
    """One RUN command (continuation lines joined) of one test file."""

    path: str
    """The file, relative to `CORPUS` (`dialects/arith/canonicalize.mlir`)."""
    line: int
    """The line the RUN command starts on (1-based)."""
    command: str


@dataclass(frozen=True)
class NotApplicable:
    """A RUN line the suite does not run, and why."""

    run: RunLine
    reason: str


@dataclass(frozen=True)
class Chunk:
    """One `// -----` piece of the input, as xDSL splits it."""

    number: int
    """1-based position in the file."""
    line: int
    """The line of the file the chunk starts on (1-based)."""
    text: str


@dataclass(frozen=True)
class Case:
    """An applicable RUN line: what xdsl-opt was asked, and its passflow-opt form."""

    run: RunLine
    input: Path
    """The file xdsl-opt reads (usually the test file itself)."""
    xdsl_argv: tuple[str, ...]
    """xdsl-opt's arguments, lit's `%s`/`%S`/`%p` substituted, the input file
    left out (the harness gives each chunk to the tool itself)."""
    pipeline: str
    """The xDSL pipeline text, as given to `-p`."""
    split: bool
    allow_unregistered: bool
    generic: bool
    no_implicit_module: bool

    @property
    def id(self) -> str:
        return f"{self.run.path}:{self.run.line}"


def run_lines(path: Path) -> list[RunLine]:
    """The RUN commands of one file, continuation lines (`\\` at the end) joined."""
    found: list[RunLine] = []
    pending: list[str] = []
    start = 0
    relative = path.relative_to(CORPUS).as_posix()
    for number, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
        match = _RUN.match(text)
        if match is None:
            continue
        body = match.group(1).rstrip()
        if not pending:
            start = number
        if body.endswith("\\"):
            pending.append(body[:-1])
            continue
        pending.append(body)
        found.append(RunLine(relative, start, " ".join(pending).strip()))
        pending = []
    if pending:
        found.append(RunLine(relative, start, " ".join(pending).strip()))
    return found


def _stages(command: str) -> list[list[str]] | None:
    """The command's commands (pipe stages, or `;`/`&&` sequences) as argument
    lists, redirections (`2>&1`, `> %t`) dropped; None if the shell quoting is
    broken. Redirecting a stage's output changes nothing it computes."""
    try:
        lexer = shlex.shlex(command, posix=True, punctuation_chars="|&;<>")
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return None
    stages: list[list[str]] = [[]]
    redirect = False
    for token in tokens:
        if token in {"|", ";", "&&", "||", "&"}:
            stages.append([])
            redirect = False
        elif set(token) <= set("<>&"):
            if stages[-1] and stages[-1][-1].isdigit():
                stages[-1].pop()  # the `2` of `2>&1`
            redirect = True
        elif redirect:
            redirect = False  # the redirection's target
        else:
            stages[-1].append(token)
    return stages


class _ArgumentError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """xdsl-opt's flags; an error raises instead of exiting."""

    def error(self, message: str) -> NoReturn:
        raise _ArgumentError(message)


@cache
def _xdsl_parser() -> _Parser:
    """xdsl-opt's own argument parser (same flags, abbreviations, defaults)."""
    tool = xDSLOptMain.__new__(xDSLOptMain)
    tool.available_frontends = {}
    tool.available_passes = {}
    tool.available_targets = {}
    tool.register_all_frontends()
    tool.register_all_passes()
    tool.register_all_targets()
    parser = _Parser(add_help=False)
    tool.register_all_arguments(parser)
    return parser


# What the suite does with each xdsl-opt flag (argparse `dest`).
# Accepted: they have a passflow-opt counterpart or only change how xdsl-opt
# reports a chunk's error, which the harness captures per chunk anyway.
_ACCEPTED = {
    "passes",
    "input_file",
    "allow_unregistered_dialect",
    "print_op_generic",
    "split_input_file",
    "no_implicit_module",
    "verify_diagnostics",
    "parsing_diagnostics",
}
# Not applicable: (dest, reason). The reason is what the summary prints.
_NOT_APPLICABLE: dict[str, str] = {
    "target": "-t/--target other than mlir: passflow-opt prints MLIR only",
    "output_file": "-o: the output goes to a file a later command reads",
    "print_between_passes": "--print-between-passes: no passflow-opt counterpart "
    "(--mlir-print-ir-after-all prints MLIR's dump headers)",
    "time_passes": "--time-passes: no counterpart (--mlir-timing reports differ)",
    "print_debuginfo": "--print-debuginfo: passflow-opt prints no locations",
    "print_no_properties": "--print-no-properties: no passflow-opt counterpart",
    "syntax_highlight": "--syntax-highlight: no passflow-opt counterpart",
    "disable_verify": "--disable-verify: no passflow-opt counterpart "
    "(and it patches xDSL's Attribute globally)",
    "shrink": "--shrink: a test-case reducer mode",
    "frontend": "-f/--frontend: passflow-opt reads MLIR only",
    "version": "--version: no pass pipeline",
}


# Directories xDSL's lit configuration runs only when an external tool is there
# (their `lit.local.cfg`). The suite never depends on what is on PATH: they are
# not applicable wherever it runs.
_LIT_UNSUPPORTED: dict[str, str] = {
    "mlir-conversion/with-mlir/": "needs MLIR's mlir-opt (lit: XDSL_MLIR_OPT)",
    "with-heir/": "needs heir-opt (lit.local.cfg)",
    "projects/pyjit/": "needs mlir-opt and llvmlite (lit.local.cfg)",
    "backend/llvm/": "needs llvmlite (lit.local.cfg)",
}


def _substitute(arg: str, run: RunLine) -> str:
    """lit's substitutions: `%s` the test file, `%S` and `%p` its directory."""
    path = CORPUS / run.path
    return (
        arg.replace("%s", str(path))
        .replace("%S", str(path.parent))
        .replace("%p", str(path.parent))
    )


def classify(run: RunLine) -> Case | NotApplicable:
    """The case a RUN line describes, or why the suite does not run it."""
    for folder, reason in _LIT_UNSUPPORTED.items():
        if run.path.startswith(folder):
            return NotApplicable(run, f"unsupported by xDSL's lit here: {reason}")
    stages = _stages(run.command)
    if stages is None or not stages[0]:
        return NotApplicable(run, "RUN line is not a plain pipe of commands")
    first = stages[0]
    if first[0] == "not":
        first = first[1:]
    later = any(
        stage[:1] == ["xdsl-opt"] and _has_pipeline(stage) for stage in stages[1:]
    )
    if not first or first[0] != "xdsl-opt":
        if later:
            return NotApplicable(run, "pass pipeline reads another tool's output")
        tool = first[0] if first else "?"
        return NotApplicable(run, f"not an xdsl-opt run ({tool})")
    if not _has_pipeline(first):
        if later:
            return NotApplicable(run, "pass pipeline reads another tool's output")
        return NotApplicable(run, "no pass pipeline (-p): a parser/printer test")
    if any("%t" in arg or "%T" in arg for arg in first):
        return NotApplicable(run, "uses lit's temporary files (%t)")
    argv = [_substitute(arg, run) for arg in first[1:]]
    try:
        namespace = _xdsl_parser().parse_args(argv)
    except _ArgumentError as err:
        return NotApplicable(run, f"xdsl-opt rejects the command line: {err}")
    values = vars(namespace)
    if values["input_file"] is None:
        return NotApplicable(run, "xdsl-opt reads stdin, not a file")
    for dest, reason in _NOT_APPLICABLE.items():
        value = values.get(dest)
        if dest == "target":
            if value != "mlir":
                return NotApplicable(run, reason)
        elif value not in (None, False):
            return NotApplicable(run, reason)
    unknown = sorted(
        dest
        for dest, value in values.items()
        if dest not in _ACCEPTED
        and dest not in _NOT_APPLICABLE
        and value not in (None, False)
    )
    if unknown:
        return NotApplicable(run, f"xdsl-opt flags the suite does not know: {unknown}")
    source = Path(values["input_file"])
    return Case(
        run=run,
        input=source,
        xdsl_argv=tuple(arg for arg in argv if arg != values["input_file"]),
        pipeline=str(values["passes"]),
        split=bool(values["split_input_file"]),
        allow_unregistered=bool(values["allow_unregistered_dialect"]),
        generic=bool(values["print_op_generic"]),
        no_implicit_module=bool(values["no_implicit_module"]),
    )


def _has_pipeline(stage: list[str]) -> bool:
    return any(
        arg in {"-p", "--passes"}
        or arg.startswith(("--passes=", "-p="))
        or (arg.startswith("-p") and not arg.startswith("--") and len(arg) > 2)
        for arg in stage
    )


@cache
def discover() -> tuple[tuple[Case, ...], tuple[NotApplicable, ...]]:
    """Every RUN line of the corpus: the applicable cases, and the rest with
    reasons, both in file order."""
    if not CORPUS.is_dir():
        raise FileNotFoundError(
            f"xDSL's filecheck tests are not installed at {CORPUS}; the xdsl wheel "
            "ships them beside the xdsl package"
        )
    cases: list[Case] = []
    skipped: list[NotApplicable] = []
    for path in sorted(CORPUS.rglob("*.mlir")):
        for run in run_lines(path):
            found = classify(run)
            if isinstance(found, Case):
                cases.append(found)
            else:
                skipped.append(found)
    return tuple(cases), tuple(skipped)


def split_chunks(source: bytes, split: bool) -> list[Chunk]:
    """The input as `xdsl-opt` splits it: at every `// -----`, even inside a line
    (xDSLOptMain.prepare_input). Both tools are given the same chunks."""
    if not split:
        return [Chunk(1, 1, source.decode())]
    chunks: list[Chunk] = []
    line = 1
    for number, piece in enumerate(source.split(_XDSL_MARKER), 1):
        chunks.append(Chunk(number, line, piece.decode()))
        line += piece.count(b"\n")
    return chunks
