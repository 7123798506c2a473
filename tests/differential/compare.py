"""Comparing what the two tools made of a chunk, and the normalisations allowed.

Outputs of passes run through passflow's xDSL adapter must be identical, up to
two normalisations that concern the tools, not the passes (`TOOL_NORMALISATIONS`).
Outputs of passflow's own passes may also differ where `docs/decisions.md` says
passflow follows MLIR rather than xDSL; each such normalisation is implemented
here, next to the words of the decision it implements, and applies only to the
passes the decision is about. Errors are compared by their first line, with
the location and the way each tool names the failing op taken off.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from functools import cache
from io import StringIO

from xdsl.backend.register_type import RegisterType
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import ConstantLike, IsolatedFromAbove
from xdsl.universe import Universe
from xdsl.utils.exceptions import DiagnosticException

from .tools import Outcome

__all__ = [
    "Kind",
    "Verdict",
    "compare",
    "error_key",
    "normalise_output",
    "xdsl_error_keys",
]


class Kind(Enum):
    AGREE = "agree"
    """Same output (after the tool normalisations)."""
    AGREE_NORMALISED = "agree after a decision's normalisation"
    """Same output once a `docs/decisions.md` difference is normalised away."""
    BOTH_ERROR = "both fail, same error"
    DIFFER = "differ"


@dataclass(frozen=True)
class Verdict:
    kind: Kind
    normalisations: tuple[str, ...] = ()
    """The decision normalisations that made the outputs agree."""
    detail: str = ""
    """For a difference: a unified diff of the outputs, or the two errors."""

    @property
    def agrees(self) -> bool:
        return self.kind is not Kind.DIFFER


# --- tool normalisations (every case) -----------------------------------------


def _trailing_newlines(text: str) -> str:
    """xdsl-opt ends the output of a chunk with an empty line; passflow-opt, as
    mlir-opt, with the closing line. This frames the output, it is not IR."""
    return text.rstrip() + "\n"


_OBJECT_ID = re.compile(r"(<[A-Za-z_][\w.]* )\d{6,}\b")


def _object_ids(text: str) -> str:
    """Passes that print Python reprs (`transform-interpreter`'s
    `transform.print`) show `id()` numbers, which differ between any two runs,
    even of the same tool."""
    return _OBJECT_ID.sub(r"\1<id>", text)


TOOL_NORMALISATIONS: tuple[Callable[[str], str], ...] = (
    _trailing_newlines,
    _object_ids,
)


# --- decision normalisations (passflow's own passes only) --------------------


@cache
def _context() -> Context:
    """xDSL's context with every dialect, for reading back either tool's output."""
    ctx = Context(allow_unregistered=True)
    for name, factory in Universe.get_multiverse().all_dialects.items():
        ctx.register_dialect(name, factory)
    return ctx


def _is_uniquable_constant(op: Operation) -> bool:
    """A constant MLIR's OperationFolder merges and hoists: `ConstantLike`, one
    result, no operands or regions. A result in an *allocated* register
    (`rv32.li 5 : !riscv.reg<a0>`) is not a value that can live anywhere: writing
    a0 is the op's point, so it is no constant to move or merge."""
    if not op.has_trait(ConstantLike, value_if_unregistered=False):
        return False
    if len(op.results) != 1 or op.operands or op.regions:
        return False
    result_type = op.results[0].type
    return not (isinstance(result_type, RegisterType) and result_type.is_allocated)


def _insertion_regions(op: Operation) -> Iterator[Region]:
    """The regions constants are uniqued in: those of the top-level op and of
    every op isolated from above (unregistered ops count as isolated)."""
    yield from op.regions
    for nested in op.walk():
        if nested is not op and nested.has_trait(
            IsolatedFromAbove, value_if_unregistered=True
        ):
            yield from nested.regions


def _constants_in(region: Region) -> Iterator[Operation]:
    """The uniquable constants of `region` and of the regions nested in it, except
    those inside another insertion region."""
    for block in region.blocks:
        for op in list(block.ops):
            if _is_uniquable_constant(op):
                yield op
            if not op.has_trait(IsolatedFromAbove, value_if_unregistered=True):
                for nested in op.regions:
                    yield from _constants_in(nested)


_RESULT_NAME = re.compile(r"^%[^=]*= ")


def _constant_key(op: Operation) -> str:
    """The constant in generic form without its result's name: op, value, type."""
    stream = StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(op)
    return _RESULT_NAME.sub("", stream.getvalue())


def _hoist_constants(module: Operation) -> None:
    for region in list(_insertion_regions(module)):
        entry = region.first_block
        if entry is None:
            continue
        kept: dict[str, Operation] = {}
        for op in list(_constants_in(region)):
            key = _constant_key(op)
            survivor = kept.get(key)
            if survivor is None:
                kept[key] = op
                continue
            op.results[0].replace_all_uses_with(survivor.results[0])
            op.detach()
            op.erase()
        for key in sorted(kept, reverse=True):
            op = kept[key]
            op.results[0].name_hint = None
            op.detach()
            first = entry.first_op
            if first is None:
                entry.add_op(op)
            else:
                entry.insert_op_before(op, first)


def constant_placement(text: str) -> str | None:
    """docs/decisions.md, "Built-in passes", canonicalize: *constants are uniqued
    and hoisted as MLIR's OperationFolder does*. MLIR's greedy driver merges
    equal constants (same op, value and type) of one insertion region (the
    nearest region of an op isolated from above, or of the top-level op) and
    moves each to the front of that region's entry block; xDSL's canonicalize
    leaves constants where they are and keeps duplicates.

    Applied to both outputs: every uniquable constant is merged with its equals
    and moved to the front of its insertion region's entry block, in one fixed
    order (by printed form), its name dropped (which of several equal
    constants survives, and so which name, is the driver's business). Nothing
    else changes, so a pattern one tool applies and the other does not still
    shows. None if the text does not parse back."""
    try:
        module = Parser(_context(), text).parse_module()
        _hoist_constants(module)
        return _print_module(module)
    except Exception:  # then the outputs are compared as they are
        return None


