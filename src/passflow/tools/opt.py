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

This module declares the flags and answers `--version` and `--help`; the run
itself (`opt_run`, `chunk`) loads only when the command line asks for one, and
then only what the flags and the input need (docs/performance.md), so that a
test suite that starts passflow-opt once per RUN line pays little for start-up.
"""

from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NoReturn

import xdsl

import passflow
from passflow.deep_stack import call_with_deep_stack
from passflow.diagnostics import PassflowError
from passflow.tools.action_options import add_action_flags
from passflow.tools.cache_options import add_cache_flags, cache_requested
from passflow.tools.command_line import CommandLineError, FlagParser, dashes
from passflow.tools.invocation import (
    NO_PIPELINE_GRAPH,
    PROG,
    SPLIT_MARKER,
    Invocation,
    PassFlag,
    read_input,
)
from passflow.tools.pass_manager_options import add_pass_manager_flags
from passflow.tools.plugin_options import (
    CommandLinePlugins,
    add_plugin_flags,
    load_dialect_sources,
    register_for,
    show_dialects,
)
from passflow.tools.print_flags import add_print_flags
from passflow.tools.remark_options import add_remark_flags

if TYPE_CHECKING:
    from passflow.tools.pass_listing import PassGroup

__all__ = [
    "NO_PIPELINE_GRAPH",
    "Invocation",
    "main",
    "read_input",
    "reads_stdin",
    "run",
]


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
    add_print_flags(parser)
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
    add_plugin_flags(parser)
    flag("--version", help="print passflow's and xDSL's versions and exit")
    flag("-h", "--help", help="show this help and exit")
    return parser


def pass_flag_names() -> Iterator[str]:
    """`--NAME` for every pass and pipeline, computed only when iterated (for
    llvm::cl's "Did you mean" after an unknown flag)."""
    from passflow.tools.hints import pass_names  # on an error only

    for name in pass_names():
        yield f"--{name}"


def names_a_pass(name: str, plugins: CommandLinePlugins) -> bool:
    """Whether `--NAME`, a flag the tool does not declare, is an individual
    pass flag: a registered pass or pipeline (passflow's or a plugin's)."""
    # The registry (with the pass manager and the IR) loads for such a flag or
    # for a run, not to answer `--version`.
    register_for(plugins)
    from passflow import registry

    return registry.lookup(name) is not None


def parse_command_line(argv: Sequence[str]) -> Invocation:
    parser = build_parser()
    plugins = CommandLinePlugins.of(argv)
    rest: list[str] = []
    flags: list[PassFlag] = []
    for arg in map(dashes, argv):
        if arg.startswith("--"):
            name, _, value = arg[2:].partition("=")
            if "--" + name not in parser.known and names_a_pass(name, plugins):
                flags.append(PassFlag(name, value))
                continue
        rest.append(arg)
    try:
        args = parser.parse_command_line(rest, pass_flag_names())
    except CommandLineError as err:
        raise UsageError(str(err)) from None
    return Invocation(args, flags, plugins=plugins)


def print_help(parser: argparse.ArgumentParser, plugins: CommandLinePlugins) -> None:
    from passflow.tools.pass_listing import format_pass_groups

    parser.print_help(sys.stdout)
    sys.stdout.write(
        "\nPasses and pipelines (use as --NAME[=OPTIONS] or in --pass-pipeline):\n\n"
    )
    groups = pass_listing(plugins, options=True)
    sys.stdout.write(format_pass_groups(groups, prefix="--", options=True))


def pass_listing(plugins: CommandLinePlugins, *, options: bool) -> list[PassGroup]:
    """Every pass, grouped, with the command line's plugins: from the cache when
    it is current (no pass imported, no plugin loaded), else registered here."""
    from passflow.tools.help_cache import pass_groups  # the listing, cached

    return pass_groups(
        options=options, variant=plugins.identity, prepare=lambda: register_for(plugins)
    )


def version_text() -> str:
    """`--version`, in mlir-opt's layout (`LLVM (http://llvm.org/):` and an
    indented version line), with the xDSL release passflow runs on."""
    return (
        f"passflow:\n  passflow version {passflow.__version__}\n"
        f"  xDSL version {xdsl.__version__}\n"
    )


def run(inv: Invocation) -> int:
    """Do what the command line asks for: the exit status."""
    args = inv.args
    if args.version:
        sys.stdout.write(version_text())
        return 0
    if args.help:
        print_help(build_parser(), inv.plugins)
        return 0
    if args.list_passes:
        from passflow.tools.pass_listing import format_pass_groups

        groups = pass_listing(inv.plugins, options=False)
        sys.stdout.write(format_pass_groups(groups, prefix="", options=False))
        return 0
    if args.show_dialects or args.gen_pass_doc:
        register_for(inv.plugins)
        load_dialect_sources(args)
        if args.show_dialects:
            sys.stdout.write(show_dialects())
        else:
            from passflow.tools.pass_doc import generate_markdown  # every pass

            sys.stdout.write(generate_markdown())
        return 0
    if cache_requested(args) and inv.plugins.empty and not args.irdl_file:
        # A run the cache holds in full is printed from it, before the run's
        # modules load (docs/cache.md); any other goes on below.
        from passflow.tools.warm_cache import replay_from_cache

        status = replay_from_cache(inv)
        if status is not None:
            return status
    register_for(inv.plugins)
    load_dialect_sources(args)
    # The run (the IR, the pass manager, the passes it names) loads here: the
    # command line asks for one.
    from passflow.tools.opt_run import run_input

    try:
        return run_input(inv)
    finally:
        if inv.cache is not None:  # the warm path's, should the run end early
            inv.cache.close()


def reads_stdin(argv: Sequence[str]) -> bool:
    """Whether passflow-opt with these arguments reads its input from stdin
    (its input is `-`, the default); True when they do not parse, so that a
    caller unsure of it assumes the input may be stdin."""
    try:
        args, _ = build_parser().parse_known_args([dashes(arg) for arg in argv])
    except (SystemExit, Exception):
        return True
    return getattr(args, "input", "-") == "-"


def fail(message: str) -> NoReturn:
    sys.stderr.write(f"{PROG}: {message}\n")
    raise SystemExit(1)


def main(argv: Sequence[str] | None = None) -> int:
    # xDSL IR is a web of parent/use cycles that lives until the process exits;
    # the cyclic collector would walk it again and again for nothing (about 12%
    # of a canonicalize+cse run on 1,000 functions, for 4% less memory).
    gc.disable()
    status = call_with_deep_stack(lambda: _main(argv))
    if argv is None:
        # The program (`passflow-opt`, which reads sys.argv) is done and its
        # files are closed. At exit the interpreter collects every object
        # once more, even with the collector off: 20-30 ms of a one-function
        # run spent walking the dialects and passes for nothing. Frozen
        # objects are left out of that walk.
        gc.freeze()
    return status


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
