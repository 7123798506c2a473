"""One process's side of a sliced run: parse a batch of pieces, verify them, run
the pipeline on them and print them.

A `BatchRunner` lives in each process that takes part (the parent, a forked
worker, a Dask worker). It parses the module's shell once (the module with an
empty body, and the file's aliases) and then, per batch, parses the batch's
pieces into it, with the pieces they reference by symbol beside them as
reference-only ops: symbol lookups (a `func.call`'s verifier) find them, the
pipeline leaves them alone (`PassManager.run(reference_only=)`), and they are
not printed. Whatever the batch's diagnostics and the text its passes write to
`sys.stdout`/`sys.stderr` come back in the order they happened.

Anything a serial run of the whole file could report differently — a parse or
verifier error, an exception outside the passes, a printer that fails — makes
the batch ask for a fallback: the parent then runs the file as a whole.
"""

from __future__ import annotations

import bisect
import gc
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute
from xdsl.traits import IsolatedFromAbove

from passflow import ir, verifier
from passflow.diagnostics import Diagnostic, IRParseError, PassPipelineError
from passflow.execution import ChildExecutor, ChildWork
from passflow.executors.capture import captured_output
from passflow.executors.transfer import Encoder
from passflow.instruments.symbol_changes import labelled_units
from passflow.ir import Operation
from passflow.pass_manager import PassManager
from passflow.sliced.scan import PieceText

if TYPE_CHECKING:  # loaded for a run that records its history (`--ir-history`)
    from passflow.instruments.ir_history import HistoryRecords, IRHistory

__all__ = ["BatchResult", "BatchRunner", "PieceOutcome"]

_NOT_THE_SHELLS_FORM = "the printed module does not have the shell's form"


@dataclass
class PieceOutcome:
    """What one piece's run gave, when the pieces of a batch run one at a
    time (`BatchRunner.run(separately=True)`, for the result cache): its
    diagnostics and captured output, whether the pipeline failed on it, its
    ops as printed inside the module (None if it failed), its symbols before
    and after, and its header before and after (when watched)."""

    index: int
    events: list[Diagnostic]
    failed: bool
    body: str | None
    initial_symbols: list[str]
    symbols: list[str]
    header: tuple[str, str] | None
    history: HistoryRecords | None = None


@dataclass
class BatchResult:
    """What a batch sends back to the parent.

    `events` are its diagnostics and `CapturedOutput`, in order. `body` is the
    batch's ops as printed inside the module (None if the pipeline failed, or
    if the ops came back instead: as objects, `ops`, from a batch run in this
    process, or `encoded` by `passflow.executors.transfer` from another).
    `initial_symbols` and `symbols` are the `sym_name`s of its ops before and
    after the run; `headers` the op,
    regions left out, before and after the run, of each piece another piece
    references. `fallback` says why the parent must run the file whole.
    """

    batch: int
    events: list[Diagnostic] = field(default_factory=lambda: list[Diagnostic]())
    failed: bool = False
    body: str | None = None
    ops: list[Operation] = field(default_factory=lambda: list[Operation]())
    encoded: bytes | None = None
    symbols: list[str] = field(default_factory=lambda: list[str]())
    initial_symbols: list[str] = field(default_factory=lambda: list[str]())
    headers: dict[int, tuple[str, str]] = field(
        default_factory=lambda: dict[int, tuple[str, str]]()
    )
    fallback: str | None = None
    seconds: float = 0.0
    parts: list[PieceOutcome] = field(default_factory=lambda: list[PieceOutcome]())
    """Each piece's outcome, when the batch ran them one at a time."""
    history: HistoryRecords | None = None
    """What the IR history recorded while the batch ran (`IRHistory.merge`),
    when the run records one."""