def _print_module(module: ModuleOp) -> str:
    stream = StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue() + "\n"


DECISION_NORMALISATIONS: dict[str, tuple[Callable[[str], str | None], ...]] = {
    "canonicalize": (constant_placement,),
}
"""For each passflow pass (by its passflow-opt name) the normalisations its
`docs/decisions.md` entries justify. A case gets those of every native pass in
its pipeline."""


def normalise_output(text: str) -> str:
    for normalise in TOOL_NORMALISATIONS:
        text = normalise(text)
    return text


# --- errors ---------------------------------------------------------------------


_CRASH = re.compile(r"^pass '[^']*' crashed on '[^']*' op: ")
_OP_PREFIX = re.compile(r"^'[\w.$-]+' op ")


@cache
def _diagnostic_exception_names() -> frozenset[str]:
    names: set[str] = set()
    pending: list[type[BaseException]] = [DiagnosticException]
    while pending:
        cls = pending.pop()
        names.add(cls.__name__)
        pending.extend(cls.__subclasses__())
    return frozenset(names)


def error_key(line: str) -> str:
    """An error line without what only says where and how it is reported.

    - the location: passflow-opt prefixes `file:line:col: error: ` (taken off when
      the line is read); xdsl-opt points at the op in a printed copy of the IR;
    - passflow's name of the failing op, `'arith.addi' op ` (MLIR's form);
    - passflow's crash wrapper, `pass 'P' crashed on 'op' op: ` (docs/decisions.md,
      "Pass manager": a Python exception inside a pass is reported as a crash of
      that pass on that op); xdsl-opt lets the exception propagate;
    - the exception's type, when it is one of xDSL's `DiagnosticException`s,
      whose message is what xdsl-opt reports. Any traceback is checked apart.
    """
    line = _CRASH.sub("", line.strip())
    head, sep, rest = line.partition(":")
    if sep and head in _diagnostic_exception_names():
        line = rest.strip()
    line = _OP_PREFIX.sub("", line)
    return line.strip()


def xdsl_error_keys(xdsl: Outcome) -> list[str]:
    """What passflow-opt may say for xdsl-opt's error: the exception's message
    (the first thing xdsl-opt prints), or a message xDSL attached to an op in the
    IR it prints next, *if* that message carries the exception's
    (`Error while applying pattern: <message>`), or the exception has none
    (`x86-regalloc-verify-liveness` puts its reasons on the ops only). A message
    that drops the exception's reason (`Error allocating op` for `Out of
    registers.`) is a difference."""
    assert xdsl.error is not None
    message = error_key(xdsl.error)
    keys = [message]
    keys += [
        error_key(note)
        for note in xdsl.annotations
        if message in note or not message.strip()
    ]
    return keys


# --- verdicts -------------------------------------------------------------------


def compare(xdsl: Outcome, passflow: Outcome, native: tuple[str, ...]) -> Verdict:
    """The verdict on one chunk. `native` names the passflow passes the case's
    pipeline runs (their decision normalisations apply)."""
    if xdsl.output is not None and passflow.output is not None:
        left = normalise_output(xdsl.output)
        right = normalise_output(passflow.output)
        if left == right:
            return Verdict(Kind.AGREE)
        applied: list[str] = []
        for name in native:
            for normalise in DECISION_NORMALISATIONS.get(name, ()):
                left_n, right_n = normalise(left), normalise(right)
                if left_n is None or right_n is None:
                    continue
                left, right = left_n, right_n
                applied.append(f"{name}: {normalise.__name__}")
        if applied and left == right:
            return Verdict(Kind.AGREE_NORMALISED, tuple(applied))
        return Verdict(Kind.DIFFER, tuple(applied), _diff(left, right))
    if xdsl.error is not None and passflow.error is not None:
        keys = xdsl_error_keys(xdsl)
        right_key = error_key(passflow.error)
        if right_key in keys:
            return Verdict(Kind.BOTH_ERROR)
        notes = "".join(
            f"\n  xdsl-opt op note: {note}" for note in xdsl.annotations[:3]
        )
        return Verdict(
            Kind.DIFFER,
            detail=f"xdsl-opt error:     {keys[0]}{notes}\n"
            f"passflow-opt error: {right_key}",
        )
    if xdsl.error is not None:
        return Verdict(
            Kind.DIFFER,
            detail=f"only xdsl-opt fails: {xdsl.error}\n"
            + "passflow-opt output:\n"
            + _head(passflow.output or ""),
        )
    return Verdict(
        Kind.DIFFER,
        detail=f"only passflow-opt fails: {passflow.error}\n"
        + _head(passflow.details)
        + "xdsl-opt output:\n"
        + _head(xdsl.output or ""),
    )


def _head(text: str, lines: int = 12) -> str:
    kept = text.splitlines()[:lines]
    more = len(text.splitlines()) - len(kept)
    return "\n".join(kept) + (f"\n... ({more} more lines)\n" if more > 0 else "\n")


def _diff(left: str, right: str, limit: int = 40) -> str:
    lines = list(
        difflib.unified_diff(
            left.splitlines(),
            right.splitlines(),
            "xdsl-opt",
            "passflow-opt",
            lineterm="",
            n=1,
        )
    )
    more = len(lines) - limit
    return "\n".join(lines[:limit]) + (f"\n... ({more} more lines)" if more > 0 else "")
