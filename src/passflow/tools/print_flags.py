"""mlir-opt's printing and diagnostic flags: declared, read, and applied.

The printing flags make one `PrintOptions` (`print_options`), which the output,
IR dumps around passes and the op a diagnostic shows all use. The diagnostic
flags make a `DiagnosticOptions`, which wraps the handler diagnostics go to
(`DiagnosticOptions.wrap`): the op note, the stack trace note, notes dropped,
severities dropped. Nothing here loads the IR until a diagnostic shows an op.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import dataclasses
import functools
from dataclasses import dataclass

from passflow.diagnostics import (
    Diagnostic,
    DiagnosticHandler,
    Severity,
    annotating,
)
from passflow.print_options import DEFAULT_PRINT_OPTIONS, PrintOptions
from passflow.tools.command_line import (
    CommandLineError,
    FlagParser,
    check_choice,
    option_name,
    parse_integer,
)

__all__ = [
    "VERBOSITY_LEVELS",
    "DiagnosticOptions",
    "add_print_flags",
    "changes_printing",
    "print_options",
]

VERBOSITY_LEVELS = ("errors", "warnings", "remarks")
"""`--mlir-diagnostic-verbosity-level`'s values, from fewest diagnostics shown."""

_SHOWN = {
    "errors": {Severity.ERROR},
    "warnings": {Severity.ERROR, Severity.WARNING},
    "remarks": {Severity.ERROR, Severity.WARNING, Severity.REMARK},
}


def add_print_flags(parser: FlagParser) -> None:
    """The printing, diagnostic and round-trip flags, as mlir-opt names them."""
    flag = parser.add_flag
    add = parser.add_option
    flag(
        "--mlir-print-debuginfo",
        help="print locations (loc(...)) on ops and block arguments, with #loc "
        "aliases after the output",
    )
    flag(
        "--mlir-pretty-debuginfo",
        help="print locations in a readable form (file.mlir:3:4), not parseable",
    )
    flag(
        "--mlir-print-local-scope",
        help="print locations inline, without aliases",
    )
    for name, help in (
        (
            "mlir-elide-elementsattrs-if-larger",
            "print dense elements attributes with more than N elements as "
            "dense_resource<__elided__>",
        ),
        (
            "mlir-elide-resource-strings-if-larger",
            "leave out of the {-# ... #-} section the resource entries longer "
            "than N characters",
        ),
    ):
        add(
            f"--{name}",
            type=functools.partial(parse_uint, name),
            metavar="N",
            help=help,
        )
    flag(
        "--mlir-print-value-users",
        help="print the users of each op's results and block arguments as a comment",
    )
    flag(
        "--mlir-print-unique-ssa-ids",
        help="number values and name conflicts uniquely across all regions",
    )
    flag(
        "--mlir-print-op-on-diagnostic",
        default=True,
        help="attach the op a diagnostic is about as a note",
    )
    flag(
        "--mlir-print-stacktrace-on-diagnostic",
        help="attach the (Python) stack trace where a diagnostic was emitted as a note",
    )
    flag("--mlir-disable-diagnostic-notes", help="drop the notes of diagnostics")
    add(
        "--mlir-diagnostic-verbosity-level",
        default="remarks",
        choices=VERBOSITY_LEVELS,
        help="which diagnostics to show: errors, warnings (and errors), remarks "
        "(all; the default)",
    )
    flag(
        "--verify-roundtrip",
        help="print the output, parse it again and check that it prints the same",
    )


def parse_uint(flag: str, text: str) -> int:
    """A `cl::opt<unsigned>` value: an integer as llvm::cl reads one, not negative."""
    try:
        value = parse_integer(flag, text)
    except CommandLineError:
        value = -1
    if value < 0:
        raise CommandLineError(
            f"for the {option_name(flag)} option: '{text}' value invalid for "
            "uint argument!"
        )
    return value