class BatchRunner:
    """Runs batches of pieces in this process with `pm`, a pass manager whose
    pipeline is nested pipelines only (the run's first pass,
    `passflow.sliced.run.nested_head`)."""

    def __init__(
        self,
        pm: PassManager,
        shell: PieceText,
        name: str,
        *,
        generic: bool,
    ) -> None:
        self.pm = pm
        self.name = name
        self.generic = generic
        self.aliases: dict[str, Attribute] = {}
        self.module = ir.parse_module(
            shell.text,
            pm.context,
            name,
            first_line=shell.first_line,
            aliases=self.aliases,
        )
        if ir.direct_children(self.module):
            raise ValueError("an op shares a line with an alias definition")
        empty = ir.print_op(self.module, generic=generic)
        if not empty.endswith("\n}"):
            raise ValueError(f"the empty module prints as {empty!r}")
        self.prefix = empty[:-1]
        self.events: list[Diagnostic] = []
        pm.add_diagnostic_handler(self._collect)
        self.keep_ops = False
        """Send the ops back rather than their text (passes follow in the parent)."""
        self.ship = False
        """This runner's results go to another process: encode kept ops."""
        self._references: dict[int, list[Operation]] = {}
        self.history: IRHistory | None = pm.ir_history
        """The run's IR history: each batch (each piece, when they run one at
        a time) records apart and sends its records back with its result."""

    def close(self) -> None:
        """Stop collecting the pass manager's diagnostics (it may run on)."""
        handlers = self.pm.diagnostics.handlers
        if self._collect in handlers:
            handlers.remove(self._collect)

    def _collect(self, diagnostic: Diagnostic) -> None:
        self.events.append(diagnostic)

    def _parse(self, piece: PieceText) -> list[Operation]:
        parsed = ir.parse_module(
            piece.text,
            self.pm.context,
            self.name,
            first_line=piece.first_line,
            aliases=dict(self.aliases),
        )
        if not ir.is_implicit_module(parsed):
            return [parsed]
        ops = ir.direct_children(parsed)
        for op in ops:
            op.detach()
        return ops

    def _parse_each(
        self, own: Sequence[tuple[int, PieceText]]
    ) -> list[tuple[int, list[Operation]]]:
        """Each piece's ops, a run of pieces parsed as one text (one parser is
        faster than one per piece) and its ops told apart by where they were
        parsed; a run whose ops do not all say where (a `loc(...)` written in
        the text) is parsed piece by piece."""
        found: list[tuple[int, list[Operation]]] = []
        for first, piece in own:
            if len(piece.starts) < 2:
                found.append((first, self._parse(piece)))
                continue
            groups: list[list[Operation]] = [[] for _ in piece.starts]
            for op in self._parse(piece):
                position = ir.parse_position(op)
                if position is None:
                    groups = [self._parse(one) for one in piece.split()]
                    break
                groups[bisect.bisect_right(piece.starts, position[1]) - 1].append(op)
            found += [(first + k, ops) for k, ops in enumerate(groups)]
        return found

    def _reference(self, index: int, piece: PieceText) -> list[Operation]:
        found = self._references.get(index)
        if found is None:
            found = self._references[index] = self._parse(piece)
        return found

    def run(
        self,
        batch: int,
        own: Sequence[tuple[int, PieceText]],
        references: Sequence[tuple[int, PieceText]],
        watched: frozenset[int],
        *,
        separately: bool = False,
    ) -> BatchResult:
        """Parse, verify, run and print the pieces `own` (texts of one or
        more pieces, each with its first piece's index), with `references`
        beside them; report the header of each own piece in `watched`.
        `separately`: run and print each piece on its own (one piece per
        text), its outcome in `parts`."""
        start = time.perf_counter()
        result = BatchResult(batch)
        block = self.module.body.block
        placed: list[Operation] = []
        collecting = gc.isenabled()
        gc.disable()  # as passflow-opt runs; the batch collects once, at its end
        try:
            if separately:
                # A history is recorded piece by piece: the pieces run alone.
                marked = (
                    None
                    if self.history is not None
                    else self._run_marked(result, own, references, watched, placed)
                )
                if marked is None:  # an event no op can claim: one piece at a time
                    self._clear(placed)
                    result = BatchResult(batch)
                    marked = self._run_each(result, own, references, watched, placed)
                result = marked
            else:
                owned = [(index, self._parse(piece)) for index, piece in own]
                result = self._run(result, owned, references, watched, placed)
        except IRParseError as err:
            result.fallback = f"parse error: {err.diagnostic.message}"
        except Exception as err:  # outside the passes: the whole file will tell
            result.fallback = f"{type(err).__name__}: {err}"
        finally:
            for op in list(block.ops):
                op.detach()
            self.events = []
            placed.clear()
            # The batch's IR is a web of cycles: without a collection it would
            # outlive the batch (passflow-opt runs with the collector off), and
            # so would its parse positions. Only objects made since the run
            # began are scanned (`run_sliced` freezes the rest), and what
            # survives is frozen too: dialects and passes loaded on first use
            # during the run are not scanned again by every later batch.
            gc.collect()
            gc.freeze()
            if collecting:
                gc.enable()
        result.seconds = time.perf_counter() - start
        return result

    def _run(
        self,
        result: BatchResult,
        owned: Sequence[tuple[int, list[Operation]]],
        references: Sequence[tuple[int, PieceText]],
        watched: frozenset[int],
        placed: list[Operation],
        *,
        print_ops: bool = True,
    ) -> BatchResult:
        block = self.module.body.block
        for _, ops in owned:
            for op in ops:
                block.add_op(op)
                placed.append(op)
        extra: list[Operation] = []
        for index, piece in references:
            for op in self._reference(index, piece):
                block.add_op(op)
                extra.append(op)
        if not all(_prints_alone(op) for op in placed):
            result.fallback = "a top-level op names values in the module's scope"
            return result
        for op in placed:
            problem = verifier.verify(op)
            if problem is not None:
                result.fallback = f"verifier: {problem.message}"
                return result
        before = {index: _header(ops) for index, ops in owned if index in watched}
        result.initial_symbols = _symbols(placed)
        self.events = result.events
        history = self.history
        if history is not None:
            history.start_batch()
        with captured_output(result.events.append):
            try:
                self.pm.run(self.module, reference_only=extra)
            except PassPipelineError:
                result.failed = True
        if history is not None:
            result.history = history.take_batch(
                labelled_units([op for _, ops in owned for op in ops])
            )
        for index, ops in owned:
            if index in watched:
                result.headers[index] = (before[index], _header(ops))
        result.symbols = _symbols(placed)
        if result.failed:
            return result
        for op in extra:
            op.detach()
        if not print_ops:
            return result
        if self.keep_ops:
            kept = [op for _, ops in owned for op in ops]
            if self.ship:
                encoder = Encoder([])
                result.encoded = encoder.dumps([encoder.op(op) for op in kept])
            else:
                result.ops = kept
            return result
        result.body = self._body()
        if result.body is None:
            result.fallback = _NOT_THE_SHELLS_FORM
        return result

    def _body(self) -> str | None:
        """The module's ops as printed inside it, or None if the module does
        not print in the shell's form."""
        printed = ir.print_op(self.module, generic=self.generic)
        if not printed.startswith(self.prefix) or not printed.endswith("\n}"):
            return None
        return printed[len(self.prefix) : -2]

    def _clear(self, placed: list[Operation]) -> None:
        for op in list(self.module.body.block.ops):
            op.detach()
        placed.clear()

    def _run_marked(
        self,
        result: BatchResult,
        own: Sequence[tuple[int, PieceText]],
        references: Sequence[tuple[int, PieceText]],
        watched: frozenset[int],
        placed: list[Operation],
    ) -> BatchResult | None:
        """The batch run as a whole, each piece's outcome told apart by where
        its ops' runs began and ended in the batch's events (`_ChildMarks`),
        each piece printed alone: what `_run_each` gives, at the cost of one
        run. None if an event happened outside every op's run (the module's
        verifier after the nested pipelines): the caller runs `_run_each`."""
        owned = self._parse_each(own)
        initial = {index: _symbols(ops) for index, ops in owned}
        marks = _ChildMarks(self.module, result.events)
        self.pm.executor = marks
        try:
            result = self._run(
                result, owned, references, watched, placed, print_ops=False
            )
        finally:
            self.pm.executor = None
        if result.fallback is not None:
            return result
        spans = marks.spans(len(result.events))
        if spans is None:
            return None
        self._clear(placed)
        block = self.module.body.block
        for index, ops in owned:
            events: list[Diagnostic] = []
            failed = False
            for op in ops:
                start, end, op_failed = spans.get(id(op), (0, 0, False))
                events += result.events[start:end]
                failed = failed or op_failed
            body: str | None = None
            if not failed:
                for op in ops:
                    block.add_op(op)
                body = self._body()
                for op in ops:
                    op.detach()
                if body is None:
                    result.fallback = _NOT_THE_SHELLS_FORM
                    return result
            result.parts.append(
                PieceOutcome(
                    index,
                    events,
                    failed,
                    body,
                    initial[index],
                    _symbols(ops),
                    result.headers.get(index),
                )
            )
        if not result.failed:
            result.body = "\n".join(part.body or "" for part in result.parts)
        return result

    def _run_each(
        self,
        result: BatchResult,
        own: Sequence[tuple[int, PieceText]],
        references: Sequence[tuple[int, PieceText]],
        watched: frozenset[int],
        placed: list[Operation],
    ) -> BatchResult:
        """Each piece of `own` parsed, verified, run and printed alone (with
        the pieces it references), as a batch of one: its outcome in `parts`,
        the batch's in `result` (their sum)."""
        for index, ops in self._parse_each(own):
            beside = [(i, text) for i, text in references if i != index]
            part = self._run(
                BatchResult(result.batch), [(index, ops)], beside, watched, placed
            )
            block = self.module.body.block
            for op in list(block.ops):
                op.detach()
            placed.clear()
            if part.fallback is not None:
                result.fallback = part.fallback
                return result
            result.parts.append(
                PieceOutcome(
                    index,
                    part.events,
                    part.failed,
                    part.body,
                    part.initial_symbols,
                    part.symbols,
                    part.headers.get(index),
                    part.history,
                )
            )
            result.events += part.events
            result.failed = result.failed or part.failed
            result.initial_symbols += part.initial_symbols
            result.symbols += part.symbols
            result.headers.update(part.headers)
        bodies = [part.body for part in result.parts]
        if not result.failed:
            result.body = "\n".join(body or "" for body in bodies)
        return result


