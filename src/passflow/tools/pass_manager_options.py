"""The pass-manager flags, for passflow-opt and for a tool of your own.

MLIR keeps the command-line options of the pass manager out of `mlir-opt`
(`mlir/lib/Pass/PassManagerOptions.cpp`), so that every tool can offer them:
`registerPassManagerCLOptions()` declares them, `applyPassManagerCLOptions(pm)`
applies them to a pass manager. This is that layer for passflow:

- `add_pass_manager_flags(parser)` declares the flags on a `FlagParser`;
- `PassManagerOptions.from_args(args)` validates their values, with llvm::cl's
  messages, into a `PassManagerOptions` (which a program can also build itself);
- `options.make_executor()` builds the executor that runs nested pipelines (None
  with `--mlir-disable-threading`);
- `options.apply(pm)` applies them to a `PassManager`, in mlir-opt's order.

The flags are mlir-opt's, spelled, defaulted and worded as passflow-opt has them:

- `--verify-each` (MLIR: `MlirOptMainConfig`, applied just before these);
- `--mlir-pass-pipeline-crash-reproducer=FILE`, `--mlir-pass-pipeline-local-reproducer`;
- `--mlir-pass-statistics`, `--mlir-pass-statistics-display=list|pipeline`;
- `--mlir-print-ir-before|after=PASSES`, `--mlir-print-ir-before-all`,
  `-after-all`, `-after-change`, `-after-failure`, `--mlir-print-ir-module-scope`,
  `--mlir-print-ir-tree-dir=DIR` and `--mlir-print-assume-verified` (an AsmPrinter
  option in MLIR; in passflow it only changes the IR dumps);
- `--mlir-disable-threading` (MLIR: an `MLIRContext` option), and passflow's
  `--executor`, `--jobs` and `--scheduler`, which choose the executor;
- `--progress`;
- passflow's `--report=FILE` (no mlir-opt counterpart): the HTML run report
  (docs/report.md), one file for every input chunk, with the pipeline graph
  when the pipeline has one; and `--ir-history=FILE`, the IR history that
  `passflow-history` queries, one run per input chunk.

"Threading disabled" has one rule (`passflow.executors.threading_disabled`): no
executor, a serial one, or one job. So `--mlir-print-ir-module-scope` and
`--mlir-pass-pipeline-local-reproducer` work with `--mlir-disable-threading`,
`--executor=serial` and `--jobs=1` alike, and are refused with mlir-opt's messages
otherwise.

Not here, as in MLIR: timing (`--mlir-timing*`, and passflow's `--timing-trace`)
is the tool's, because one report spans every input chunk and includes the tool's
own `Parser` and `Output` timers (`pm.enable_timing()` gives a tool a report per
run); `--mlir-generate-reproducer` and `--run-reproducer` are `mlir-opt`'s in MLIR
22 (`MlirOptMain.cpp`). The action and remark flags have their own layers
(`action_options`, `remark_options`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from passflow.diagnostics import PassflowError
from passflow.executors import (
    EXECUTOR_KINDS,
    default_executor_kind,
    make_executor,
    threading_disabled,
)
from passflow.instruments.ir_printer_config import (
    MODULE_SCOPE_THREADING_TOOL_ERROR,
    IRPrinterConfig,
)
from passflow.tools.command_line import (
    CommandLineError,
    FlagParser,
    check_choice,
    unknown_choice,
)

if TYPE_CHECKING:
    from passflow.execution import ChildExecutor
    from passflow.instruments.ir_history import IRHistory
    from passflow.instruments.report import RunReport
    from passflow.pass_manager import PassManager
    from passflow.statistics_report import StatisticsDisplay

__all__ = [
    "LOCAL_REPRODUCER_THREADING_ERROR",
    "MODULE_SCOPE_THREADING_TOOL_ERROR",
    "PassManagerOptions",
    "add_pass_manager_flags",
]

LOCAL_REPRODUCER_THREADING_ERROR = (
    "Local crash reproduction may not be used without disabling multi-threading first."
)
"""mlir-opt's message for a local reproducer with threading on, without its
"mutli" typo (docs/decisions.md); passflow-opt prints it at `<unknown>:0`."""

STATISTICS_DISPLAYS = ("list", "pipeline")


def add_pass_manager_flags(parser: FlagParser) -> None:
    """Declare the pass-manager flags on `parser` (MLIR's
    `registerPassManagerCLOptions`, with the threading flags)."""
    parser.add_flag("--verify-each", help="verify the IR after each pass", default=True)
    parser.add_option(
        "--mlir-pass-pipeline-crash-reproducer",
        metavar="FILE",
        help="write a reproducer to FILE when a pass fails or crashes",
    )
    parser.add_flag(
        "--mlir-pass-pipeline-local-reproducer",
        help="make the reproducer replay only the failing pass",
    )
    parser.add_flag(
        "--mlir-pass-statistics",
        help="print the pass statistics report",
    )
    parser.add_option(
        "--mlir-pass-statistics-display",
        default="pipeline",
        metavar="list|pipeline",
        help="statistics report layout (default pipeline)",
    )
    parser.add_option(
        "--mlir-print-ir-before",
        action="append",
        default=[],
        metavar="PASSES",
        help="print the IR before these passes (comma separated pass arguments)",
    )
    parser.add_option(
        "--mlir-print-ir-after",
        action="append",
        default=[],
        metavar="PASSES",
        help="print the IR after these passes (comma separated pass arguments)",
    )
    parser.add_flag(
        "--mlir-print-ir-before-all",
        help="print the IR before every pass",
    )
    parser.add_flag(
        "--mlir-print-ir-after-all",
        help="print the IR after every pass",
    )
    parser.add_flag(
        "--mlir-print-ir-after-change",
        help="print the IR after a pass only if it changed the IR",
    )
    parser.add_flag(
        "--mlir-print-ir-after-failure",
        help="print the IR after a pass only if it failed",
    )
    parser.add_flag(
        "--mlir-print-assume-verified",
        "--mlir-unsafe-print-assume-verified",
        help="print IR in custom form without verifying it first (mlir-opt's "
        "newer name is accepted too)",
    )
    parser.add_flag(
        "--mlir-print-ir-module-scope",
        help="print the whole top-level op, not just the op the pass ran on",
    )
    parser.add_option(
        "--mlir-print-ir-tree-dir",
        metavar="DIR",
        help="write each IR dump to its own file in a tree under DIR",
    )
    parser.add_flag(
        "--mlir-disable-threading",
        help="run nested pipelines on one thread",
    )
    parser.add_option(
        "--executor",
        choices=EXECUTOR_KINDS,
        default=None,
        help="how nested pipelines run on children (default: process where fork "
        "exists, else serial; --mlir-disable-threading forces serial)",
    )
    parser.add_option(
        "--jobs",
        type=int,
        default=None,
        metavar="N",
        help="parallel jobs (default: usable cores; 1 = serial); with "
        "--executor=process the parent process is one of them",
    )
    parser.add_option(
        "--scheduler",
        default=None,
        metavar="ADDRESS",
        help="Dask scheduler for --executor=dask (tcp://host:port)",
    )
    parser.add_flag(
        "--progress",
        help="show a live progress bar on stderr when it is a terminal",
    )
    parser.add_option(
        "--report",
        metavar="FILE",
        help="write an HTML report of the run to FILE: pass tree with times, "
        "IR diffs, diagnostics (self-contained, opens offline)",
    )
    parser.add_option(
        "--report-max-changes",
        type=int,
        default=2000,
        metavar="N",
        help="--report embeds at most N changes per pass (default 2000); the "
        "rest are counted under the pass",
    )
    parser.add_option(
        "--report-max-op-chars",
        type=int,
        default=200_000,
        metavar="N",
        help="--report lists a symbol whose text is longer than N characters "
        "without its texts (default 200000)",
    )
    parser.add_option(
        "--ir-history",
        metavar="FILE",
        help="record every pass execution and each top-level symbol it changed "
        "in the SQLite file FILE (query it with passflow-history)",
    )


def _pass_arguments(flag: str, values: Sequence[str]) -> tuple[str, ...]:
    """The pass arguments of a `--mlir-print-ir-before/after` flag (each value a
    comma-separated list), all registered passes (llvm::cl's message otherwise)."""
    names = tuple(name for value in values for name in value.split(","))
    if not names:
        return names
    # The registry (the pass manager, the IR) loads for a run, or when a flag
    # names a pass; declaring and reading the flags does not need it.
    from passflow import registry

    for name in names:
        if registry.lookup_pass(name) is None:
            from passflow.xdsl_passes import xdsl_pass_names  # only on an error

            known = [info.argument for info in registry.registered_passes()]
            raise unknown_choice(flag, name, [*known, *xdsl_pass_names()])
    return names


def _run_report(path: str, max_changes: int, max_op_chars: int) -> RunReport:
    """The `--report` file's report, with its two limits (each at least 0)."""
    from passflow.instruments.report import RunReport  # only when asked for

    for flag, value in (
        ("report-max-changes", max_changes),
        ("report-max-op-chars", max_op_chars),
    ):
        if value < 0:
            raise CommandLineError(
                f"for the --{flag} option: '{value}' is negative; give a count "
                "of 0 or more"
            )
    return RunReport(path, max_changes=max_changes, max_op_chars=max_op_chars)


def _ir_history(path: str) -> IRHistory:
    """The `--ir-history` file's recorder."""
    from passflow.instruments.ir_history import IRHistory  # only when asked for

    return IRHistory(path)


@dataclass(frozen=True)
class PassManagerOptions:
    """What the pass-manager flags ask for; the defaults are the flags' defaults."""

    verify_each: bool = True
    crash_reproducer: str | None = None
    """`--mlir-pass-pipeline-crash-reproducer`: the reproducer's path."""
    local_reproducer: bool = False
    statistics: bool = False
    statistics_display: StatisticsDisplay = "pipeline"
    print_ir: IRPrinterConfig = field(default_factory=IRPrinterConfig)
    """The `--mlir-print-ir-*` flags (and `--mlir-print-assume-verified`)."""
    disable_threading: bool = False
    executor_kind: str | None = None
    """`--executor` (None: `default_executor_kind()`, or dask with a scheduler)."""
    jobs: int | None = None
    scheduler: str | None = None
    progress: bool = False
    report: RunReport | None = None
    """`--report=FILE`: one report shared by every pass manager `apply` sees,
    so that all input chunks land in one file."""
    history: IRHistory | None = None
    """`--ir-history=FILE`: one history shared by every pass manager `apply`
    sees, a run per input chunk."""

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> PassManagerOptions:
        """The options of a namespace parsed with `add_pass_manager_flags`' flags.

        Raises `CommandLineError` with llvm::cl's message for a statistics
        display it does not know or an IR-printing pass that is not registered
        (checked in that order, as mlir-opt does). The executor flags are
        checked by `make_executor`.
        """
        display: str = args.mlir_pass_statistics_display
        check_choice("mlir-pass-statistics-display", display, STATISTICS_DISPLAYS)
        print_ir = IRPrinterConfig(
            before=_pass_arguments("mlir-print-ir-before", args.mlir_print_ir_before),
            after=_pass_arguments("mlir-print-ir-after", args.mlir_print_ir_after),
            before_all=args.mlir_print_ir_before_all,
            after_all=args.mlir_print_ir_after_all,
            after_change=args.mlir_print_ir_after_change,
            after_failure=args.mlir_print_ir_after_failure,
            module_scope=args.mlir_print_ir_module_scope,
            tree_dir=args.mlir_print_ir_tree_dir,
            assume_verified=args.mlir_print_assume_verified,
        )
        return cls(
            verify_each=args.verify_each,
            crash_reproducer=args.mlir_pass_pipeline_crash_reproducer or None,
            local_reproducer=args.mlir_pass_pipeline_local_reproducer,
            statistics=args.mlir_pass_statistics,
            statistics_display=cast("StatisticsDisplay", display),
            print_ir=print_ir,
            disable_threading=args.mlir_disable_threading,
            executor_kind=args.executor,
            jobs=args.jobs,
            scheduler=args.scheduler,
            progress=args.progress,
            report=_run_report(
                args.report, args.report_max_changes, args.report_max_op_chars
            )
            if args.report
            else None,
            history=_ir_history(args.ir_history) if args.ir_history else None,
        )

    def make_executor(self) -> ChildExecutor | None:
        """The executor the threading flags ask for: None (the calling thread)
        with `--mlir-disable-threading`, else `--executor` with `--jobs` and
        `--scheduler` (`passflow.executors.make_executor`, whose `PassflowError`
        a bad combination raises). The caller closes it (`pm.close()`)."""
        if self.disable_threading:
            return None
        kind = self.executor_kind or (
            "dask" if self.scheduler else default_executor_kind()
        )
        return make_executor(kind, self.jobs, self.scheduler)

    def check_executor(self, executor: ChildExecutor | None) -> None:
        """Refuse a local reproducer when `executor` does not run nested
        pipelines serially on the calling thread (`PassflowError`, mlir-opt's
        message); `apply` checks the pass manager's executor the same way."""
        if self.local_reproducer and not threading_disabled(executor):
            raise PassflowError(LOCAL_REPRODUCER_THREADING_ERROR)

    def apply(self, pm: PassManager) -> None:
        """Apply the options to `pm` (MLIR's `applyPassManagerCLOptions`, in
        mlir-opt's order): the verifier, the crash reproducer, statistics, IR
        printing, then the progress bar.

        Apply them before timing (`pm.enable_timing`), so that the dumps are not
        timed, and before a reproducer's own flags (`--run-reproducer`), which
        override them. A local reproducer or module-scope printing on a pass
        manager whose threading is not disabled (`pm.threading_disabled`) raises
        `PassflowError` with mlir-opt's message (the module-scope one ends with a
        newline, as mlir-opt's does), before the IR printing is added.
        """
        pm.enable_verifier(self.verify_each)
        self.check_executor(pm.executor)
        if self.crash_reproducer is not None:
            pm.enable_crash_reproducer(
                self.crash_reproducer, local=self.local_reproducer
            )
        if self.statistics:
            pm.enable_statistics(self.statistics_display)
        if self.print_ir.module_scope and not pm.threading_disabled:
            raise PassflowError(MODULE_SCOPE_THREADING_TOOL_ERROR)
        if self.print_ir.enabled or self.print_ir.module_scope:  # else it adds nothing
            pm.enable_ir_printing(self.print_ir)
        if self.progress:
            pm.enable_progress(sys.stderr)
        if self.report is not None:
            from passflow.graph import dump_pipeline_graphs, find_schedules  # 37 ms

            pm.enable_report(self.report)
            graph = dump_pipeline_graphs(pm, "dot") if find_schedules(pm) else None
            self.report.set_graph(graph)
        if self.history is not None:
            pm.enable_ir_history(self.history)
