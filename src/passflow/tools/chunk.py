"""One chunk of passflow-opt's input, from text to printed output.

mlir-opt runs each chunk (`--split-input-file`) through the same stages; so
does `ChunkRun`, the per-chunk state in one object: a context and a pass
manager built once, a sliced run when the flags and the executor allow one
(`passflow.sliced`), else the whole chunk parsed, verified, run and printed
in this process, with the reproducer, timing and reports the flags ask for.
A sliced run that falls back hands the same context and pass manager to the
whole run, which then reports whatever the sliced run could not stand for.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from passflow import ir, verifier
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
from passflow.manager import Nesting, OpPassManager
from passflow.pass_manager import PassManager
from passflow.pipeline_text import add_pass_flag, parse_pass_pipeline
from passflow.print_options import PrintOptions
from passflow.tools.action_options import action_session
from passflow.tools.invocation import NO_PIPELINE_GRAPH, Invocation
from passflow.tools.print_flags import print_options
from passflow.tools.remark_options import remark_session
from passflow.tools.sliced_options import (
    replay_events,
    sliced_flags,
    worth_slicing,
)
from passflow.trust import UnsafePassError, untrusted

if TYPE_CHECKING:
    from passflow.instruments.chrome_trace import ChromeTrace
    from passflow.instruments.reproducer import ReplayWitness
    from passflow.instruments.timing import TimingManager, TimingScope

__all__ = [
    "ChunkRun",
    "Reports",
    "error_with_note",
    "hints_wanted",
]


def pipeline_error(
    handler: DiagnosticHandler, err: PipelineParseError, inv: Invocation
) -> None:
    """A pipeline error as mlir-opt reports it: llvm::cl lines raw, then one
    diagnostic at unknown location holding the parser's whole message; then a
    "did you mean" note for a misspelt pass or option."""
    from passflow.tools.hints import pipeline_error_note  # on an error only

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
    from passflow.instruments.reproducer import read_reproducer  # asked for

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


def print_output(top: ir.Operation, options: PrintOptions, verified: bool) -> str:
    """The output IR, as mlir-opt prints it with the printing flags: IR that
    does not verify (possible only when the input or a pass went unverified)
    is printed in generic form, which needs no invariant; so is IR whose
    custom printer fails on it."""
    if not options.generic and not verified:
        options = options.with_generic(verifier.verify(top) is not None)
    try:
        return ir.print_op(top, options=options) + "\n"
    except Exception:  # a custom printer that trips over IR it did not expect
        return ir.print_op(top, options=options.with_generic()) + "\n"


class ChunkRun:
    """One chunk's run: what it reads, where its diagnostics go, and the
    context and pass manager built for it (once, whether or not it slices)."""

    def __init__(
        self,
        inv: Invocation,
        text: str,
        first_line: int,
        name: str,
        handler: DiagnosticHandler,
        reports: Reports,
    ) -> None:
        self.inv = inv
        self.args = inv.args
        self.text = text
        self.first_line = first_line
        self.name = name
        self.handler = handler
        self.reports = reports
        self.ctx = ir.default_context(
            allow_unregistered=self.args.allow_unregistered_dialect
        )
        self.prebuilt: PassManager | PassflowError | None = None
        """The pass manager a sliced run built, with the options applied, or
        the error building it raised (reported by the whole run, in order)."""

    def run(self) -> str | None:
        """The chunk's printed output, or None on failure (every diagnostic
        went to the handler)."""
        if self.slices():
            finished, output = self.run_sliced()
            if finished:
                return output
        top = self.parse()
        if top is None:
            return None
        try:
            with reproducer_trust(self.args):
                reproduced = load_reproducer(top) if self.args.run_reproducer else None
        except UnsafePassError as err:
            refusal = Diagnostic(Severity.ERROR, str(err), ir.location(top))
            refusal.attach_note(
                "if you trust this file, pass --allow-unsafe-passes to run it anyway"
            )
            self.handler(refusal)
            return None
        except PassflowError as err:
            sys.stderr.write(f"{err}\n")
            return None
        pm = self.pass_manager(top, reproduced)
        if pm is None:
            return None
        witness: ReplayWitness | None = None
        if reproduced is not None:
            reproduced.apply_flags(pm)
            if hints_wanted(self.args):
                from passflow.instruments.reproducer import ReplayWitness

                witness = ReplayWitness()
                pm.add_instrumentation(witness)
        if self.reports.trace is not None:
            pm.add_instrumentation(self.reports.trace)
        if self.reports.timing is not None:
            pm.enable_timing(self.reports.timing)
        if not self.run_whole(pm, top, witness):
            return None
        return self.output(pm, top)

    def slices(self) -> bool:
        """Whether to try a sliced run: the flags allow one, and the executor
        and the size of the chunk let it gain (`worth_slicing`)."""
        return sliced_flags(self.args) and worth_slicing(
            self.inv.executor, self.text, self.inv.cache is not None
        )

    def run_sliced(self) -> tuple[bool, str | None]:
        """The chunk run sliced (`passflow.sliced`): whether it stands for the
        whole run, and then its printed output (None on failure)."""
        # Sliced runs load here, for a chunk that may slice.
        from passflow.sliced.outcome import ExecutorLostError
        from passflow.sliced.run import Fallback, run_sliced_on

        args = self.args
        try:
            pm = build_pass_manager(self.inv, "builtin.module", self.ctx, None)
            self.inv.options.apply(pm)
        except PassflowError as err:  # reported by the whole run
            self.prebuilt = err
            return False, None
        self.prebuilt = pm
        pm.enable_emit_pass_error_on_failure(args.emit_pass_error_on_failure)
        try:
            outcome = run_sliced_on(
                self.inv.executor,
                self.text,
                self.name,
                pm,
                first_line=self.first_line,
                generic=args.mlir_print_op_generic,
                allow_unregistered=args.allow_unregistered_dialect,
                cache=self.inv.cache,
                cache_salt=self.inv.cache_salt,
                scanned=self.inv.scanned.get((self.text, self.first_line)),
                salt_names_pipeline=True,  # `cache_salt` holds the pipeline's text
            )
        except ExecutorLostError as err:
            where = f" '{args.scheduler}'" if args.scheduler else ""
            self.handler(
                error_with_note(
                    str(err),
                    f"check that the Dask scheduler{where} and its workers are running",
                )
            )
            return True, None
        if isinstance(outcome, Fallback):
            return False, None
        replay_events(outcome.events, self.handler)
        if outcome.failed:
            return True, None
        if outcome.module is not None:  # passes after the nested ones ran here
            return True, print_output(outcome.module, print_options(args), True)
        return True, None if outcome.output is None else outcome.output + "\n"

    def parse(self) -> ir.Operation | None:
        """The chunk parsed and verified, or None (the error was reported)."""
        args = self.args
        try:
            with self.reports.timer("Parser"):
                top = parse_input(
                    self.text,
                    self.name,
                    self.first_line,
                    self.ctx,
                    not args.no_implicit_module,
                )
        except IRParseError as err:
            from passflow.tools.hints import parse_error_note  # on an error only

            note = (
                parse_error_note(err.diagnostic, self.ctx)
                if hints_wanted(args)
                else None
            )
            if note is not None:
                err.diagnostic.attach_note(note)
            self.handler(err.diagnostic)
            return None
        if not args.mlir_very_unsafe_disable_verifier_on_parsing:
            problem = verifier.verify(top)
            if problem is not None:
                self.handler(problem)
                return None
        if args.verify_roundtrip:
            from passflow.tools.roundtrip import roundtrip_error  # asked for

            problem = roundtrip_error(top, self.ctx, self.name)
            if problem is not None:
                self.handler(problem)
                return None
        return top

    def pass_manager(
        self, top: ir.Operation, reproduced: Reproduced | None
    ) -> PassManager | None:
        """The pass manager of the whole run, set up in mlir-opt's order (the
        pipeline, its dumps, then the pass-manager options), or None after
        reporting why not. The sliced run's is reused when it fits."""
        anchor = ir.operation_name(top).name
        prebuilt = self.prebuilt
        if reproduced is None and anchor == "builtin.module" and prebuilt is not None:
            if isinstance(prebuilt, PipelineParseError):
                pipeline_error(self.handler, prebuilt, self.inv)
                return None
            if isinstance(prebuilt, PassflowError):
                self.options_error(prebuilt)
                return None
            prebuilt.add_diagnostic_handler(self.handler)
            return prebuilt
        try:
            pm = build_pass_manager(self.inv, anchor, self.ctx, reproduced)
        except PipelineParseError as err:
            pipeline_error(self.handler, err, self.inv)
            return None
        self.dump(pm)
        pm.add_diagnostic_handler(self.handler)
        # mlir-opt's order: the pass-manager options (crash reproducer first, IR
        # printer), then the reproducer's flags, then timing last.
        try:
            self.inv.options.apply(pm)
        except PassflowError as err:
            self.options_error(err)
            return None
        return pm

    def options_error(self, err: PassflowError) -> None:
        from passflow.tools.hints import threading_note  # on an error only

        note = threading_note(str(err)) if hints_wanted(self.args) else None
        self.handler(error_with_note(str(err), note))

    def dump(self, pm: PassManager) -> None:
        """`--dump-pass-pipeline` and `--dump-pipeline-graph`."""
        args = self.args
        if args.dump_pass_pipeline:
            pm.dump(sys.stderr)
            sys.stderr.write("\n")
        if args.dump_pipeline_graph is not None:
            from passflow.graph import dump_pipeline_graphs, find_schedules  # on use

            if find_schedules(pm):
                sys.stderr.write(dump_pipeline_graphs(pm, args.dump_pipeline_graph))
            else:  # a report, like --dump-pass-pipeline: the run goes on
                sys.stderr.write(f"{NO_PIPELINE_GRAPH}\n")

    def run_whole(
        self, pm: PassManager, top: ir.Operation, witness: ReplayWitness | None
    ) -> bool:
        """Run the pipeline on the whole chunk; False if it failed."""
        args = self.args
        try:
            with (
                action_session(args, pm),
                remark_session(args, pm),
                reproducer_trust(args),
            ):
                pm.run(top)
        except PassPipelineError as err:
            verdict = witness.report(err.diagnostics) if witness is not None else None
            if verdict is not None:
                self.handler(verdict)
            return False
        return True

    def output(self, pm: PassManager, top: ir.Operation) -> str | None:
        """The chunk's printed result (and the reproducer `--mlir-generate-
        reproducer` asks for), or None if that reproducer cannot be written."""
        args = self.args
        with self.reports.timer("Output"):
            verified = (
                pm.verify_each and not args.mlir_very_unsafe_disable_verifier_on_parsing
            )
            output = print_output(top, print_options(args), verified)
        if args.mlir_generate_reproducer:
            from passflow.instruments.reproducer import (  # asked for
                format_reproducer,
                write_reproducer,
            )

            # mlir-opt 22 writes `printAsTextualPipeline` of the pass manager: `str(pm)`.
            content = format_reproducer(
                output, str(pm), disable_threading=False, verify_each=False
            )
            problem = write_reproducer(args.mlir_generate_reproducer, content)
            if problem is not None:
                sys.stderr.write(f"{problem}\n")
                return None
        metadata = "" if args.run_reproducer else ir.file_metadata(top)
        limit = args.mlir_elide_resource_strings_if_larger
        if metadata and limit is not None:
            from passflow.file_metadata import elide_resources  # asked for

            metadata = elide_resources(metadata, limit)
        return output + (f"\n{metadata}\n" if metadata else "")
