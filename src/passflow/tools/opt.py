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
import contextlib
import errno
import gc
import io
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NoReturn

import xdsl

import passflow
from passflow import ir, registry
from passflow.deep_stack import call_with_deep_stack
from passflow.diagnostics import (
    Diagnostic,
    DiagnosticHandler,
    IRParseError,
    Location,
    PassflowError,
    PassPipelineError,
    PipelineParseError,
    Severity,
)
from passflow.execution import ChildExecutor
from passflow.executors import DaskExecutor, ProcessExecutor, ShippingExecutor
from passflow.executors.dask import quiet_dask_logging
from passflow.executors.forking import DEFAULT_SERIAL_BUDGET
from passflow.instruments.chrome_trace import ChromeTrace
from passflow.instruments.reproducer import (
    ReplayWitness,
    format_reproducer,
    read_reproducer,
    write_reproducer,
)
from passflow.instruments.timing import TimingManager, TimingScope
from passflow.manager import Nesting, OpPassManager
from passflow.output_file import OutputFileError, write_output
from passflow.pass_manager import PassManager
from passflow.pipeline_text import add_pass_flag, parse_pass_pipeline
from passflow.sliced.run import Fallback, run_sliced
from passflow.sliced.shipped import ExecutorLostError, shipped_runner
from passflow.source_diagnostics import (
    DiagnosticVerifier,
    SourceDiagnosticPrinter,
    VerifyLevel,
)
from passflow.tools.action_options import action_session, add_action_flags
from passflow.tools.command_line import (
    CommandLineError,
    FlagParser,
    check_choice,
    dashes,
)
from passflow.tools.hints import (
    parse_error_note,
    pass_names,
    pipeline_error_note,
    threading_note,
)
from passflow.tools.pass_doc import generate_markdown, list_passes, pass_help
from passflow.tools.pass_manager_options import (
    PassManagerOptions,
    add_pass_manager_flags,
)
from passflow.tools.remark_options import add_remark_flags, remark_session
from passflow.tools.sliced_options import replay_events, sliced_jobs
from passflow.trust import UnsafePassError, untrusted

PROG = "passflow-opt"
SPLIT_MARKER = "// -----"


NO_PIPELINE_GRAPH = (
    "<unknown>:0: note: --dump-pipeline-graph: the pipeline holds no pipeline "
    "graph (a registered pipeline schedule, docs/graph.md), so there is nothing "
    "to dump"
)


class UsageError(Exception):
    """A command-line error: printed as `passflow-opt: <message>`, exit code 1."""


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


def pipeline_error(
    handler: DiagnosticHandler, err: PipelineParseError, inv: Invocation
) -> None:
    """A pipeline error as mlir-opt reports it: llvm::cl lines raw, then one
    diagnostic at unknown location holding the parser's whole message; then a
    "did you mean" note for a misspelt pass or option."""
    for line in err.cl_messages:
        sys.stderr.write(f"{line}\n")
    diagnostic = Diagnostic(Severity.ERROR, err.render())
    note = pipeline_error_note(
        err, inv.args.pass_pipeline, (flag.name for flag in inv.pass_flags)
    )
    if note is not None and hints_wanted(inv.args):
        diagnostic.attach_note(note)
    handler(diagnostic)


def hints_wanted(args: argparse.Namespace) -> bool:
    """Whether to add the notes that say how to fix an error: not under
    `--verify-diagnostics`, where a test file written for mlir-opt expects
    mlir-opt's diagnostics and no others."""
    return args.verify_diagnostics is None


def error_with_note(message: str, note: str | None) -> Diagnostic:
    """An error at unknown location, with `note` (how to fix it) if there is one."""
    diagnostic = Diagnostic(Severity.ERROR, message)
    if note is not None:
        diagnostic.attach_note(note)
    return diagnostic


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


@dataclass
class Reports:
    """Reports that span every input chunk: timing (with the tool's own `Parser`
    and `Output` timers) and the Chrome trace."""

    timing: TimingManager | None = None
    trace: ChromeTrace | None = None

    def timer(self, name: str) -> TimingScope | contextlib.nullcontext[None]:
        if self.timing is None:
            return contextlib.nullcontext()
        return self.timing.start_timer(name)

    def finish(self, trace_path: str | None) -> None:
        if self.timing is not None:
            self.timing.print_report()
        if self.trace is not None and trace_path is not None:
            self.trace.write(trace_path)


@dataclass
class Reproduced:
    """A reproducer's pipeline, parsed, and its flags."""

    pipeline: OpPassManager
    verify_each: bool
    disable_threading: bool

    def apply_flags(self, pm: PassManager) -> None:
        """The reproducer's flags, which override the command line's (mlir-opt
        applies them after `applyPassManagerCLOptions`)."""
        pm.enable_verifier(self.verify_each)
        if self.disable_threading:
            pm.executor = None


