"""A sliced run from text to printed text, and the checks that make it equal
to a run of the whole file."""

from __future__ import annotations

import gc
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeGuard, cast

from passflow import verifier
from passflow.cache.code import pipeline_code
from passflow.cache.keys import RunKeys, run_keys
from passflow.cache.placement import place, stored
from passflow.cache.store import CachedPiece, ResultCache
from passflow.diagnostics import IRParseError, PassPipelineError
from passflow.execution import ChildExecutor
from passflow.executors.capture import captured_output
from passflow.executors.forking import DEFAULT_SERIAL_BUDGET, ProcessExecutor
from passflow.executors.transfer import Decoder, EncodedOp
from passflow.pass_manager import PassManager
from passflow.sliced.batch import BatchResult, BatchRunner
from passflow.sliced.local import run_local
from passflow.sliced.outcome import Fallback, PieceResult, SlicedOutcome, stitch
from passflow.sliced.plan import RemoteRun, SlicePlan, why_not_sliced
from passflow.sliced.profile import SlicedProfile
from passflow.sliced.scan import SourceSlices, scan_text

if TYPE_CHECKING:  # the history loads for a run that records it (`--ir-history`)
    from passflow.executors.shipping import ShippingExecutor
    from passflow.instruments.ir_history import HistoryRecords

__all__ = [
    "Fallback",
    "SlicedOutcome",
    "SlicedProfile",
    "assemble",
    "run_sliced",
    "run_sliced_on",
    "sliced_jobs_of",
]


def _ships(executor: ChildExecutor | None) -> TypeGuard[ShippingExecutor]:
    """Whether `executor` ships work elsewhere (Dask): an executor of
    `passflow.executors.shipping`, which is loaded before one is made (and
    not for a run without one)."""
    if "passflow.executors.shipping" not in sys.modules:
        return False
    from passflow.executors.shipping import ShippingExecutor

    return isinstance(executor, ShippingExecutor)


def sliced_jobs_of(executor: ChildExecutor | None) -> int | None:
    """How many jobs a sliced run on `executor` has, or None if it runs
    nested pipelines in this process only: a process executor of two jobs or
    more, or any executor that ships work elsewhere (Dask: two at least, the
    parent waits)."""
    if _ships(executor):
        return max(2, executor.jobs)
    if isinstance(executor, ProcessExecutor) and executor.jobs > 1:
        return executor.jobs
    return None


def run_sliced_on(
    executor: ChildExecutor | None,
    text: str,
    name: str,
    pm: PassManager,
    *,
    first_line: int = 1,
    generic: bool = False,
    allow_unregistered: bool = False,
    cache: ResultCache | None = None,
    cache_salt: str = "",
    salt_names_pipeline: bool = False,
    scanned: SourceSlices | None = None,
) -> SlicedOutcome | Fallback:
    """`run_sliced` with the jobs and the place of the batches `executor`
    stands for: forked here by a process executor's pool (its jobs, serial
    budget and the make jobserver's tokens), as tasks of a shipping executor's pool (Dask; the cache is
    looked up here first, so only misses travel), or, with a `cache`, in this
    process alone for an executor that runs nested pipelines here. The
    batches run their nested pipelines serially, so the run's processes are
    the executor's jobs, whatever the path."""
    jobs = sliced_jobs_of(executor)
    if jobs is None:
        if cache is None:
            return Fallback("the executor runs nested pipelines in this process")
        jobs = 1
    remote: RemoteRun | None = None
    local: ProcessExecutor | None = None
    if _ships(executor):
        from passflow.sliced.shipped import shipped_runner  # with its executor

        remote = shipped_runner(
            executor.executor,
            jobs,
            allow_unregistered=allow_unregistered,
            context_factory=executor.context_factory,
        )
    elif isinstance(executor, ProcessExecutor) and executor.jobs > 1:
        local = executor
    return run_sliced(
        text,
        name,
        pm,
        first_line=first_line,
        jobs=jobs,
        generic=generic,
        local=local,
        remote=remote,
        cache=cache,
        cache_salt=cache_salt,
        salt_names_pipeline=salt_names_pipeline,
        scanned=scanned,
    )


