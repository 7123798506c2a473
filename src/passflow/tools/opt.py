"""passflow-opt: mlir-opt's pass-infrastructure command line, on passflow.

The flags, pipeline text, dumps and error messages are mlir-opt's, so a command
line, a reproducer or a habit moves between the two tools. The input file is
never modified and the output is written (atomically) only when every pass
succeeded.

The tool is thin: the pass-manager flags (verifier, crash reproducer, statistics,
IR printing, executor, progress) are `passflow.tools.pass_manager_options`'s, a
layer any tool can use; the action and remark flags live in `action_options`
and `remark_options`. What stays here is mlir-opt's own: input and output,
chunks, diagnostics verification, timing across chunks, and reproducer replay
and generation.
"""

from __future__ import annotations

import argparse
import errno
import gc
import io
import os
import sys
from collections.abc import Iterator, Sequence
from typing import NoReturn

import xdsl

import passflow
from passflow import registry
from passflow.deep_stack import call_with_deep_stack
from passflow.diagnostics import PassflowError
from passflow.executors import DaskExecutor
from passflow.executors.dask import quiet_dask_logging
from passflow.instruments.chrome_trace import ChromeTrace
from passflow.instruments.timing import TimingManager
from passflow.output_file import OutputFileError, write_output
from passflow.source_diagnostics import (
    DiagnosticVerifier,
    SourceDiagnosticPrinter,
    VerifyLevel,
)
from passflow.tools.action_options import add_action_flags
from passflow.tools.cache_options import (
    add_cache_flags,
    cache_maintenance,
    cache_salt,
    open_cache,
)
from passflow.tools.chunk import (
    NO_PIPELINE_GRAPH,
    ChunkRun,
    Invocation,
    PassFlag,
    Reports,
    error_with_note,
)
from passflow.tools.command_line import (
    CommandLineError,
    FlagParser,
    check_choice,
    dashes,
)
from passflow.tools.hints import pass_names, threading_note
from passflow.tools.pass_doc import generate_markdown, list_passes, pass_help
from passflow.tools.pass_manager_options import (
    PassManagerOptions,
    add_pass_manager_flags,
)
from passflow.tools.remark_options import add_remark_flags

__all__ = ["NO_PIPELINE_GRAPH", "Invocation", "main", "run"]

PROG = "passflow-opt"
SPLIT_MARKER = "// -----"


class UsageError(Exception):
    """A command-line error: printed as `passflow-opt: <message>`, exit code 1."""


