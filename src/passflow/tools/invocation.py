"""What one passflow-opt command line asks for, and the input it names.

`Invocation` holds the parsed flags, the individual pass flags and, once the
run starts, the validated pass-manager options, the executor and the cache
they imply; `read_input` and `split_chunks` read the input and cut it at
`--split-input-file` markers. Nothing here loads the IR or the pass manager:
`passflow-opt --version` needs this and the flags alone.
"""

from __future__ import annotations

import argparse
import errno
import io
import os
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from passflow.tools.pass_manager_options import PassManagerOptions
from passflow.tools.plugin_options import CommandLinePlugins

if TYPE_CHECKING:
    from passflow.cache.store import ResultCache
    from passflow.execution import ChildExecutor
    from passflow.sliced.scan import SourceSlices

__all__ = [
    "NO_PIPELINE_GRAPH",
    "PROG",
    "SPLIT_MARKER",
    "Invocation",
    "PassFlag",
    "read_input",
    "split_chunks",
    "write_chunks",
]

PROG = "passflow-opt"
"""The tool's name, before its own messages (`passflow-opt: ...`)."""

SPLIT_MARKER = "// -----"
"""The default `--split-input-file` and `--output-split-marker`."""

NO_PIPELINE_GRAPH = (
    "<unknown>:0: note: --dump-pipeline-graph: the pipeline holds no pipeline "
    "graph (a registered pipeline schedule, docs/graph.md), so there is nothing "
    "to dump"
)


@dataclass
class PassFlag:
    """An individual pass flag (`--cse`, `--canonicalize=top-down=false`)."""

    name: str
    options: str


@dataclass
class Invocation:
    """Everything the command line asked for, and the executor it implies."""

    args: argparse.Namespace
    pass_flags: list[PassFlag] = field(default_factory=lambda: list[PassFlag]())
    options: PassManagerOptions = field(default_factory=PassManagerOptions)
    """The pass-manager flags, validated (`run` fills it in)."""
    executor: ChildExecutor | None = None
    cache: ResultCache | None = None
    """The result cache (`--cache`), if asked for and usable (opened by the
    warm path when it missed, else by the run)."""
    scanned: dict[tuple[str, int], SourceSlices] = field(
        default_factory=lambda: dict[tuple[str, int], "SourceSlices"]()
    )
    """Each chunk's scan (by its text and first line) that the warm path
    made: the sliced run does not scan it again."""
    read: tuple[str, str] | None = None
    """The input's text and name as the warm path read them (`read_input`),
    when it missed: the run does not read the file again."""
    cache_salt: str = ""
    plugins: CommandLinePlugins = field(default_factory=CommandLinePlugins)
    """The plugins the command line loads (`--load-pass-plugin`, ...)."""


def split_chunks(text: str, marker: str | None) -> list[tuple[str, int]]:
    """The input's chunks (split at lines that are `marker`) with the line each
    starts on."""
    if not marker:
        return [(text, 1)]
    chunks: list[tuple[str, int]] = []
    current: list[str] = []
    start = 1
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        if line.strip() == marker:
            chunks.append(("".join(current), start))
            current = []
            start = number + 1
        else:
            current.append(line)
    chunks.append(("".join(current), start))
    return chunks


def write_chunks(args: argparse.Namespace, outputs: list[str], ok: bool) -> int:
    """Write the chunks' outputs to `-o`, joined by `--output-split-marker`
    (a failed chunk's output is empty): the exit status. As mlir-opt, no
    output file unless every chunk succeeded (stdout gets what there is)."""
    # Loaded at the end of a run, not to answer `--version`.
    from passflow.output_file import OutputFileError, write_output

    if not ok and args.output != "-":
        return 1
    separator = f"{args.output_split_marker}\n" if args.output_split_marker else ""
    try:
        write_output(args.output, separator.join(outputs))
    except OutputFileError as err:
        sys.stderr.write(f"{err}\n")
        return 1
    return 0 if ok else 1


def read_input(path: str) -> tuple[str, str]:
    """The input text and its name in diagnostics.

    mlir-opt reads bytes, so a byte that is not UTF-8 is an error where the
    lexer meets it (`unexpected character`), not a decoding exception: such a
    byte reads as U+FFFD, which no token contains.
    """
    if path == "-":
        if sys.stdin is None or sys.stdin.closed:  # started with stdin closed
            raise OSError(errno.EBADF, os.strerror(errno.EBADF))
        buffer = getattr(sys.stdin, "buffer", None)
        if buffer is None:  # a text stream put in place of stdin
            return sys.stdin.read(), "<stdin>"
        stream = io.TextIOWrapper(buffer, encoding="utf-8", errors="replace")
        text = stream.read()
        stream.detach()  # leave sys.stdin open
        return text, "<stdin>"
    with open(path, encoding="utf-8", errors="replace") as stream:
        return stream.read(), path
