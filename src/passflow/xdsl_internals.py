"""The xDSL internals passflow relies on outside parsing, each behind one function.

`passflow.ir` is the bridge to xDSL, and this module is its other half: every
use of something xDSL does not promise (a private field, the layout of one of
its classes, a helper of one of its passes, how it raises a diagnostic) that
is not part of the parser and context in `passflow.ir` is here. The rest of
passflow calls these functions and uses xDSL's public API only, so an xDSL
upgrade that changes one of these things breaks this file, and
`tests/test_xdsl_canaries.py` says which one.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Callable, Iterable, Sequence
from inspect import getattr_static
from typing import Protocol, cast

from xdsl.context import Context
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType
from xdsl.ir import Attribute, Block, Dialect, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.traits import HasFolder
from xdsl.transforms.common_subexpression_elimination import (
    has_other_side_effecting_op_in_between,
)
from xdsl.transforms.dead_code_elimination import result_only_effects
from xdsl.utils.diagnostic import Diagnostic as XDSLDiagnostic
from xdsl.utils.exceptions import ArgSpecParseError

from passflow.llvm_integers import wrap_index

__all__ = [
    "OP_FIELDS",
    "Folder",
    "StringPrinter",
    "arg_spec_error_reason",
    "diagnostic_op_messages",
    "foreign_op_state",
    "may_write_between",
    "new_value_name_id",
    "only_affects_own_results",
    "operand_tuple",
    "print_new_line",
    "printer_value_names",
    "registered_dialect_factories",
    "restore_foreign_op_state",
    "retarget_rewriter",
    "set_name_hint_verbatim",
    "successor_tuple",
    "working_folder",
]


# --- names of values and blocks ------------------------------------------------------


def set_name_hint_verbatim(named: SSAValue | Block, name: str | None) -> None:
    """Give a value or block exactly the name hint `name`, as read from another
    copy of the same IR (`name_hint` of that copy).

    xDSL's `name_hint` setter drops a trailing `_<digits>` (`x_1` becomes `x`),
    so IR rebuilt in another process would print other names than the original.
    """
    named._name = name  # pyright: ignore[reportPrivateUsage]


def operand_tuple(op: Operation) -> tuple[SSAValue, ...]:
    """`op`'s operands as the tuple xDSL holds them in: immutable, replaced
    (never edited) when they change, so keeping it is a snapshot at no cost."""
    return op._operands  # pyright: ignore[reportPrivateUsage]


def successor_tuple(op: Operation) -> tuple[Block, ...]:
    """`op`'s successors as the tuple xDSL holds them in (as `operand_tuple`)."""
    return op._successors  # pyright: ignore[reportPrivateUsage]


# --- printing -----------------------------------------------------------------------


class StringPrinter(Printer):
    """xDSL's printer, printing a piece of text without a newline to a
    `StringIO` (nearly every piece, on every print passflow makes) straight to
    it: xDSL's `print_string` looks for newlines to indent after them through
    two more calls, a fifth of a function's print. The column it keeps is kept
    the same; anything else takes xDSL's way."""

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        stream = self.stream
        if "\n" in text or type(stream) is not io.StringIO:
            super().print_string(text, indent=indent)
            return
        self._current_column += len(text)
        stream.write(text)


def new_value_name_id(printer: Printer) -> str:
    """The next number `printer` would give an unnamed value (`%0`, `%1`, ...),
    taken so that no value gets it: MLIR numbers ops without results too when
    it prints value users (`--mlir-print-value-users`)."""
    return printer._get_new_valid_name_id()  # pyright: ignore[reportPrivateUsage]


def printer_value_names(printer: Printer) -> dict[SSAValue, str]:
    """The names `printer` gave values so far (its own table, which a
    subclass that chooses names must fill as xDSL's `print_ssa_value` does)."""
    return printer._ssa_values  # pyright: ignore[reportPrivateUsage]


def print_new_line(printer: Printer) -> None:
    """End the line `printer` is on, at its indentation (a comment line of
    its own)."""
    printer._print_new_line()  # pyright: ignore[reportPrivateUsage]


# --- a context's dialects -----------------------------------------------------------


def registered_dialect_factories(ctx: Context) -> dict[str, Callable[[], Dialect]]:
    """Each dialect registered in `ctx`, by name, with the factory it was
    registered with (so that reading them loads none).

    xDSL keeps the factories in a private dict; where it has none (another
    layout), each registered dialect is loaded and returned as it is.
    """
    factories = getattr(ctx, "_registered_dialects", None)
    if isinstance(factories, dict):
        return dict(cast(dict[str, Callable[[], Dialect]], factories))
    found: dict[str, Callable[[], Dialect]] = {}
    for name in list(ctx.registered_dialect_names):
        dialect = ctx.get_dialect(name)
        found[name] = lambda dialect=dialect: dialect
    return found


# --- state other code keeps on op objects --------------------------------------------

OP_FIELDS = frozenset(field.name for field in dataclasses.fields(Operation))
"""xDSL's own per-op state: the fields of its `Operation` dataclass."""