def run_sliced(
    text: str,
    name: str,
    pm: PassManager,
    *,
    first_line: int = 1,
    jobs: int,
    generic: bool = False,
    serial_budget: float = DEFAULT_SERIAL_BUDGET,
    local: ProcessExecutor | None = None,
    remote: RemoteRun | None = None,
    cache: ResultCache | None = None,
    cache_salt: str = "",
    salt_names_pipeline: bool = False,
    scanned: SourceSlices | None = None,
) -> SlicedOutcome | Fallback:
    """Run `pm` on the module `text` holds, each top-level op parsed, verified,
    run by the pipeline's first pass (nested pipelines) and printed by one of
    `jobs` processes (this one and the workers of `local`'s pool, by default a
    `ProcessExecutor(jobs, serial_budget=...)`, or `remote`'s); a `Fallback`
    when the file must run whole instead.

    When passes follow the nested pipelines, the workers send their ops back
    in `passflow.executors.transfer`'s encoding instead of printing them, and
    the rest of the pipeline runs here on the module they make up. With a
    `cache` (and nested pipelines only), pieces whose key it holds are not
    run: their stored results are played back in order, and the pieces that
    ran are stored (`cache_salt`: what else the caller's output depends on;
    `salt_names_pipeline`: it holds the text `pm` was built from, so a
    pipeline of passflow's own passes is keyed without it,
    `passflow.cache.code`). `scanned`: the scan of `text` from `first_line`
    if the caller made it (passflow-opt's warm path), used when it is that."""
    if local is None and jobs > 1 and remote is None:
        local = ProcessExecutor(jobs, serial_budget=serial_budget)
    run = _SlicedRun(
        text,
        name,
        pm,
        first_line,
        jobs,
        generic,
        local,
        remote,
        cache,
        cache_salt,
        salt_names_pipeline,
        scanned,
    )
    gc.freeze()  # batches collect their garbage: only theirs is scanned
    try:
        return run.run()
    finally:
        gc.unfreeze()


