"""passflow-reduce: shrink a failing run to its core, or bisect it to one pass.

The input is a reproducer (passflow's or mlir-opt's: IR with an
`mlir_reproducer` resource) or IR with a pipeline given by `-p`. The output is
a reproducer that `passflow-opt --run-reproducer` and mlir-opt replay.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence

from passflow import ir
from passflow.all_passes import register_all_passes
from passflow.deep_stack import call_with_deep_stack
from passflow.diagnostics import PassflowError, PipelineParseError
from passflow.executors.budget import default_jobs
from passflow.instruments.reproducer import format_reproducer, read_reproducer
from passflow.output_file import OutputFileError, write_output
from passflow.pipeline_text import parse_pass_pipeline
from passflow.reduce import (
    Bisection,
    Candidate,
    CommandStatus,
    Interestingness,
    IRCandidate,
    NotInterestingError,
    PassCrash,
    Reducer,
    Reduction,
    RunSettings,
    SameDiagnostic,
    Size,
    VerifierFailure,
    bisect,
    default_test,
    parse_input,
)
from passflow.tools.command_line import CommandLineError, FlagParser
from passflow.tools.hints import pipeline_error_note
from passflow.tools.opt import read_input
from passflow.trust import untrusted

__all__ = ["main"]

PROG = "passflow-reduce"
TESTS = ("auto", "crash", "diagnostic", "verifier", "command")

DESCRIPTION = """\
Shrink a failing pass pipeline run - its pipeline and its IR - to the smallest
run that still fails the same way, and write it as a reproducer. With --bisect,
find instead the first pass execution (a pass on one op) after which it fails.