def foreign_op_state(op: Operation) -> list[tuple[str, object]]:
    """What code other than xDSL stored on the op object itself (anything in its
    instance dict that is not one of xDSL's fields), so that a copy of the op made
    elsewhere (`passflow.executors.transfer`) can carry it too.

    CPython keeps an object's attributes without a dict until one is asked for:
    the first call for an op costs it one (about 60 bytes and 5 µs).
    """
    return [(key, value) for key, value in vars(op).items() if key not in OP_FIELDS]


def restore_foreign_op_state(
    op: Operation, state: Iterable[tuple[str, object]]
) -> None:
    """Put `foreign_op_state` read from another op on `op`."""
    vars(op).update(state)


# --- diagnostics ---------------------------------------------------------------------


def diagnostic_op_messages(err: BaseException) -> list[tuple[Operation, str]]:
    """The ops and messages of the innermost xDSL `Diagnostic` that raised `err`
    (`op.emit_error`, the pattern walker's "Error while applying pattern"), read
    from its traceback: xDSL prints them into the exception's notes, with the whole
    module, and keeps them nowhere else."""
    code = XDSLDiagnostic.raise_exception.__code__
    found: XDSLDiagnostic | None = None
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            candidate = tb.tb_frame.f_locals.get("self")
            if isinstance(candidate, XDSLDiagnostic):
                found = candidate
        tb = tb.tb_next
    if found is None:
        return []
    return [
        (named, message)
        for named, messages in found.op_messages.items()
        for message in messages
    ]


def arg_spec_error_reason(err: ArgSpecParseError) -> str:
    """What xDSL's pass spec parser says is wrong, for a one-line option error:
    the last line of its message, which first repeats the whole spec with a caret
    under the offending token."""
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    return lines[-1] if lines else "invalid pass options"


# --- folding and rewriting -----------------------------------------------------------

_UNIMPLEMENTED_FOLD: object = getattr_static(HasFolder, "fold")


class Folder(Protocol):
    """What folds an op: its `HasFolder` trait, or `working_folder`'s wrapper."""

    def fold(self, op: Operation) -> Sequence[SSAValue | Attribute] | None: ...


@dataclasses.dataclass(frozen=True, slots=True)
class _IndexWrapping:
    """An xDSL folder whose `index` constants wrap at 64 bits, as MLIR's do.

    xDSL's integer folders truncate to the width of an `iN`, but an `index` has
    none in xDSL: `arith.addi` of `9223372036854775807` and `1 : index` folded
    to `9223372036854775808 : index`, which mlir-opt cannot read back.
    """

    folder: HasFolder

    def fold(self, op: Operation) -> Sequence[SSAValue | Attribute] | None:
        folded = self.folder.fold(op)
        if folded is None:
            return None
        result: list[SSAValue | Attribute] | None = None
        for index, value in enumerate(folded):
            if not isinstance(value, IntegerAttr):
                continue
            integer = cast(IntegerAttr[IntegerType | IndexType], value)
            if isinstance(integer.type, IndexType):
                number = integer.value.data
                wrapped = wrap_index(number)
                if wrapped != number:
                    if result is None:
                        result = list(folded)
                    result[index] = IntegerAttr(wrapped, IndexType())
        return folded if result is None else result


def working_folder(op: Operation) -> Folder | None:
    """The op's folder, if it has one that folds, with MLIR's `index` wrapping.

    xDSL's `bigint.constant` declares the bare `HasFolder()` trait, whose `fold`
    only raises `NotImplementedError`: no folder, rather than a crash. (xDSL's
    canonicalizer never folds constants, so it never calls it.) Every fold
    passflow makes (the greedy driver, SCCP) goes through this folder, so an
    overflowing `index` fold wraps as in MLIR (`_IndexWrapping`).
    """
    found = op.get_trait(HasFolder)
    if found is None or getattr_static(type(found), "fold") is _UNIMPLEMENTED_FOLD:
        return None
    return _IndexWrapping(found)


def retarget_rewriter(rewriter: PatternRewriter, op: Operation) -> PatternRewriter:
    """`rewriter`, made ready to match `op` as a new `PatternRewriter(op)` would be
    (nothing done yet, inserting before `op`, no name hint), keeping its listeners.

    A greedy driver tries patterns on many ops; building a rewriter and registering
    its listeners for each costs more than the matching usually does.
    """
    rewriter.has_done_action = False
    rewriter.current_operation = op
    rewriter.insertion_point = InsertPoint.before(op)
    rewriter.name_hint = None
    return rewriter


# --- memory effects ------------------------------------------------------------------


def only_affects_own_results(op: Operation) -> bool:
    """Whether `op`'s known effects are reads, or allocations of values it or its
    regions define: nothing a use of its results would miss if it were gone (MLIR's
    `wouldOpBeTriviallyDead` test on effects; xDSL's DCE helper)."""
    return result_only_effects(op)


def may_write_between(first: Operation, last: Operation) -> bool:
    """Whether an op from `first` up to `last` (excluded), in their common block,
    may write memory or has unknown effects (xDSL's CSE helper)."""
    return has_other_side_effecting_op_in_between(first, last)