def reproducer_trust(
    args: argparse.Namespace,
) -> contextlib.AbstractContextManager[None]:
    """While a reproducer is read and replayed, passes that start programs or
    read files are refused (`passflow.trust`), unless `--allow-unsafe-passes`."""
    if args.run_reproducer and not args.allow_unsafe_passes:
        return untrusted("a reproducer")
    return contextlib.nullcontext()


def load_reproducer(top: ir.Operation) -> Reproduced | None:
    """The input's `mlir_reproducer` pipeline, if it has one; a malformed one raises
    (`PassflowError`), and the caller prints it raw, as mlir-opt does."""
    spec = read_reproducer(top)
    if spec is None:
        return None
    return Reproduced(
        parse_pass_pipeline(spec.pipeline), spec.verify_each, spec.disable_threading
    )


def build_pass_manager(
    inv: Invocation, anchor: str, ctx: ir.Context, reproducer: Reproduced | None
) -> PassManager:
    """The pipeline mlir-opt would build: a reproducer's pipeline, then
    `--pass-pipeline` (replacing) or pass flags (appended). The options and the
    reproducer's flags are applied later (`process_chunk`)."""
    args = inv.args
    pm = PassManager(anchor, ctx, nesting=Nesting.IMPLICIT, executor=inv.executor)
    if reproducer is not None:
        pm.assign(reproducer.pipeline)
        pm.nesting = Nesting.IMPLICIT
    if args.pass_pipeline is not None:
        if inv.pass_flags:
            raise PipelineParseError(
                "'-pass-pipeline' option can't be used with individual pass options"
            )
        pm.assign(parse_pass_pipeline(args.pass_pipeline))
    target: OpPassManager = pm
    if args.pass_pipeline_anchor and inv.pass_flags:
        target = pm.nest(args.pass_pipeline_anchor, recursive=True)
    for flag in inv.pass_flags:
        add_pass_flag(target, flag.name, flag.options)
    return pm


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


def parse_input(
    text: str, name: str, first_line: int, ctx: ir.Context, implicit: bool
) -> ir.Operation:
    module = ir.parse_module(text, ctx, name, first_line=first_line)
    if implicit or not ir.is_implicit_module(module):
        return module
    children = ir.direct_children(module)
    if len(children) != 1:
        message = (
            f"source must contain a single top-level operation, found: {len(children)}"
        )
        location = Location(name, 0, 0)
        raise IRParseError(
            f"{location}: error: {message}",
            Diagnostic(Severity.ERROR, message, location),
        )
    top = children[0]
    top.detach()
    return top


def sliced_chunk(
    inv: Invocation, text: str, first_line: int, name: str, handler: DiagnosticHandler
) -> str | Fallback | None:
    """Run one chunk sliced (`passflow.sliced`): its printed output, None on
    failure, or a `Fallback` when the chunk must run whole (`process_chunk`),
    which then reports whatever the sliced run could not stand for."""
    args = inv.args
    jobs = sliced_jobs(args, inv.executor)
    if jobs is None:
        return Fallback("the command line asks for a whole run")
    ctx = ir.default_context(allow_unregistered=args.allow_unregistered_dialect)
    try:
        pm = build_pass_manager(inv, "builtin.module", ctx, None)
        inv.options.apply(pm)
    except PassflowError as err:  # reported by the whole run
        return Fallback(str(err))
    pm.enable_emit_pass_error_on_failure(args.emit_pass_error_on_failure)
    executor = inv.executor
    remote = (
        shipped_runner(
            executor.executor,
            jobs,
            allow_unregistered=args.allow_unregistered_dialect,
            context_factory=executor.context_factory,
        )
        if isinstance(executor, ShippingExecutor)
        else None
    )
    try:
        outcome = run_sliced(
            text,
            name,
            pm,
            first_line=first_line,
            jobs=jobs,
            generic=args.mlir_print_op_generic,
            serial_budget=executor.serial_budget
            if isinstance(executor, ProcessExecutor)
            else DEFAULT_SERIAL_BUDGET,
            remote=remote,
        )
    except ExecutorLostError as err:
        where = f" '{args.scheduler}'" if args.scheduler else ""
        handler(
            error_with_note(
                str(err),
                f"check that the Dask scheduler{where} and its workers are running",
            )
        )
        return None
    if isinstance(outcome, Fallback):
        return outcome
    replay_events(outcome.events, handler)
    if outcome.failed:
        return None
    if outcome.module is not None:  # passes after the nested ones ran here
        return print_output(outcome.module, args.mlir_print_op_generic, True)
    return None if outcome.output is None else outcome.output + "\n"


