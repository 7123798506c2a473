"""passflow-opt's run of its input: the flags checked, the executor and the
cache they ask for, the input read and split into chunks, each chunk run
(`chunk.ChunkRun`), the reports printed and the output written (only when
every chunk succeeded, unless it is stdout).

`passflow.tools.opt` loads this module (and with it the IR, the pass manager
and the passes) once the command line asks for a run, not for `--version`.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from passflow.diagnostics import PassflowError
from passflow.source_diagnostics import (
    DiagnosticVerifier,
    SourceDiagnosticPrinter,
    VerifyLevel,
)
from passflow.tools.cache_options import (
    cache_maintenance,
    cache_salt,
    check_cache_flags,
    input_key,
    open_cache,
    print_cache_stats,
    remote_notes,
)
from passflow.tools.chunk import ChunkRun, Reports, error_with_note
from passflow.tools.command_line import check_choice
from passflow.tools.invocation import (
    PROG,
    Invocation,
    read_input,
    split_chunks,
    write_chunks,
)
from passflow.tools.pass_manager_options import PassManagerOptions
from passflow.tools.print_flags import DiagnosticOptions, print_options

__all__ = ["check_tool_flags", "run_input"]


def check_tool_flags(args: argparse.Namespace) -> PassManagerOptions:
    """Validate flag values with llvm::cl's messages, as mlir-opt does: the
    tool's own flags, then the pass-manager flags, whose options are returned."""
    if args.verify_diagnostics is not None:
        check_choice(
            "verify-diagnostics", args.verify_diagnostics, ("", "all", "only-expected")
        )
    check_choice("mlir-timing-display", args.mlir_timing_display, ("list", "tree"))
    check_choice("mlir-output-format", args.mlir_output_format, ("text", "json"))
    check_cache_flags(args)
    options = PassManagerOptions.from_args(args)
    # IR dumps print as the output does (mlir-opt's printing flags are global).
    print_ir = dataclasses.replace(options.print_ir, print_options=print_options(args))
    return dataclasses.replace(options, print_ir=print_ir)


def _reports(args: argparse.Namespace) -> Reports:
    """The reports that span every chunk: timing and the Chrome trace."""
    timing = None
    if args.mlir_timing:
        from passflow.instruments.timing import TimingManager  # asked for

        timing = TimingManager(args.mlir_timing_display, args.mlir_output_format)
    if not args.timing_trace:
        return Reports(timing)
    from passflow.instruments.chrome_trace import ChromeTrace  # asked for

    return Reports(timing, ChromeTrace())


def run_input(inv: Invocation) -> int:
    """Run the pipeline the command line asks for on its input: the exit status."""
    args = inv.args
    inv.options = options = check_tool_flags(args)
    maintained = cache_maintenance(inv)
    if maintained is not None:
        return maintained
    shown = DiagnosticOptions.from_args(args)
    try:
        text, name = inv.read or read_input(args.input)
    except OSError as err:  # mlir-opt's message, without a program name
        sys.stderr.write(f"cannot open input file '{args.input}': {err.strerror}\n")
        return 1
    printer = SourceDiagnosticPrinter(sys.stderr, name, text)
    shown_printer = shown.wrap(printer)
    reports = _reports(args)
    outputs: list[str] = []
    ok = True
    inv.executor = executor = options.make_executor()
    if executor is not None and executor.name == "dask":
        from passflow.executors.dask import quiet_dask_logging  # loaded by its executor

        quiet_dask_logging()
    try:
        options.check_executor(executor)
    except PassflowError as err:
        from passflow.tools.hints import threading_note  # on an error only

        sys.stderr.write(f"{error_with_note(str(err), threading_note(str(err)))}\n")
        if executor is not None:
            executor.close()
        return 1
    try:
        inv.cache = inv.cache or open_cache(args)
    except PassflowError as err:
        sys.stderr.write(f"{PROG}: {err}\n")
        if executor is not None:
            executor.close()
        return 1
    if inv.cache is not None:
        inv.cache_salt = cache_salt(inv)
    try:
        with shown.annotating():
            for chunk, first_line in split_chunks(text, args.split_input_file):
                level = args.verify_diagnostics
                if level is None:
                    result = ChunkRun(
                        inv, chunk, first_line, name, shown_printer, reports
                    ).run()
                    ok = ok and result is not None
                else:  # as mlir-opt, only the verifier's verdict counts
                    verifier = DiagnosticVerifier(
                        name, chunk, printer, VerifyLevel(level or "all"), first_line
                    )
                    handler = shown.wrap(verifier)
                    result = ChunkRun(
                        inv, chunk, first_line, name, handler, reports
                    ).run()
                    ok = verifier.verify() and ok
                outputs.append(result or "")
        if inv.cache is not None:  # its next run with this text is likely warm
            inv.cache.remember_answered(input_key(name, inv.cache_salt, text))
    finally:  # reports also after a failure or an interrupt
        reports.finish(args.timing_trace)
        if inv.executor is not None:
            inv.executor.close()
        if inv.cache is not None:
            for warning in inv.cache.warnings:
                sys.stderr.write(f"{PROG}: warning: {warning}\n")
            for note in remote_notes(inv.cache):
                sys.stderr.write(f"{PROG}: note: {note}\n")
    try:
        status = write_chunks(args, outputs, ok)
        if args.cache_stats:
            status = print_cache_stats(inv) or status
    finally:
        if inv.cache is not None:
            inv.cache.close()
    return status
