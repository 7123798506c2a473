"""`print-ir`: dump the op being processed to stderr (MLIR's PrintIRPass)."""

from __future__ import annotations

import sys

from passflow.ir import print_op
from passflow.options import Option
from passflow.pass_base import OperationPass

__all__ = ["PrintIRPass"]


class PrintIRPass(OperationPass):
    """Print the op it runs on, under a `// -----// IR Dump <label> //----- //` header.

    A debugging probe to put anywhere in a pipeline; it never changes the IR,
    so every analysis is kept.
    """

    name = "PrintIRPass"
    argument = "print-ir"
    summary = "Print IR on the debug stream"
    description = """\
Print the entire IR on the debug stream. This is meant for debugging
purposes to inspect the IR at a specific point in the pipeline.
"""

    label = Option("", help="Label")

    def run_on_operation(self) -> None:
        label = f" {self.label}" if self.label else ""
        header = f"// -----// IR Dump{label} //----- //\n"
        sys.stderr.write(header + print_op(self.get_operation()) + "\n")
        self.mark_all_analyses_preserved()