@dataclass
class _SlicedRun:
    """One sliced run: what it was asked for, and where its time went."""

    text: str
    name: str
    pm: PassManager
    first_line: int
    jobs: int
    generic: bool
    local: ProcessExecutor | None
    remote: RemoteRun | None
    cache: ResultCache | None
    salt: str
    salt_names_pipeline: bool
    given: SourceSlices | None = None
    start: float = field(default_factory=time.perf_counter)
    scanned: float = 0.0

    def run(self) -> SlicedOutcome | Fallback:
        reason = why_not_sliced(self.pm)
        if reason is not None:
            return Fallback(reason)
        slices = self.given
        if (
            slices is None
            or slices.first_line != self.first_line
            or slices.text != self.text
        ):
            slices = scan_text(self.text, self.first_line)
        if isinstance(slices, str):
            return Fallback(f"the scan cannot vouch for a cut: {slices}")
        self.scanned = time.perf_counter()
        head = nested_head(self.pm)
        # The batches run their nested pipelines serially: the run's processes
        # are the slicer's jobs, never the executor's workers inside them.
        executor, head.executor = head.executor, None
        history = self.pm.ir_history
        if history is not None and head is not self.pm:
            head.enable_ir_history(history)
        runner: BatchRunner | None = None
        try:
            runner = BatchRunner(
                head, slices.shell_text, self.name, generic=self.generic
            )
            return self._run_plan(runner, slices)
        except (IRParseError, ValueError) as err:
            if runner is not None:
                raise
            return Fallback(f"the module's shell: {err}")
        finally:
            head.executor = executor
            if runner is not None:
                runner.close()

    def _run_plan(
        self, runner: BatchRunner, slices: SourceSlices
    ) -> SlicedOutcome | Fallback:
        pm, jobs, cache = self.pm, self.jobs, self.cache
        runner.keep_ops = runner.pm is not pm
        problem = verifier.verify(runner.module)
        if problem is not None:
            return Fallback(f"the module's shell does not verify: {problem.message}")
        plan = SlicePlan.of(slices, jobs)
        hits: dict[int, CachedPiece] = {}
        cached_history: dict[int, HistoryRecords] = {}
        history = pm.ir_history
        keys = self._keys(runner, slices)
        if cache is not None and keys is not None:
            found = cache.get_many(keys.pieces)
            unplaced = 0
            for index, key in enumerate(keys.pieces):
                piece = found.get(key)
                if piece is None:
                    continue
                placed = place(piece, keys.lines[index], keys.anchors[index])
                if placed is None:
                    unplaced += 1
                elif index not in plan.watched or placed.header:
                    if history is not None:  # a hit must say what its passes did
                        from passflow.instruments.ir_history import HistoryRecords

                        records = HistoryRecords.from_json(
                            piece.history, placed.line - piece.line
                        )
                        if records is None:
                            continue
                        cached_history[index] = records
                    hits[index] = placed
            cache.count_unplaced(unplaced)
            misses = [i for i in range(len(keys.pieces)) if i not in hits]
            plan = SlicePlan.of(slices, jobs, misses, separately=True)
        profile = SlicedProfile(
            pieces=len(slices.pieces),
            batches=len(plan.batches),
            scan=self.scanned - self.start,
        )
        if not plan.batches:
            results: list[BatchResult] = []
        elif self.remote is not None:
            results = self.remote(plan, runner)
        else:
            results = run_local(plan, runner, self.local, profile)
        if keys is not None:  # the cache was looked up
            outcome = _assemble_cached(runner.prefix, results, hits)
            if cache is not None and isinstance(outcome, SlicedOutcome):
                cache.put_many(_entries(results, keys, slices, self.name), keys.pieces)
                cache.put_shell(keys.shell, runner.prefix)
        else:
            outcome = assemble(runner.prefix, results)
        if history is not None and isinstance(outcome, SlicedOutcome):
            for records, origin in _history_in_order(results, cached_history):
                history.merge(records, str(pm), origin=origin)
        if (
            isinstance(outcome, SlicedOutcome)
            and runner.keep_ops
            and not outcome.failed
        ):
            outcome.module = runner.module
            _run_tail(pm, runner, results, outcome)
        elif history is not None and isinstance(outcome, SlicedOutcome):
            history.finish_sliced(str(pm))
        if isinstance(outcome, SlicedOutcome):
            profile.wall = time.perf_counter() - self.start
            profile.batch_seconds = sum(result.seconds for result in results)
            outcome.profile = profile
        return outcome

    def _keys(self, runner: BatchRunner, slices: SourceSlices) -> RunKeys | None:
        """The run's cache keys, or None when it runs uncached (no cache, or
        one that cannot hold this run: `--cache-stats` says why)."""
        cache = self.cache
        if cache is None:
            return None
        if runner.keep_ops:
            cache.bypassed.append(
                "passes follow the nested pipelines (docs/cache.md, "
                "'Module passes after the nest')"
            )
            return None
        code = pipeline_code(self.pm, named_by_salt=self.salt_names_pipeline)
        if isinstance(code, str):
            cache.bypassed.append(code)
            return None
        return run_keys(cache, code, self.name, slices, self.salt)


def nested_head(pm: PassManager) -> PassManager:
    """`pm` if its pipeline is its nested pipelines only; else a pass manager
    of its first pass (the nested pipelines), which the workers run."""
    if len(pm.passes) == 1:
        return pm
    head = PassManager(pm.anchor, pm.context, nesting=pm.nesting)
    head.extend(pm.passes[:1])
    head.enable_verifier(pm.verify_each)
    head.enable_emit_pass_error_on_failure(pm.emit_pass_error_on_failure)
    return head