def build_parser() -> FlagParser:
    parser = FlagParser(
        prog=PROG,
        add_help=False,
        description="MLIR's pass manager on the xDSL IR (mlir-opt compatible flags).",
    )
    add = parser.add_option
    flag = parser.add_flag
    add("input", nargs="?", default="-", help="input file ('-' for stdin)")
    add("-o", dest="output", default="-", metavar="FILE", help="output file")
    add(
        "-p",
        "--pass-pipeline",
        dest="pass_pipeline",
        metavar="PIPELINE",
        help="textual pass pipeline, e.g. 'builtin.module(func.func(cse))'",
    )
    add(
        "--pass-pipeline-anchor",
        metavar="OP",
        help="run the individual pass flags on every OP at any depth, as "
        "'**OP(...)' in a pipeline",
    )
    flag(
        "--dump-pass-pipeline",
        help="print the pipeline that will run to stderr",
    )
    add(
        "--dump-pipeline-graph",
        choices=("dot", "json"),
        metavar="FORMAT",
        help="print the graph of every pipeline schedule in the pipeline to stderr, "
        "as Graphviz DOT or JSON (dot, json)",
    )
    flag(
        "--allow-unregistered-dialect",
        help="allow operations of unknown dialects",
    )
    flag(
        "--mlir-print-op-generic",
        help="print the output in generic op form",
    )
    parser.add_value_optional(
        "--split-input-file",
        bare=SPLIT_MARKER,
        metavar="MARKER",
        help=f"process chunks separated by MARKER (default '{SPLIT_MARKER}') "
        "independently",
    )
    add(
        "--output-split-marker",
        default=SPLIT_MARKER,
        metavar="MARKER",
        help=f"the marker between the outputs of chunks (default '{SPLIT_MARKER}')",
    )
    parser.add_value_optional(
        "--verify-diagnostics",
        bare="",
        metavar="all|only-expected",
        help="check that emitted diagnostics match expected-* lines on the "
        "corresponding line (all: expected, unexpected and near misses; "
        "only-expected: expected ones only)",
    )
    flag(
        "--mlir-very-unsafe-disable-verifier-on-parsing",
        help="do not verify the IR after parsing it",
    )
    flag(
        "--no-implicit-module",
        help="do not wrap the input in an implicit builtin.module",
    )
    flag(
        "--allow-unsafe-passes",
        help="let a reproducer's pipeline run passes that start programs or read "
        "files (xDSL's mlir-opt, apply-pdl{pdl_file=...}, ...): only for files "
        "you trust",
    )
    add(
        "--mlir-generate-reproducer",
        metavar="FILE",
        help="after a successful run, write the output IR and pipeline as a reproducer",
    )
    flag(
        "--run-reproducer",
        help="run the pipeline and flags stored in the input's mlir_reproducer resource",
    )
    flag("--mlir-timing", help="print an execution time report")
    add(
        "--mlir-timing-display",
        default="tree",
        metavar="list|tree",
        help="timing report layout (default tree)",
    )
    add(
        "--mlir-output-format",
        default="text",
        metavar="text|json",
        help="timing report format (default text)",
    )
    add(
        "--timing-trace",
        metavar="FILE",
        help="write a Chrome trace-event JSON of every pass on every op (Perfetto)",
    )
    add_pass_manager_flags(parser)
    flag("--list-passes", help="list registered passes and exit")
    flag(
        "--gen-pass-doc",
        help="print Markdown documentation of every registered pass and exit",
    )
    add_action_flags(parser)
    add_remark_flags(parser)
    add_cache_flags(parser)
    flag("--version", help="print passflow's and xDSL's versions and exit")
    flag("-h", "--help", help="show this help and exit")
    return parser


def pass_flag_names() -> Iterator[str]:
    """`--NAME` for every pass and pipeline, computed only when iterated (for
    llvm::cl's "Did you mean" after an unknown flag)."""
    for name in pass_names():
        yield f"--{name}"


def parse_command_line(argv: Sequence[str]) -> Invocation:
    parser = build_parser()
    rest: list[str] = []
    flags: list[PassFlag] = []
    for arg in map(dashes, argv):
        if arg.startswith("--"):
            name, _, value = arg[2:].partition("=")
            if "--" + name not in parser.known and registry.lookup(name) is not None:
                flags.append(PassFlag(name, value))
                continue
        rest.append(arg)
    try:
        args = parser.parse_command_line(rest, pass_flag_names())
    except CommandLineError as err:
        raise UsageError(str(err)) from None
    return Invocation(args, flags)


# --- diagnostics --------------------------------------------------------------


# --- running ------------------------------------------------------------------


def check_tool_flags(args: argparse.Namespace) -> PassManagerOptions:
    """Validate flag values with llvm::cl's messages, as mlir-opt does: the
    tool's own flags, then the pass-manager flags, whose options are returned."""
    if args.verify_diagnostics is not None:
        check_choice(
            "verify-diagnostics", args.verify_diagnostics, ("", "all", "only-expected")
        )
    check_choice("mlir-timing-display", args.mlir_timing_display, ("list", "tree"))
    check_choice("mlir-output-format", args.mlir_output_format, ("text", "json"))
    return PassManagerOptions.from_args(args)


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


def print_help(parser: argparse.ArgumentParser) -> None:
    parser.print_help(sys.stdout)
    sys.stdout.write(
        "\nPasses and pipelines (use as --NAME[=OPTIONS] or in --pass-pipeline):\n\n"
    )
    sys.stdout.write(pass_help())