def process_chunk(
    inv: Invocation,
    text: str,
    first_line: int,
    name: str,
    handler: DiagnosticHandler,
    reports: Reports,
) -> str | None:
    """Run the pipeline on one chunk; its printed output, or None on failure.

    Every diagnostic goes to `handler` (printed, or checked by the verifier)."""
    args = inv.args
    sliced = sliced_chunk(inv, text, first_line, name, handler)
    if not isinstance(sliced, Fallback):
        return sliced
    ctx = ir.default_context(allow_unregistered=args.allow_unregistered_dialect)
    try:
        with reports.timer("Parser"):
            top = parse_input(text, name, first_line, ctx, not args.no_implicit_module)
    except IRParseError as err:
        note = parse_error_note(err.diagnostic, ctx) if hints_wanted(args) else None
        if note is not None:
            err.diagnostic.attach_note(note)
        handler(err.diagnostic)
        return None
    if not args.mlir_very_unsafe_disable_verifier_on_parsing:
        problem = ir.verify(top)
        if problem is not None:
            handler(problem)
            return None
    try:
        with reproducer_trust(args):
            reproduced = load_reproducer(top) if args.run_reproducer else None
    except UnsafePassError as err:
        refusal = Diagnostic(Severity.ERROR, str(err), ir.location(top))
        refusal.attach_note(
            "if you trust this file, pass --allow-unsafe-passes to run it anyway"
        )
        handler(refusal)
        return None
    except PassflowError as err:
        sys.stderr.write(f"{err}\n")
        return None
    try:
        pm = build_pass_manager(inv, ir.operation_name(top).name, ctx, reproduced)
    except PipelineParseError as err:
        pipeline_error(handler, err, inv)
        return None
    if args.dump_pass_pipeline:
        pm.dump(sys.stderr)
        sys.stderr.write("\n")
    if args.dump_pipeline_graph is not None:
        from passflow.graph import dump_pipeline_graphs, find_schedules  # on first use

        if find_schedules(pm):
            sys.stderr.write(dump_pipeline_graphs(pm, args.dump_pipeline_graph))
        else:  # a report, like --dump-pass-pipeline: the run goes on
            sys.stderr.write(f"{NO_PIPELINE_GRAPH}\n")
    pm.add_diagnostic_handler(handler)
    # mlir-opt's order: the pass-manager options (crash reproducer first, IR
    # printer), then the reproducer's flags, then timing last.
    try:
        inv.options.apply(pm)
    except PassflowError as err:
        note = threading_note(str(err)) if hints_wanted(args) else None
        handler(error_with_note(str(err), note))
        return None
    witness: ReplayWitness | None = None
    if reproduced is not None:
        reproduced.apply_flags(pm)
        if hints_wanted(args):
            witness = ReplayWitness()
            pm.add_instrumentation(witness)
    if reports.trace is not None:
        pm.add_instrumentation(reports.trace)
    if reports.timing is not None:
        pm.enable_timing(reports.timing)
    try:
        with action_session(args, pm), remark_session(args, pm), reproducer_trust(args):
            pm.run(top)
    except PassPipelineError as err:
        verdict = witness.report(err.diagnostics) if witness is not None else None
        if verdict is not None:
            handler(verdict)
        return None
    with reports.timer("Output"):
        verified = (
            pm.verify_each and not args.mlir_very_unsafe_disable_verifier_on_parsing
        )
        output = print_output(top, args.mlir_print_op_generic, verified)
    if args.mlir_generate_reproducer:
        # mlir-opt 22 writes `printAsTextualPipeline` of the pass manager: `str(pm)`.
        content = format_reproducer(
            output, str(pm), disable_threading=False, verify_each=False
        )
        problem = write_reproducer(args.mlir_generate_reproducer, content)
        if problem is not None:
            sys.stderr.write(f"{problem}\n")
            return None
    metadata = "" if args.run_reproducer else ir.file_metadata(top)
    return output + (f"\n{metadata}\n" if metadata else "")


def print_output(top: ir.Operation, generic: bool, verified: bool) -> str:
    """The output IR, as mlir-opt prints it: IR that does not verify (possible
    only when the input or a pass went unverified) is printed in generic form,
    which needs no invariant; so is IR whose custom printer fails on it."""
    if not generic and not verified:
        generic = ir.verify(top) is not None
    try:
        return ir.print_op(top, generic=generic) + "\n"
    except Exception:  # a custom printer that trips over IR it did not expect
        return ir.print_op(top, generic=True) + "\n"


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
    try:
        for chunk, first_line in split_chunks(text, args.split_input_file):
            level = args.verify_diagnostics
            if level is None:
                result = process_chunk(inv, chunk, first_line, name, printer, reports)
                ok = ok and result is not None
            else:  # as mlir-opt, only the verifier's verdict counts
                verifier = DiagnosticVerifier(
                    name, chunk, printer, VerifyLevel(level or "all"), first_line
                )
                result = process_chunk(inv, chunk, first_line, name, verifier, reports)
                ok = verifier.verify() and ok
            outputs.append(result or "")
    finally:  # reports also after a failure or an interrupt
        reports.finish(args.timing_trace)
        if inv.executor is not None:
            inv.executor.close()
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
