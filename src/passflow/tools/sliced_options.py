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
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from passflow.diagnostics import Diagnostic, DiagnosticHandler
from passflow.executors.capture import CapturedOutput

__all__ = ["replay_events", "sliced_flags"]

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
    return args.dump_pipeline_graph is None and args.remark_format == "emitRemark"


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
