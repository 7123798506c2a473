"""passflow-opt's flags for watching pass execution: actions, the debug counter,
and naming the pass that failed.

The flags, their values, their output and their error messages are mlir-opt's
(`mlir/lib/Debug/CLOptionsSetup.cpp`, `DebugCounter.cpp`):

- `--log-actions-to=FILE|-` logs every pass execution (`-` is stdout);
  `--log-mlir-actions-filter=LOC,...` keeps only those on ops at `file[:line[:col]]`;
- `--profile-actions-to=FILE|-` writes them as a Chrome trace;
- `--mlir-debug-counter=pass-execution-skip=N,pass-execution-count=M` runs only a
  window of the pass executions (bisecting), `--mlir-print-debug-counter` reports
  the counts; as in mlir-opt, a counter is refused (with an error, and ignored)
  when actions are logged or profiled;
- `-emit-pass-error-on-failure` adds `failed to run pass '<Name>'` at the op a
  pass failed on (newer than mlir-opt 22.1.8).

Everything is set up per input chunk, as mlir-opt sets it up per buffer: with
`--split-input-file` each chunk has its own counters, log and profile. What
sets them up (actions, the logger, the profiler) loads when a flag asks for
it, so that declaring the flags costs nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Generator
from typing import TYPE_CHECKING

from passflow.tools.command_line import FlagParser

if TYPE_CHECKING:
    from passflow.actions import ExecutionContext, LocationBreakpointManager
    from passflow.pass_manager import PassManager

__all__ = ["action_session", "add_action_flags"]

_REGISTERED = "ExecutionContext registered on the context"
_COUNTER_REFUSED = (
    "error: Debug counters are incompatible with --log-actions-to and "
    "--mlir-enable-debugger-hook options and are disabled\n"
)
_FATAL_COUNTER = "LLVM ERROR: Invalid DebugCounter command-line configuration\n"


def add_action_flags(parser: FlagParser) -> None:
    """Declare the action, debug-counter and pass-error flags on `parser`."""
    parser.add_option(
        "--log-actions-to",
        default="",
        metavar="FILE",
        help="Log action execution to a file, or stdout if '-' is passed",
    )
    parser.add_option(
        "--log-mlir-actions-filter",
        action="append",
        default=[],
        metavar="LOCATIONS",
        help="Comma separated list of locations (file[:line[:col]]) to filter "
        "actions from logging",
    )
    parser.add_option(
        "--profile-actions-to",
        default="",
        metavar="FILE",
        help="Profile action execution to a file, or stdout if '-' is passed "
        "(Chrome trace events)",
    )
    parser.add_option(
        "--mlir-debug-counter",
        action="append",
        default=[],
        metavar="COUNTERS",
        help="Comma separated list of debug counter skip and count arguments "
        "(pass-execution-skip=N,pass-execution-count=M)",
    )
    parser.add_flag(
        "--mlir-print-debug-counter",
        help="Print out debug counter information after all counters have been "
        "accumulated",
    )
    parser.add_flag(
        "--emit-pass-error-on-failure",
        help="Emit an error naming the pass when a pass fails",
    )


def _fatal(message: str, trailer: str = "") -> SystemExit:
    """mlir-opt's way out of a bad debug configuration: the message, then exit."""
    sys.stderr.write(f"{message}\n{trailer}")
    sys.stderr.flush()
    return SystemExit(1)


def _location_filters(args: argparse.Namespace) -> LocationBreakpointManager | None:
    """The `--log-mlir-actions-filter` breakpoints (None without the flag)."""
    values: list[str] = args.log_mlir_actions_filter
    if not values:
        return None
    from passflow.actions import LocationBreakpointManager, LocationFilterError

    manager = LocationBreakpointManager()
    for value in values:
        for text in value.split(","):
            try:
                manager.add_filter(text)
            except LocationFilterError as err:
                raise _fatal(str(err), f"Invalid location filter: {text}\n") from None
    return manager


@contextlib.contextmanager
def action_session(args: argparse.Namespace, pm: PassManager) -> Generator[None]:
    """Install on `pm` what the flags ask for, for the `with` block (one run).

    On exit the log and profile files are committed (the profile's closing `]`
    written) and `--mlir-print-debug-counter` prints its report to stderr, after
    a failed run too. A malformed counter or filter exits the process with
    mlir-opt's message (and status 1, where mlir-opt aborts).
    """
    pm.enable_emit_pass_error_on_failure(args.emit_pass_error_on_failure)
    filters = _location_filters(args)
    counters: list[str] = args.mlir_debug_counter
    counting = bool(counters) or args.mlir_print_debug_counter
    if not args.log_actions_to and not args.profile_actions_to:
        if not counting:
            yield
            return
        from passflow.actions import DebugCounter, DebugCounterError

        try:
            counter = DebugCounter.from_arguments(counters)
        except DebugCounterError as err:
            raise _fatal(str(err), _FATAL_COUNTER) from None
        pm.register_action_handler(counter)
        try:
            yield
        finally:
            pm.register_action_handler(None)
            if args.mlir_print_debug_counter:
                sys.stderr.write(counter.report())
        return
    from passflow.instruments.action_profiler import ActionProfiler

    files = contextlib.ExitStack()
    try:
        context = _execution_context(args, filters, files)
        if context is None:
            yield
            return
        pm.register_action_handler(context)
        try:
            yield
        finally:
            pm.register_action_handler(None)
            for observer in context.observers:
                if isinstance(observer, ActionProfiler):
                    observer.close()
    finally:
        files.close()  # commits the files, after a failed run too


def _execution_context(
    args: argparse.Namespace,
    filters: LocationBreakpointManager | None,
    files: contextlib.ExitStack,
) -> ExecutionContext | None:
    """The observed handler for `--log-actions-to` / `--profile-actions-to`, with
    mlir-opt's messages on stderr. A file that can't be opened means no handler
    at all (the other file is not opened either), and the run goes on, as in
    mlir-opt."""
    from passflow.actions import ExecutionContext
    from passflow.instruments.action_logging import ActionLogger
    from passflow.instruments.action_profiler import ActionProfiler
    from passflow.output_file import OutputFileError, open_output

    stderr = sys.stderr
    stderr.write(_REGISTERED)
    if args.mlir_debug_counter or args.mlir_print_debug_counter:
        stderr.write(_COUNTER_REFUSED)
    context = ExecutionContext()
    for flag, path in (
        ("log-actions-to", args.log_actions_to),
        ("profile-actions-to", args.profile_actions_to),
    ):
        if not path:
            continue
        try:
            stream = files.enter_context(open_output(path))
        except OutputFileError as err:
            stderr.write(f"error: Opening file for --{flag} failed: {err}\n\n")
            return None
        if flag == "log-actions-to":
            logger = ActionLogger(stream)
            if filters is not None:
                logger.add_breakpoint_manager(filters)
            context.register_observer(logger)
        else:
            context.register_observer(ActionProfiler(stream))
    stderr.write("\n")
    return context