class _ChildMarks(ChildExecutor):
    """Runs every adaptor's children serially, as the serial executor does,
    and notes for each child of `top` where its run's events begin and end
    in `events` and whether it failed."""

    name = "serial"

    def __init__(self, top: Operation, events: list[Diagnostic]) -> None:
        self.top = top
        self.events = events
        self.marks: dict[int, tuple[int, int, bool]] = {}

    @property
    def threading_disabled(self) -> bool:
        return True

    def run(self, work: ChildWork) -> bool:
        if work.op is not self.top:
            return work.run_serially()
        ok = True
        for position, (_, child) in enumerate(work.items):
            start = len(self.events)
            child_ok = work.run_item(position)
            self.marks[id(child)] = (start, len(self.events), not child_ok)
            ok = ok and child_ok
        return ok

    def spans(self, count: int) -> dict[int, tuple[int, int, bool]] | None:
        """The marks, if they cover all `count` events; else None."""
        covered = sum(end - start for start, end, _ in self.marks.values())
        return self.marks if covered == count else None


def _prints_alone(op: Operation) -> bool:
    """Whether `op` prints the same whatever ops precede it in the module: it
    has no results and names its values in a scope of its own (isolated from
    above) or has none (no blocks). xDSL's printer numbers and de-duplicates
    the names of a scope across its ops."""
    if op.results:
        return False
    return bool(op.get_traits_of_type(IsolatedFromAbove)) or all(
        not region.blocks for region in op.regions
    )


def _symbols(ops: list[Operation]) -> list[str]:
    """The symbol names the module's verifier checks for duplicates."""
    names: list[str] = []
    for op in ops:
        name = op.get_attr_or_prop("sym_name")
        if isinstance(name, StringAttr):
            names.append(name.data)
    return names


def _header(ops: list[Operation]) -> str:
    return "\n".join(ir.print_op_without_regions(op) for op in ops)