def version_text() -> str:
    """`--version`, in mlir-opt's layout (`LLVM (http://llvm.org/):` and an
    indented version line), with the xDSL release passflow runs on."""
    return (
        f"passflow:\n  passflow version {passflow.__version__}\n"
        f"  xDSL version {xdsl.__version__}\n"
    )


def run(inv: Invocation) -> int:
    args = inv.args
    if args.version:
        sys.stdout.write(version_text())
        return 0
    if args.help:
        print_help(build_parser())
        return 0
    if args.list_passes:
        sys.stdout.write(list_passes())
        return 0
    if args.gen_pass_doc:
        sys.stdout.write(generate_markdown())
        return 0
    maintained = cache_maintenance(args)
    if maintained is not None:
        return maintained
    inv.options = options = check_tool_flags(args)
    registry.load_plugins()  # before timing starts: mlir-opt registers passes first
    try:
        text, name = read_input(args.input)
    except OSError as err:  # mlir-opt's message, without a program name
        sys.stderr.write(f"cannot open input file '{args.input}': {err.strerror}\n")
        return 1
    printer = SourceDiagnosticPrinter(sys.stderr, name, text)
    reports = Reports(
        TimingManager(args.mlir_timing_display, args.mlir_output_format)
        if args.mlir_timing
        else None,
        ChromeTrace() if args.timing_trace else None,
    )
    outputs: list[str] = []
    ok = True
    inv.executor = executor = options.make_executor()
    if isinstance(executor, DaskExecutor):
        quiet_dask_logging()
    try:
        options.check_executor(executor)
    except PassflowError as err:
        sys.stderr.write(f"{error_with_note(str(err), threading_note(str(err)))}\n")
        if executor is not None:
            executor.close()
        return 1
    inv.cache = open_cache(args)
    inv.cache_salt = cache_salt(args, [f"{f.name}={f.options}" for f in inv.pass_flags])
    try:
        for chunk, first_line in split_chunks(text, args.split_input_file):
            level = args.verify_diagnostics
            if level is None:
                result = ChunkRun(inv, chunk, first_line, name, printer, reports).run()
                ok = ok and result is not None
            else:  # as mlir-opt, only the verifier's verdict counts
                verifier = DiagnosticVerifier(
                    name, chunk, printer, VerifyLevel(level or "all"), first_line
                )
                result = ChunkRun(inv, chunk, first_line, name, verifier, reports).run()
                ok = verifier.verify() and ok
            outputs.append(result or "")
    finally:  # reports also after a failure or an interrupt
        reports.finish(args.timing_trace)
        if inv.executor is not None:
            inv.executor.close()
        if inv.cache is not None:
            for warning in inv.cache.warnings:
                sys.stderr.write(f"{PROG}: warning: {warning}\n")
            inv.cache.close()
    if not ok and args.output != "-":
        return 1  # as mlir-opt, no output file unless every chunk succeeded
    separator = f"{args.output_split_marker}\n" if args.output_split_marker else ""
    try:
        write_output(args.output, separator.join(outputs))
    except OutputFileError as err:
        sys.stderr.write(f"{err}\n")
        return 1
    return 0 if ok else 1


def fail(message: str) -> NoReturn:
    sys.stderr.write(f"{PROG}: {message}\n")
    raise SystemExit(1)


def main(argv: Sequence[str] | None = None) -> int:
    # xDSL IR is a web of parent/use cycles that lives until the process exits;
    # the cyclic collector would walk it again and again for nothing (about 12%
    # of a canonicalize+cse run on 1,000 functions, for 4% less memory).
    gc.disable()
    return call_with_deep_stack(lambda: _main(argv))


def _main(argv: Sequence[str] | None) -> int:
    try:
        inv = parse_command_line(sys.argv[1:] if argv is None else argv)
        return run(inv)
    except UsageError as err:
        fail(str(err))
    except PassflowError as err:  # CommandLineError too: llvm::cl's messages
        fail(str(err))
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:  # `passflow-opt --help | head`: the reader left
        sys.stderr.close()
        return 1


if __name__ == "__main__":
    sys.exit(main())
