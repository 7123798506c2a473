"""The top-level pass manager: the pipeline, and everything around one run.

`PassManager` is an `OpPassManager` that owns the context (dialects load into
it before the run), the instrumentations and the instruments it can enable
(IR printing, timing, statistics, crash reproducers, progress), the diagnostic
handlers, the verifier flag and the executor that runs nested pipelines on
children. `run(op)` finalizes and initializes the pipeline, runs it through
`passflow.runner`, and raises `PassPipelineError` with every diagnostic when
anything failed.

It also speaks MLIR's Python bindings (`mlir.passmanager.PassManager`):
`PassManager.parse(text)`, `pm.add("cse")`, `pm.add(callable)`,
`enable_ir_printing(print_after_all=...)`, `enable_statistics(PassDisplayMode.LIST)`
and `str(pm)` behave as there (docs/guide.md, "Coming from MLIR's Python bindings").
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from enum import Enum
from typing import TYPE_CHECKING, Self, TextIO, cast

from xdsl.passes import ModulePass

from passflow import ir
from passflow.analysis import AnalysisManager
from passflow.callable_pass import PassCallable, check_undescribed
from passflow.diagnostics import (
    DiagnosticEngine,
    DiagnosticHandler,
    PassflowError,
    PassPipelineError,
)
from passflow.execution import ChildExecutor
from passflow.executors import as_child_executor, threading_disabled
from passflow.instrumentation import PassInstrumentation, PassInstrumentor
from passflow.instruments.ir_printer_config import (
    MODULE_SCOPE_THREADING_ERROR,
    IRPrinterConfig,
)
from passflow.ir import Context, Operation
from passflow.manager import Nesting, OpPassManager, anchor_mismatch
from passflow.pass_base import Pass, pipeline_identity
from passflow.runner import RunState, run_pipeline

if TYPE_CHECKING:  # each instrument loads when it is enabled, not with every run
    from concurrent.futures import Executor

    from passflow.actions import ActionHandler
    from passflow.instruments.ir_history import IRHistory
    from passflow.instruments.progress import ProgressBar
    from passflow.instruments.report import RunReport
    from passflow.instruments.reproducer import CrashReproducer, StreamFactory
    from passflow.instruments.timing import TimingDisplay, TimingFormat, TimingManager
    from passflow.remarks import RemarkEngine
    from passflow.statistics_report import StatisticsDisplay

__all__ = ["PassDisplayMode", "PassManager"]


class PassDisplayMode(Enum):
    """How `enable_statistics` lays its report out: MLIR's bindings' enum
    (`PassDisplayMode.LIST`, `.PIPELINE`), beside passflow's strings."""

    LIST = "list"
    PIPELINE = "pipeline"


_DISPLAY_MODES: dict[PassDisplayMode, StatisticsDisplay] = {
    PassDisplayMode.LIST: "list",
    PassDisplayMode.PIPELINE: "pipeline",
}


_MLIR_PRINTING_DEFAULTS = IRPrinterConfig(after_all=True)
"""What `enable_ir_printing`'s keywords say when none is given."""