def print_options(args: argparse.Namespace) -> PrintOptions:
    """The printing flags of a namespace parsed with `add_print_flags`' flags
    (and `--mlir-print-op-generic`)."""
    return PrintOptions(
        generic=bool(getattr(args, "mlir_print_op_generic", False)),
        debug_info=args.mlir_print_debuginfo,
        pretty_debug_info=args.mlir_pretty_debuginfo,
        local_scope=args.mlir_print_local_scope,
        elements_limit=args.mlir_elide_elementsattrs_if_larger,
        resource_limit=args.mlir_elide_resource_strings_if_larger,
        value_users=args.mlir_print_value_users,
        unique_ssa_ids=args.mlir_print_unique_ssa_ids,
    )


def changes_printing(args: argparse.Namespace) -> bool:
    """Whether the flags print or report anything a run split per top-level op
    (`passflow.sliced`) cannot: location aliases span the whole output, value
    ids the whole module, and diagnostics are filtered or annotated here."""
    return (
        not print_options(args).with_generic(False).is_default
        or args.mlir_print_stacktrace_on_diagnostic
        or args.mlir_disable_diagnostic_notes
        or args.mlir_diagnostic_verbosity_level != "remarks"
        or args.verify_roundtrip
    )


@dataclass(frozen=True)
class DiagnosticOptions:
    """What the diagnostic flags ask for."""

    print_op: bool = True
    stacktrace: bool = False
    notes: bool = True
    verbosity: str = "remarks"
    printing: PrintOptions = DEFAULT_PRINT_OPTIONS
    """How the op of `print_op` is printed (an error's in generic form)."""

    @staticmethod
    def from_args(args: argparse.Namespace) -> DiagnosticOptions:
        """The diagnostic flags; under `--verify-diagnostics` no op note, as
        mlir-opt (an expected-error test expects no such note)."""
        level: str = args.mlir_diagnostic_verbosity_level
        check_choice("mlir-diagnostic-verbosity-level", level, VERBOSITY_LEVELS)
        return DiagnosticOptions(
            print_op=args.mlir_print_op_on_diagnostic
            and args.verify_diagnostics is None,
            stacktrace=args.mlir_print_stacktrace_on_diagnostic,
            notes=not args.mlir_disable_diagnostic_notes,
            verbosity=level,
            printing=print_options(args),
        )

    def wrap(self, handler: DiagnosticHandler) -> DiagnosticHandler:
        """`handler`, seeing only the severities and notes these options show."""
        if self.notes and self.verbosity == "remarks":
            return handler
        shown = _SHOWN[self.verbosity]

        def filtered(diagnostic: Diagnostic) -> None:
            if diagnostic.severity not in shown:
                return
            if not self.notes and diagnostic.notes:
                diagnostic = copy.copy(diagnostic)
                diagnostic.notes = []
            handler(diagnostic)

        return filtered

    def annotating(self) -> contextlib.AbstractContextManager[None]:
        """A block in which diagnostics get mlir-opt's notes as they are made
        (`passflow.diagnostics.annotating`): the stack trace, the op."""
        if not self.print_op and not self.stacktrace:
            return contextlib.nullcontext()
        return annotating(self.annotate)

    def annotate(self, diagnostic: Diagnostic) -> None:
        """MLIR's notes, in its order: the trace (`emitDiag`), then the op
        (`Operation::emitError`: generic, in local scope; a warning's or
        remark's op as printed; an op with regions on a new line)."""
        if self.stacktrace:
            import traceback  # --mlir-print-stacktrace-on-diagnostic only

            trace = "".join(traceback.format_stack()[:-3]).rstrip("\n")
            diagnostic.attach_note(f"diagnostic emitted with trace:\n{trace}")
        op = diagnostic.operation
        if not self.print_op or op is None:
            return
        from passflow import ir  # loaded already: the diagnostic is about an op

        if not isinstance(op, ir.Operation):
            return
        options = dataclasses.replace(self.printing, value_users=False)
        if diagnostic.severity is Severity.ERROR:
            options = dataclasses.replace(options, generic=True, local_scope=True)
        try:
            text = ir.print_op_in_scope(op, options)
        except Exception:  # a custom printer that trips over invalid IR
            try:
                text = ir.print_op_in_scope(op, options.with_generic())
            except Exception:  # an op no printer can show: no note, as no crash
                return
        if op.regions:
            text = "\n" + text
        diagnostic.attach_note(f"see current operation: {text}")
