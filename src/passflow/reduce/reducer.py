"""The reduction: the pipeline, then the IR, while the failure stays.

Top-level ops go first, by delta debugging (one culprit function among a
thousand costs about twenty tests), because every later candidate then runs on
only what the failure needs. The pipeline follows: passes dropped by delta
debugging, then options reset to their defaults one pass at a time; every pass
it loses is one no IR candidate has to run. Last, each op, last first, is erased
or simplified by the first `OP_EDITS` move that keeps the failure, until a
sweep changes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from passflow import ir
from passflow.diagnostics import IRParseError, PassflowError
from passflow.pipeline_text import parse_pass_pipeline
from passflow.reduce.candidates import CandidateRunner
from passflow.reduce.delta import minimize
from passflow.reduce.interesting import Interestingness, NotInterestingError
from passflow.reduce.ir_edits import (
    OP_EDITS,
    IRCandidate,
    OpEdit,
    count_ops,
    keep_top_level,
    top_level_ops,
)
from passflow.reduce.outcome import Candidate, CandidateMaker
from passflow.reduce.pipeline_tree import (
    Nest,
    count_passes,
    keep_passes,
    passes,
    reset_options,
    tree_of,
)

__all__ = ["Reducer", "Reduction", "Size", "parse_input"]


@dataclass(frozen=True)
class Size:
    """How big a candidate is, in the units the report counts."""

    passes: int
    top_level_ops: int
    ops: int | None
    """None while unknown (not counted during the top-level phase)."""

    def __str__(self) -> str:
        return ", ".join(
            f"{count} {unit if count == 1 else unit + suffix}"
            for count, unit, suffix in (
                (self.passes, "pass", "es"),
                (self.top_level_ops, "top-level op", "s"),
                (self.ops, "op", "s"),
            )
            if count is not None
        )


@dataclass
class Reduction:
    """What a reduction found: the reduced candidate and what it cost."""

    candidate: Candidate
    original: Size
    reduced: Size
    removed_passes: list[str]
    reset_options: list[str]
    tests: int
    seconds: float


def parse_input(
    text: str, source_name: str, *, allow_unregistered: bool = False
) -> IRCandidate:
    """The input, parsed (its reproducer resource, if any, left out of the
    metadata the reduced file carries); raises `PassflowError` with the
    located message if it does not parse."""
    ctx = ir.default_context(allow_unregistered=allow_unregistered)
    try:
        top = ir.parse_module(text, ctx, source_name)
    except IRParseError as err:
        raise PassflowError(str(err)) from err
    metadata = "" if ir.external_resources(top) else ir.file_metadata(top)
    return IRCandidate(top, metadata)


@dataclass
class Reducer:
    """Shrinks a candidate while `test` holds.

    `jobs` candidates are tried at once (each in a forked process), each for at
    most `timeout` seconds; `on_progress` hears the size after every step kept.
    """

    test: Interestingness
    jobs: int = 1
    timeout: float | None = None
    reduce_pipeline: bool = True
    reduce_ir: bool = True
    on_progress: Callable[[str, Size], None] | None = None
    _runner: CandidateRunner = field(init=False)

    def __post_init__(self) -> None:
        self._runner = CandidateRunner(self.test, self.jobs, self.timeout)

    @property
    def tests(self) -> int:
        return self._runner.tests

    def reduce(
        self,
        current: IRCandidate,
        pipeline: str,
        source_name: str = "<reduce>",
        *,
        checked: bool = False,
    ) -> Reduction:
        """The reduced candidate; raises `NotInterestingError` when the input
        itself does not show the failure (or stops showing it once printed).
        `checked`: the caller has seen the input fail the test (as
        `default_test` does), so it is not run again."""
        started = time.monotonic()
        if not checked and not self._interesting(self._as_is(current, pipeline)):
            raise NotInterestingError(
                f"the input does not show the failure: no {self.test.description}"
            )
        tree = tree_of(parse_pass_pipeline(pipeline))
        original = self._size(tree, current)
        names = [p.argument for p in passes(tree)]
        removed: list[str] = []
        reset: list[str] = []
        if self.reduce_ir:
            current = self._reduce_top_level(tree, current)
        if self.reduce_pipeline:
            tree, removed, reset = self._reduce_pipeline(tree, current, names)
        if self.reduce_ir:
            current = self._reduce_ops(tree, current)
        text = current.text()
        reduced = Candidate(text or "", str(tree), source_name)
        if text is None or not self._interesting(lambda _: reduced):
            raise NotInterestingError(
                "the reduced IR no longer shows the failure once printed; "
                "rerun with --skip-ir to reduce only the pipeline"
            )
        return Reduction(
            reduced,
            original,
            self._size(tree, current),
            removed,
            reset,
            self.tests,
            time.monotonic() - started,
        )

    # --- the pipeline ---------------------------------------------------------

    def _reduce_pipeline(
        self, tree: Nest, current: IRCandidate, names: list[str]
    ) -> tuple[Nest, list[str], list[str]]:
        def attempt(keep: frozenset[int]) -> CandidateMaker:
            return self._as_is(current, str(keep_passes(tree, keep.__contains__)))

        def progress(kept: list[int]) -> None:
            self._report("pipeline", keep_passes(tree, set(kept).__contains__), current)

        kept = set(minimize(range(len(names)), attempt, self._runner, progress))
        removed = [name for i, name in enumerate(names) if i not in kept]
        tree = keep_passes(tree, kept.__contains__)
        reset: list[str] = []
        position = 0
        while position < count_passes(tree):
            simpler = reset_options(tree, position)
            if simpler is not None and self._interesting(
                self._as_is(current, str(simpler))
            ):
                reset.append(str(list(passes(tree))[position]))
                tree = simpler
            position += 1
        return tree, removed, reset

    # --- the IR -----------------------------------------------------------------

    def _reduce_top_level(self, tree: Nest, current: IRCandidate) -> IRCandidate:
        count = len(top_level_ops(current.top))
        pipeline = str(tree)

        def attempt(keep: frozenset[int]) -> CandidateMaker:
            def make(in_place: bool) -> Candidate | None:
                edited = keep_top_level(current, keep.__contains__, in_place=in_place)
                return None if edited is None else Candidate(edited.top, pipeline)

            return make

        def progress(kept: list[int]) -> None:
            if self.on_progress is not None:
                self.on_progress(
                    "top-level ops", Size(count_passes(tree), len(kept), None)
                )

        kept = set(minimize(range(count), attempt, self._runner, progress))
        reduced = keep_top_level(current, kept.__contains__)
        return current if reduced is None else reduced

    def _reduce_ops(self, tree: Nest, current: IRCandidate) -> IRCandidate:
        pipeline = str(tree)
        changed = True
        while changed:
            changed = False
            position = count_ops(current.top)
            while position >= 1:
                found = self._runner.first_interesting(
                    self._op_edit(current, position, edit, pipeline)
                    for edit in OP_EDITS
                )
                if found is not None:
                    edited = OP_EDITS[found].on(current, position)
                    assert edited is not None  # it was made in the trial
                    current = edited
                    changed = True
                    self._report("ops", tree, current)
                position = min(position - 1, count_ops(current.top))
        return current

    @staticmethod
    def _op_edit(
        current: IRCandidate, position: int, edit: OpEdit, pipeline: str
    ) -> CandidateMaker:
        """Makes the candidate of `edit` at `position`. An edit that does not
        make the text shorter (a constant replaced by a zero) is no candidate:
        only a shorter text is progress, so every sweep ends."""

        def make(in_place: bool) -> Candidate | None:
            size = len(current.text() or "")
            edited = edit.on(current, position, in_place=in_place)
            text = None if edited is None else edited.text()
            if edited is None or text is None or len(text) >= size:
                return None
            return Candidate(edited.top, pipeline)

        return make

    # --- helpers --------------------------------------------------------------

    @staticmethod
    def _as_is(current: IRCandidate, pipeline: str) -> CandidateMaker:
        """Makes the candidate of `current` itself with `pipeline`."""

        def make(in_place: bool) -> Candidate:
            top = current.top if in_place else ir.clone(current.top)
            return Candidate(top, pipeline)

        return make

    def _interesting(self, maker: CandidateMaker) -> bool:
        return self._runner.first_interesting([maker]) is not None

    @staticmethod
    def _size(tree: Nest, current: IRCandidate) -> Size:
        return Size(
            count_passes(tree), len(top_level_ops(current.top)), count_ops(current.top)
        )

    def _report(self, stage: str, tree: Nest, current: IRCandidate | None) -> None:
        if self.on_progress is not None and current is not None:
            self.on_progress(stage, self._size(tree, current))
