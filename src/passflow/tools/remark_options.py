"""passflow-opt's optimization-remark flags, named, spelled and defaulted as
mlir-opt's (`MlirOptMain.cpp`, "Remark Options"):

- `--remarks-filter=REGEX` enables every kind of remark whose category matches
  (the whole name); `--remarks-filter-passed`, `-missed`, `-failed` and
  `-analyse` enable one kind (or-ed with `--remarks-filter`);
- `--remark-policy=all|final`: report remarks as they come, or at the end, the
  last one per op, ordered by location;
- `--remark-format=emitRemark|yaml|bitstream`: as `remark:` diagnostics (the
  default), or to a file, `--remarks-output-file` (default `mlir-remarks.yaml`).
  The bitstream format is not implemented (an error says so).

As in mlir-opt, each input chunk (`--split-input-file`) has its own engine, so
remark ids restart and a remark file holds the last chunk's remarks. The
engine's module loads with the run, not with the flags.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING

from passflow.diagnostics import (
    Diagnostic,
    PassflowError,
    PassPipelineError,
    Severity,
)
from passflow.tools.command_line import FlagParser, check_choice

if TYPE_CHECKING:
    from passflow.pass_manager import PassManager
    from passflow.remarks import RemarkEngine

__all__ = ["add_remark_flags", "remark_engine", "remark_session"]

REMARK_FORMATS = ("emitRemark", "yaml", "bitstream")
REMARK_POLICIES = ("all", "final")
_DEFAULT_FILES = {"yaml": "mlir-remarks.yaml", "bitstream": "mlir-remarks.bitstream"}


def _one_of(flag: str, choices: Sequence[str]) -> Callable[[str], str]:
    """An llvm::cl enum value: anything else is llvm::cl's error (which argparse
    lets through, so passflow-opt reports it as mlir-opt does)."""

    def check(value: str) -> str:
        check_choice(flag, value, choices)
        return value

    return check


def add_remark_flags(parser: FlagParser) -> None:
    """Declare mlir-opt's remark flags on `parser`."""
    parser.add_option(
        "--remark-format",
        type=_one_of("remark-format", REMARK_FORMATS),
        default="emitRemark",
        metavar="emitRemark|yaml|bitstream",
        help="Specify the format for remark output: emitRemark (print as remark "
        "diagnostics, the default), yaml (a YAML file), bitstream (not supported "
        "by passflow-opt)",
    )
    parser.add_option(
        "--remark-policy",
        type=_one_of("remark-policy", REMARK_POLICIES),
        default="all",
        metavar="all|final",
        help="Specify the policy for remark output: all (print all remarks, the "
        "default), final (print final remarks)",
    )
    parser.add_option(
        "--remarks-filter",
        default="",
        metavar="REGEX",
        help="Show all remarks: passed, missed, failed, analysis",
    )
    parser.add_option(
        "--remarks-filter-analyse",
        default="",
        metavar="REGEX",
        help="Show analysis remarks",
    )
    parser.add_option(
        "--remarks-filter-failed",
        default="",
        metavar="REGEX",
        help="Show failed remarks",
    )
    parser.add_option(
        "--remarks-filter-missed",
        default="",
        metavar="REGEX",
        help="Show missed remarks",
    )
    parser.add_option(
        "--remarks-filter-passed",
        default="",
        metavar="REGEX",
        help="Show passed remarks",
    )
    parser.add_option(
        "--remarks-output-file",
        default="",
        metavar="FILE",
        help="Output file for yaml and bitstream remark formats. Default is "
        "mlir-remarks.yaml or mlir-remarks.bitstream",
    )


def remark_engine(args: argparse.Namespace) -> RemarkEngine:
    """The engine the flags ask for (always one, as in mlir-opt: with no filter
    it enables nothing, but a YAML file is still written).

    Raises `OutputFileError` when the remark file can't be opened, and
    `PassflowError` for the bitstream format (not implemented).
    """
    from passflow.remarks import RemarkCategories, RemarkEngine, YamlRemarkStreamer

    categories = RemarkCategories(
        all=args.remarks_filter,
        passed=args.remarks_filter_passed,
        missed=args.remarks_filter_missed,
        analysis=args.remarks_filter_analyse,
        failed=args.remarks_filter_failed,
    )
    form: str = args.remark_format
    if form == "emitRemark":
        return RemarkEngine(categories, policy=args.remark_policy)
    if form == "bitstream":
        raise PassflowError(
            "the bitstream remark format is not supported by passflow-opt "
            "(use --remark-format=yaml)"
        )
    streamer = YamlRemarkStreamer.to_file(
        args.remarks_output_file or _DEFAULT_FILES[form]
    )
    return RemarkEngine(
        categories,
        policy=args.remark_policy,
        streamer=streamer,
        print_as_diagnostics=False,
    )


@contextlib.contextmanager
def remark_session(args: argparse.Namespace, pm: PassManager) -> Generator[None]:
    """Give `pm` the flags' remark engine for the `with` block (one run), then
    finalize it, after a failed run too: the `final` policy's remarks are
    reported through `pm`'s diagnostic handlers (printed, or checked by
    `--verify-diagnostics`) and the remark file is committed.

    A remark file that can't be opened (`cannot open output file '...': reason`)
    is an error at an unknown location, and the block fails with
    `PassPipelineError` before anything runs.
    """
    filters = (
        args.remarks_filter,
        args.remarks_filter_passed,
        args.remarks_filter_missed,
        args.remarks_filter_analyse,
        args.remarks_filter_failed,
    )
    if args.remark_format == "emitRemark" and not any(filters):
        yield  # no remark enabled, no file to write: the engine would do nothing
        return
    try:
        engine = remark_engine(args)
    except PassflowError as err:  # OutputFileError: LLVM's message
        diagnostic = Diagnostic(Severity.ERROR, str(err))
        pm.diagnostics.deliver(diagnostic)
        raise PassPipelineError([diagnostic]) from None
    pm.enable_remarks(engine)
    try:
        yield
    finally:
        pm.enable_remarks(None)
        engine.finalize()
