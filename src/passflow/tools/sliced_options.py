"""When passflow-opt runs a file sliced (`passflow.sliced`), and how it plays
the sliced run's diagnostics back.

Slicing is how passflow-opt runs a file on several cores from parse to print:
the parent scans the text for the top-level ops and each worker parses, runs
and prints its own. It applies to the plain run of a nested pipeline on a
multi-process executor; anything that observes a whole run in one process
(timing, IR printing, reproducers, actions, remark filters, pipeline dumps) or
that changes what the input is (`--no-implicit-module`, no verifier) keeps
the run whole, as does anything the sliced run itself cannot vouch for
(`passflow.sliced.Fallback`).

A file too small to fork for runs whole too (`worth_slicing`), and then
`passflow.sliced` is never imported: its scan, batches, workers and cache
cost a run that cannot gain from them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from passflow.diagnostics import Diagnostic, DiagnosticHandler
from passflow.executors.captured_output import CapturedOutput
from passflow.tools.print_flags import changes_printing

if TYPE_CHECKING:
    from passflow.execution import ChildExecutor

__all__ = [
    "SMALL_INPUT",
    "replay_events",
    "sliced_flags",
    "worth_slicing",
]

SMALL_INPUT = 65_536
"""Characters of input up to which a budgeted process executor runs the file
whole. Below it a sliced run forks little or not at all (the parent runs
batches itself for the serial budget, as the whole run's adaptor runs
children), and its imports, scan and shell cost more than two jobs save:
`bench/startup.py --slicing` measured sliced runs 1.01-1.26x slower than
whole ones from 3 to 71 KiB of canonicalize+cse input on 2 cores. A whole
run still forks for its passes once they outlast the budget."""

_WHOLE_RUN_FLAGS = (
    "no_implicit_module",
    "run_reproducer",
    "mlir_generate_reproducer",
    "dump_pass_pipeline",
    "mlir_very_unsafe_disable_verifier_on_parsing",
    "mlir_timing",
    "timing_trace",
    "log_actions_to",
    "profile_actions_to",
    "mlir_debug_counter",
    "mlir_print_debug_counter",
    "remarks_filter",
    "remarks_filter_passed",
    "remarks_filter_missed",
    "remarks_filter_analyse",
    "remarks_filter_failed",
)


def sliced_flags(args: argparse.Namespace) -> bool:
    """Whether the flags allow a sliced run: none of them observes the whole
    run or changes what the input is. The executor decides the rest
    (`passflow.sliced.run_sliced_on`), then the pass manager
    (`passflow.sliced.why_not_sliced`)."""
    if any(getattr(args, flag, None) for flag in _WHOLE_RUN_FLAGS):
        return False
    if changes_printing(args):
        return False
    return args.dump_pipeline_graph is None and args.remark_format == "emitRemark"


def worth_slicing(
    executor: ChildExecutor | None, text: str, cached: bool = False
) -> bool:
    """Whether a sliced run of `text` on `executor` may beat a whole run.

    Not when the executor runs nested pipelines in this process (no executor,
    serial, one job): then only a result cache gains from slicing. Not for a
    process executor with a serial budget on `SMALL_INPUT` characters or
    fewer, unless cached: its parent would run every batch itself, as the
    whole run's adaptor runs every child itself. Not when no worker could be
    forked now (`ProcessExecutor.worker_available`): on a busy machine or
    under a jobserver with no free token the whole run is the cheaper one, and
    its adaptor still forks if a CPU comes free. Other executors are left to
    `passflow.sliced` (`sliced_jobs_of`). The whole run is the reference, so
    the choice changes how fast the output comes, never what it is.
    """
    if executor is None or executor.threading_disabled:
        return cached
    # Loaded with the executor it checks for; `sliced_flags` alone (the
    # cache's warm path) does not need it.
    from passflow.executors.forking import ProcessExecutor

    if isinstance(executor, ProcessExecutor):
        if cached:
            return True
        large = executor.serial_budget <= 0 or len(text) > SMALL_INPUT
        # No worker to be had now (a busy machine, no jobserver token): the
        # whole run costs what a serial run costs, a sliced one more.
        return large and executor.worker_available()
    return True


def replay_events(events: Sequence[Diagnostic], handler: DiagnosticHandler) -> None:
    """A sliced run's diagnostics to `handler` and the text its passes wrote to
    the standard streams, in the order a whole run produces them."""
    for event in events:
        if isinstance(event, CapturedOutput):
            (sys.stdout if event.stream == "stdout" else sys.stderr).write(
                event.message
            )
        else:
            handler(event)