class PassManager(OpPassManager):
    """The top-level pass manager: `pm.run(op)` runs the pipeline on `op`.

    It owns the context (dialects load into it before the run), the
    instrumentations, the diagnostic handlers, the verifier flag and the executor
    that runs nested pipelines on children (None: serially on the calling thread).

    `anchor` is the op name it runs on, `any` for every op. Unlike MLIR's
    bindings, whose default is `any`, passflow's default is `builtin.module`
    (docs/decisions.md).
    """

    def __init__(
        self,
        anchor: str = "builtin.module",
        context: Context | None = None,
        *,
        nesting: Nesting = Nesting.EXPLICIT,
        executor: ChildExecutor | Executor | None = None,
    ) -> None:
        super().__init__(anchor, nesting)
        self.context = context if context is not None else ir.default_context()
        self.executor = as_child_executor(executor)
        self.instrumentor = PassInstrumentor()
        self.diagnostics = DiagnosticEngine()
        self.verify_each = True
        self._init_key: object = None
        self._init_generation = 0
        self._reproducer: CrashReproducer | None = None
        self._progress: ProgressBar | None = None
        self._timing: TimingManager | None = None
        self._timing_stream: TextIO | None = None
        self._statistics: StatisticsDisplay | None = None
        self._statistics_stream: TextIO | None = None
        self.action_handler: ActionHandler | None = None
        self.emit_pass_error_on_failure = False
        self.remarks: RemarkEngine | None = None
        self._report: RunReport | None = None
        self._history: IRHistory | None = None

    @classmethod
    def parse(cls, pipeline: str, context: Context | None = None) -> Self:
        """A pass manager for an anchored pipeline: MLIR's
        `PassManager.parse("builtin.module(func.func(cse))")`, whose anchor
        comes from the text.

        Raises `PipelineParseError`, also a `ValueError` as in MLIR, with MLIR's
        message (`MLIR Textual PassPipeline Parser:1:1: error: ...`).
        """
        from passflow.pipeline_text import parse_pass_pipeline  # asked for

        parsed = parse_pass_pipeline(pipeline)
        pm = cls(parsed.anchor, context)
        pm.assign(parsed)
        return pm

    def add(
        self,
        pass_: Pass | PassCallable | ModulePass | type[ModulePass] | str,
        name: str | None = None,
        argument: str | None = "",
        description: str | None = "",
        op_name: str | None = "",
    ) -> None:
        """Append a pass, a callable run as a pass, or pipeline text.

        Text is MLIR's `pm.add("canonicalize, cse")`: its elements are parsed
        as `PassManager.parse` parses the inside of `anchor(...)` and appended
        as written (explicit nesting), or nothing is added and
        `PipelineParseError` (a `ValueError`) says why. A callable
        `run(op, pass_)` and its `name`, `argument`, `description`, `op_name`
        are MLIR's Python-defined passes; an xDSL `ModulePass` runs as it is
        (`OpPassManager.add`).
        """
        if isinstance(pass_, str):
            check_undescribed("pipeline text", name, argument, description, op_name)
            from passflow.pipeline_text import parse_pass_pipeline_into  # asked for

            parse_pass_pipeline_into(pass_, self)
            return
        super().add(pass_, name, argument, description, op_name)

    def enable_ir_printing(
        self,
        config: IRPrinterConfig | None = None,
        *,
        print_before_all: bool = False,
        print_after_all: bool = True,
        print_module_scope: bool = False,
        print_after_change: bool = False,
        print_after_failure: bool = False,
        tree_printing_dir_path: str | None = None,
        large_elements_limit: int | None = None,
        large_resource_limit: int | None = None,
        enable_debug_info: bool = False,
        print_generic_op_form: bool = False,
    ) -> None:
        """Print the IR around passes, to stderr: MLIR's bindings' keywords and
        defaults (no argument: after every pass only, as
        `--mlir-print-ir-after-all`), or a whole `IRPrinterConfig` (the
        `--mlir-print-ir-*` flags' filters, another stream), not both.

        `print_after_failure` prints after a pass only when it fails, and only
        with `print_after_all` (its default), as in MLIR; `print_after_change`
        skips passes that left their op unchanged; `tree_printing_dir_path`
        writes each dump to its own file in MLIR's tree layout. Each call adds
        one printer. Module scope prints the whole top-level op, which worker
        threads may be rewriting meanwhile, so it needs threading off. Enable
        printing before timing, so that the printing is not counted in the
        passes' times. The last four keywords print the dumps with elided large
        elements and resources, with locations, or in generic form, on top of
        `config.print_options` (with a config too).
        """
        from passflow.instruments.ir_printing import IRPrinterInstrumentation

        if isinstance(cast(object, config), bool):
            raise TypeError(
                "enable_ir_printing takes MLIR's flags by keyword "
                "(print_before_all=True, ...) or an IRPrinterConfig"
            )
        keywords = IRPrinterConfig(
            before_all=print_before_all,
            after_all=print_after_all,
            after_change=print_after_change,
            after_failure=print_after_failure and print_after_all,
            module_scope=print_module_scope,
            tree_dir=tree_printing_dir_path or None,
        )
        if config is None:
            config = keywords
        elif keywords != _MLIR_PRINTING_DEFAULTS:
            raise TypeError(
                "enable_ir_printing takes an IRPrinterConfig or keywords, not both"
            )
        config = config.with_print_knobs(
            large_elements_limit,
            # MLIR's Python binding: the elements limit elides resources too
            # unless a resource limit of its own is given.
            large_resource_limit
            if large_resource_limit is not None
            else large_elements_limit,
            enable_debug_info,
            print_generic_op_form,
        )
        if config.module_scope and not self.threading_disabled:
            raise PassflowError(MODULE_SCOPE_THREADING_ERROR)
        if config.enabled:
            self.add_instrumentation(IRPrinterInstrumentation(config))

    def enable_timing(
        self,
        manager: TimingManager | None = None,
        *,
        display: TimingDisplay = "tree",
        output_format: TimingFormat = "text",
        stream: TextIO | None = None,
    ) -> TimingManager:
        """Time every pass, nested pipeline and analysis (`--mlir-timing`).

        Without `manager`, this pass manager owns one and prints its report to
        `stream` (stderr) at the end of every `run`, failed or not. A shared
        `manager` is the caller's to report (passflow-opt prints one report for
        all input chunks, with its own `Parser` and `Output` timers). Enable
        timing last, so that other instrumentations' work is not timed.
        """
        from passflow.instruments.timing import PassTiming, TimingManager

        if manager is None:
            manager = self._timing = TimingManager(display, output_format)
            self._timing_stream = stream
        self.add_instrumentation(PassTiming(manager))
        return manager

    def enable_statistics(
        self,
        display: StatisticsDisplay | PassDisplayMode = "pipeline",
        stream: TextIO | None = None,
    ) -> None:
        """Print the pass statistics report to `stream` (stderr) after every `run`,
        failed or not (`--mlir-pass-statistics`); `display` is `"pipeline"` or
        `"list"`, or MLIR's `PassDisplayMode`."""
        if isinstance(display, PassDisplayMode):
            display = _DISPLAY_MODES[display]
        if display not in ("pipeline", "list"):
            raise ValueError(f"unknown statistics display '{display}'")
        self._statistics = display
        self._statistics_stream = stream

    def enable_report(self, target: str | RunReport) -> RunReport:
        """Write an HTML run report (`--report=FILE`, docs/report.md) to a path
        at the end of every `run`, failed or not: the pipeline tree with times,
        a diff for every pass execution that changed its op, and each pass's
        statistics and diagnostics beside it.

        A `RunReport` may be shared by several pass managers (one file for all
        of passflow-opt's input chunks). Enable it before timing, so that its
        printing is not timed. The report sees diagnostics through this pass
        manager's engine; handlers added later still receive every diagnostic.
        When the file cannot be written, `run` raises `OutputFileError` (after
        the run's diagnostics were delivered).
        """
        from passflow.instruments.observed_diagnostics import ObservedDiagnostics
        from passflow.instruments.report import RunReport

        report = RunReport(target) if isinstance(target, str) else target
        self._report = report
        self.diagnostics = ObservedDiagnostics(self.diagnostics, report)
        self.add_instrumentation(report)
        return report

    def enable_ir_history(self, target: str | IRHistory) -> IRHistory:
        """Record an IR history (`--ir-history=FILE`, docs/report.md) at a path,
        written at the end of every `run`, failed or not: every pass execution
        (nested and dynamic pipelines included) with, for each top-level symbol
        it changed, the symbol's text before and after, its timing,
        statistics and diagnostics. `passflow-history FILE @f500` asks it what
        happened to `@f500`; `passflow.HistoryFile` reads it from Python.

        One `IRHistory` may be shared by several pass managers (one file for
        all of passflow-opt's input chunks). When the file cannot be written,
        `run` raises `OutputFileError`.
        """
        from passflow.instruments.ir_history import IRHistory
        from passflow.instruments.observed_diagnostics import ObservedDiagnostics

        history = IRHistory(target) if isinstance(target, str) else target
        self._history = history
        self.diagnostics = ObservedDiagnostics(self.diagnostics, history)
        self.add_instrumentation(history)
        return history

    @property
    def ir_history(self) -> IRHistory | None:
        """The IR history `enable_ir_history` enabled, if any."""
        return self._history

    def _print_reports(self) -> None:
        """Statistics, then the owned timing report (MLIR's order), then the
        HTML run report's file."""
        if self._statistics is not None:
            from passflow.statistics_report import statistics_report

            out = self._statistics_stream or sys.stderr
            out.write(statistics_report(self, self._statistics))
            out.flush()
        if self._timing is not None:
            self._timing.print_report(self._timing_stream)
        if self._report is not None:
            self._report.end_run(str(self))
        if self._history is not None:
            self._history.end_run(str(self))

    def enable_progress(
        self, stream: TextIO | None = None, *, force: bool = False
    ) -> ProgressBar:
        """Show a live progress bar on `stream` (stderr) when it is a terminal
        (or always, with `force`)."""
        from passflow.instruments.progress import ProgressBar

        self._progress = ProgressBar(stream, force=force)
        self.instrumentor.add(self._progress)
        return self._progress

    @property
    def observed(self) -> bool:
        """Whether anything but diagnostic handlers watches the run:
        instrumentations (IR printing, timing, progress), statistics, the run
        report, a crash reproducer, an action handler or remarks. Each observes
        this process's passes and IR, so such a run is never sliced
        (`passflow.sliced`). The IR history is not counted: a sliced run
        records it batch by batch and merges it here (`ir_history`)."""
        history = self._history
        return any(
            instrumentation is not history
            for instrumentation in self.instrumentor.instrumentations
        ) or any(
            watcher is not None
            for watcher in (
                self._reproducer,
                self._statistics,
                self._timing,
                self._report,
                self.action_handler,
                self.remarks,
            )
        )

    @property
    def threading_disabled(self) -> bool:
        """True when nested pipelines run serially on the calling thread (no
        executor, a serial one, or one job)."""
        return threading_disabled(self.executor)

    def enable_crash_reproducer(
        self, target: str | StreamFactory, *, local: bool = False
    ) -> None:
        """Write a reproducer to `target` (a path, or a function opening a stream)
        when a pass fails or crashes.

        Global mode replays the whole pipeline on the IR as it was when the run
        started; `local=True` replays only the failing pass on the IR as it was
        just before it (serial runs only, and a module print per pass).
        """
        if local and not self.threading_disabled:
            raise PassflowError(
                "Local crash reproduction can't be setup on a pass-manager without "
                "disabling multi-threading first."
            )
        from passflow.instruments.reproducer import CrashReproducer

        self._reproducer = CrashReproducer(target, local)
        self.instrumentor.add(self._reproducer, first=True)

    def close(self) -> None:
        """Release the executor's workers (thread pools, Dask clusters it started)."""
        if self.executor is not None:
            self.executor.close()

    def enable_verifier(self, enable: bool = True) -> None:
        """Verify the IR after each pass (default on); off trades safety for speed."""
        self.verify_each = enable

    def register_action_handler(self, handler: ActionHandler | None) -> None:
        """Execute every pass as a `pass-execution` action through `handler`
        (None removes it): MLIR's `registerActionHandler`, here per pass manager.

        A `DebugCounter` skips pass applications to bisect a miscompile; an
        `ExecutionContext` with observers logs or profiles them
        (`passflow.actions`). While a handler is installed, nested pipelines run
        serially, in program order, so that actions are numbered the same way
        every run.
        """
        self.action_handler = handler

    def enable_emit_pass_error_on_failure(self, enabled: bool = True) -> None:
        """Emit `failed to run pass '<Name>'` at the op when a pass fails
        (`-emit-pass-error-on-failure`), so a long pipeline's failure names its
        pass even when the pass's own diagnostic does not."""
        self.emit_pass_error_on_failure = enabled

    def enable_remarks(self, engine: RemarkEngine | None) -> None:
        """Send the passes' optimization remarks (`Pass.remarks`) to `engine`
        (None: remarks off). The engine prints through this pass manager's
        diagnostic handlers unless it was given its own; finalizing it (the
        `final` policy's report, its output file) is the caller's, after the
        last run."""
        if engine is not None and engine.diagnostics is None:
            engine.diagnostics = self.diagnostics
        self.remarks = engine

    def add_instrumentation(self, instrumentation: PassInstrumentation) -> None:
        self.instrumentor.add(instrumentation)

    def add_diagnostic_handler(self, handler: DiagnosticHandler) -> None:
        """Receive every diagnostic as it is emitted (replaces stderr printing)."""
        self.diagnostics.handlers.append(handler)

    def assign(self, other: OpPassManager) -> None:
        """Replace anchor and passes with `other`'s (mlir-opt's `-pass-pipeline`)."""
        self._anchor = other.anchor
        self.nesting = other.nesting
        self.recursive = other.recursive
        self.clear()
        self.extend(other.passes)

    def run(self, op: Operation, *, reference_only: Iterable[Operation] = ()) -> None:
        """Run the pipeline on `op`; raise `PassPipelineError` if anything failed.

        `reference_only` are children of `op` that nested pipelines leave alone:
        they are there so that symbol lookups find them (the declarations a part
        of a module needs, `passflow.sliced`), and are neither run nor changed.
        """
        state = RunState(
            self.context,
            self.diagnostics,
            self.instrumentor if self.instrumentor else None,
            self.verify_each,
            self.executor,
            action_handler=self.action_handler,
            emit_pass_errors=self.emit_pass_error_on_failure,
            remarks=self.remarks,
            reference_only=frozenset(id(child) for child in reference_only),
        )
        mismatch = anchor_mismatch(self, op)
        if mismatch is not None:
            # As mlir-opt: refused before the run starts, so no report is printed.
            state.emit(mismatch)
            raise PassPipelineError(state.collected)
        progress = self._progress
        if progress is not None:
            progress.start(op)
        if self._timing is not None:
            self._timing.clear()  # the report's Total is this run
        try:
            ok = self._run(op, state)
        finally:
            if progress is not None:
                progress.stop()
            self._print_reports()
        if not ok:
            raise PassPipelineError(state.collected)

    def _run(self, op: Operation, state: RunState) -> bool:
        ir.load_dialects(self.context, self.dependent_dialects())
        if not self.finalize(state):
            return False
        key = (
            tuple(self.context.registered_dialect_names),
            pipeline_identity([self]),
        )
        if key != self._init_key:
            self._init_generation += 1
            if not self.initialize(state, self._init_generation):
                return False
            self._init_key = key
        state.generation = self._init_generation
        am = AnalysisManager.for_root(op, state.instrumentor)
        reproducer = self._reproducer
        if reproducer is None:
            return run_pipeline(self, op, am, state, None)
        state.on_crash = reproducer.record_crash
        reproducer.begin_run(
            op,
            self,
            state.emit,
            disable_threading=self.threading_disabled,
            verify_each=self.verify_each,
        )
        ok = False
        interrupted = False
        try:
            ok = run_pipeline(self, op, am, state, None)
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            reproducer.end_run(failed=not ok, interrupted=interrupted)
        return ok