def _run_tail(
    pm: PassManager,
    runner: BatchRunner,
    results: Sequence[BatchResult],
    outcome: SlicedOutcome,
) -> None:
    """Put the batches' ops in the module, in order, and run the rest of
    `pm`'s pipeline on it here (its diagnostics after the batches')."""
    block = runner.module.body.block
    for result in results:
        ops = result.ops
        if result.encoded is not None:
            decoder = Decoder(pm.context, [])
            encoded = cast(list[EncodedOp], decoder.loads(result.encoded))
            ops = [decoder.op(op) for op in encoded]
        for op in ops:
            block.add_op(op)
    first = pm.remove(0)
    collect = outcome.events.append
    pm.add_diagnostic_handler(collect)
    try:
        with captured_output(collect):
            pm.run(runner.module)
    except PassPipelineError:
        outcome.failed = True
        outcome.module = None
    finally:
        pm.insert(0, first)
        pm.diagnostics.handlers.remove(collect)


def _history_in_order(
    results: Sequence[BatchResult], hits: dict[int, HistoryRecords]
) -> list[tuple[HistoryRecords, str]]:
    """The IR history's records of the batches (or of their pieces, when
    they ran one at a time) and of the pieces the cache had, in program
    order, each with its origin (`run` or `cache`)."""
    units = [(index, records, "cache") for index, records in hits.items()]
    for result in results:
        if result.parts:
            units += [
                (part.index, part.history, "run")
                for part in result.parts
                if part.history is not None
            ]
        elif result.history is not None:
            units.append((result.batch, result.history, "run"))
    units.sort(key=lambda unit: unit[0])
    return [(records, origin) for _, records, origin in units]


def _assemble_cached(
    prefix: str, results: Sequence[BatchResult], hits: dict[int, CachedPiece]
) -> SlicedOutcome | Fallback:
    """`assemble` of the pieces that ran (their `parts`) and those the cache
    had, in program order."""
    for result in results:
        if result.fallback is not None:
            return Fallback(result.fallback)
    units: list[tuple[int, PieceResult, tuple[str, str] | None]] = [
        (part.index, part, part.header) for result in results for part in result.parts
    ]
    units += [(index, piece, piece.header) for index, piece in hits.items()]
    units.sort(key=lambda unit: unit[0])
    return stitch(
        prefix,
        [result for _, result, _ in units],
        [header for _, _, header in units if header is not None],
    )


def _entries(
    results: Sequence[BatchResult], keys: RunKeys, slices: SourceSlices, name: str
) -> dict[str, CachedPiece]:
    """The cache entries of the pieces that ran, those whose events are data,
    placed where they stand (`passflow.cache.placement`)."""
    entries: dict[str, CachedPiece] = {}
    for result in results:
        for part in result.parts:
            if CachedPiece.storable(part.events):
                index = part.index
                entries[keys.pieces[index]] = stored(
                    CachedPiece(
                        tuple(part.events),
                        part.failed,
                        part.body,
                        tuple(part.initial_symbols),
                        tuple(part.symbols),
                        part.header,
                        history=None
                        if part.history is None
                        else part.history.to_json(),
                    ),
                    name,
                    slices.piece_text(index).text,
                    keys.lines[index],
                    keys.anchors[index],
                )
    return entries


def assemble(prefix: str, results: Sequence[BatchResult]) -> SlicedOutcome | Fallback:
    """The run of the whole file the batches add up to (`stitch`), or a
    `Fallback` when a batch asked for one or they cannot stand for it."""
    for result in results:
        if result.fallback is not None:
            return Fallback(result.fallback)
    return stitch(
        prefix,
        results,
        [header for result in results for header in result.headers.values()],
    )