The failure is what --test names: 'auto' (default) keeps what the original run
shows - the crash of the same pass, else its first error message, else its
silent failure; 'crash' a crash of the same pass; 'diagnostic' an error
containing --match (default: the original run's first error); 'verifier' IR
the verifier rejects after the pipeline (message containing --match, if
given); 'command' your program (--test-command, with --test-arg arguments)
exiting with status 0 when given the candidate reproducer's path as its last
argument (for --bisect: the IR the partial pipeline produced).
"""

EPILOG = """\
examples:
  passflow-opt in.mlir -p 'builtin.module(func.func(cse))' \\
      --mlir-pass-pipeline-crash-reproducer=crash.mlir
  passflow-reduce crash.mlir -o reduced.mlir
  passflow-opt reduced.mlir --run-reproducer
  passflow-reduce in.mlir -p 'builtin.module(canonicalize,cse)' --bisect
  passflow-reduce in.mlir -p 'builtin.module(cse)' --test-command ./still-bad.sh
"""


def build_parser() -> FlagParser:
    """passflow-reduce's flags, parsed by llvm::cl's rules as passflow-opt's are
    (every mistake one line and exit 1)."""
    parser = FlagParser(
        prog=PROG,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_option
    add("input", metavar="INPUT", help="a reproducer, or IR with -p ('-': stdin)")
    add(
        "-p",
        "--pass-pipeline",
        metavar="PIPELINE",
        help="the pipeline to run, anchored (default: the reproducer's)",
    )
    add(
        "-o",
        "--output",
        default="-",
        metavar="FILE",
        help="where to write the reduced reproducer (default: '-', stdout)",
    )
    add("--test", choices=TESTS, default=None, help="the failure to keep (see above)")
    add("--match", metavar="TEXT", help="text the error message must contain")
    add(
        "--test-command",
        metavar="PROGRAM",
        help="run PROGRAM [--test-arg ...] FILE; status 0 means still failing",
    )
    add(
        "--test-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an argument for --test-command (repeat for more)",
    )
    parser.add_flag(
        "--bisect", help="find the first pass execution after which the run fails"
    )
    add(
        "-j",
        "--jobs",
        type=int,
        default=default_jobs(),
        metavar="N",
        help="candidates tried at once, each in its own process (default: cores)",
    )
    add(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="a candidate running longer does not fail (default: 60)",
    )
    parser.add_flag("--skip-pipeline", help="keep the pipeline as it is")
    parser.add_flag("--skip-ir", help="keep the IR as it is")
    parser.add_flag(
        "--allow-unregistered-dialect",
        help="allow operations of dialects that are not registered",
    )
    parser.add_flag(
        "--allow-unsafe-passes",
        help="let a reproducer's pipeline run passes that start programs or read files",
    )
    return parser


class _Progress:
    """One status line on a terminal, rewritten in place; silent elsewhere."""

    def __init__(self) -> None:
        self.live = sys.stderr.isatty()

    def __call__(self, stage: str, size: Size) -> None:
        if self.live:
            sys.stderr.write(f"\r\x1b[K{PROG}: {stage}: {size}")
            sys.stderr.flush()

    def clear(self) -> None:
        if self.live:
            sys.stderr.write("\r\x1b[K")


def _choose_test(
    args: argparse.Namespace, current: IRCandidate, pipeline: str, settings: RunSettings
) -> tuple[Interestingness, bool]:
    """The test `args` ask for, and whether the original run was seen to pass
    it (then the reducer need not run it again)."""
    kind = args.test or ("command" if args.test_command else "auto")
    if kind == "command":
        if not args.test_command:
            raise PassflowError("--test=command needs --test-command=PROGRAM")
        argv = [args.test_command, *args.test_arg]
        return CommandStatus(argv, args.timeout, settings), False
    if kind == "verifier":
        return VerifierFailure(args.match, settings), False
    original = Candidate(ir.clone(current.top), pipeline)
    if kind == "auto" and args.match is None:
        return default_test(original, settings), True
    outcome = settings.run(original)
    if kind == "crash":
        if outcome.crash is None:
            raise NotInterestingError(
                f"no pass crashes on the input ({outcome.stage.value})"
            )
        crash = outcome.crash
        return PassCrash(crash.pass_name, crash.exception, settings), True
    text = args.match if args.match is not None else outcome.first_error
    if text is None:
        raise NotInterestingError(
            f"the run prints no error to keep ({outcome.stage.value}); "
            "name the text with --match"
        )
    return SameDiagnostic(text, settings), False


def _report_reduction(reduction: Reduction, test: Interestingness, output: str) -> None:
    lines = [
        f"kept: {test.description}",
        f"reduced: {reduction.original} -> {reduction.reduced}",
    ]
    if reduction.removed_passes:
        lines.append(f"removed passes: {', '.join(reduction.removed_passes)}")
    if reduction.reset_options:
        lines.append(f"options reset: {', '.join(reduction.reset_options)}")
    where = "stdout" if output == "-" else output
    lines.append(
        f"{reduction.tests} tests in {reduction.seconds:.1f} s; "
        f"reproducer written to {where}"
    )
    sys.stderr.write("".join(f"{PROG}: {line}\n" for line in lines))


def _report_bisection(found: Bisection, source: str, pipeline: str) -> None:
    where = found.execution
    sys.stdout.write(
        f"{where.pipeline}\n"
        f"{where.location}: on {where.op} "
        f"(pass execution {found.index} of {found.total})\n"
    )
    sys.stderr.write(
        f"{PROG}: {found.tests} tests in {found.seconds:.1f} s; to stop the run "
        f"just after it: passflow-opt {source} --pass-pipeline='{pipeline}' "
        f"--mlir-disable-threading "
        f"--mlir-debug-counter=pass-execution-count={found.index}\n"
    )


def run(args: argparse.Namespace) -> int:
    text, name = read_input(args.input)
    current = parse_input(
        text, name, allow_unregistered=args.allow_unregistered_dialect
    )
    spec = read_reproducer(current.top)
    pipeline = args.pass_pipeline
    if pipeline is None:
        if spec is None:
            raise PassflowError(
                f"{name} has no 'mlir_reproducer' pipeline; name one with "
                "-p 'builtin.module(...)'"
            )
        pipeline = spec.pipeline
    trusted = args.pass_pipeline is not None or args.allow_unsafe_passes
    settings = RunSettings(
        args.allow_unregistered_dialect, spec.verify_each if spec else True
    )
    with contextlib.ExitStack() as cleanup:
        if not trusted:
            cleanup.enter_context(untrusted("a reproducer"))
        parse_pass_pipeline(pipeline)  # a malformed pipeline is the user's error
        test, checked = _choose_test(args, current, pipeline, settings)
        if isinstance(test, CommandStatus):
            cleanup.enter_context(test)  # its candidate files' directory
        if args.bisect:
            found = bisect(
                Candidate(current.top, pipeline, name),
                test,
                settings,
                jobs=args.jobs,
                timeout=args.timeout,
            )
            _report_bisection(found, args.input, pipeline)
            return 0
        progress = _Progress()
        reducer = Reducer(
            test,
            jobs=args.jobs,
            timeout=args.timeout,
            reduce_pipeline=not args.skip_pipeline,
            reduce_ir=not args.skip_ir,
            on_progress=progress,
        )
        try:
            reduction = reducer.reduce(current, pipeline, name, checked=checked)
        finally:
            progress.clear()
    content = format_reproducer(
        reduction.candidate.text(),
        reduction.candidate.pipeline,
        disable_threading=True,
        verify_each=settings.verify_each,
        comment=f"Reduced by {PROG} from {name}, keeping {test.description}.",
    )
    write_output(args.output, content)
    _report_reduction(reduction, test, args.output)
    return 0


def parse_command_line(argv: Sequence[str]) -> argparse.Namespace:
    """The command line by llvm::cl's rules; `CommandLineError` otherwise."""
    args = build_parser().parse_command_line(argv)
    if args.jobs < 1:
        raise CommandLineError(
            f"the number of jobs must be at least 1, got {args.jobs}"
        )
    return args


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse_command_line(sys.argv[1:] if argv is None else argv)
    except CommandLineError as err:  # llvm::cl's line, as passflow-opt's
        sys.stderr.write(f"{PROG}: {err}\n")
        return 1
    register_all_passes()
    try:
        return call_with_deep_stack(lambda: run(args))
    except PipelineParseError as err:
        note = pipeline_error_note(err, args.pass_pipeline)
        sys.stderr.write(f"{PROG}: error: {err}\n")
        if note is not None:
            sys.stderr.write(f"{PROG}: note: {note}\n")
        return 1
    except (PassflowError, OutputFileError) as err:
        sys.stderr.write(f"{PROG}: error: {err}\n")
        return 1
    except OSError as err:
        sys.stderr.write(f"{PROG}: error: {args.input}: {err.strerror}\n")
        return 1
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130


if __name__ == "__main__":
    sys.exit(main())
