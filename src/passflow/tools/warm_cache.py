"""passflow-opt's warm path: a run that the result cache holds in full is
printed from it before the IR, the pass manager or any pass loads.

The keys are `passflow.cache.keys.run_keys`'s for `OWN_PIPELINE`, from the
scan of the text, the flags and the source of passflow and xDSL alone: the
keys a full run computes for a pipeline of passflow's own passes named on the
command line (`passflow.cache.code`). When every piece of every chunk, and each
chunk's printed shell, is in the cache, the stored results are stitched
(`passflow.sliced.outcome.stitch`, the full run's own checks) and printed as
the full run prints them. A pipeline keyed otherwise (a plugin's pass, an
xDSL pass, a registered pipeline) simply misses here.

Whatever this path cannot answer exactly as the full run would leaves it
having printed nothing, and the run goes on as usual (with what this path
read: the open cache, its keys and entries, and the scan of each chunk,
`Invocation.scanned`): a miss or a damaged
entry, a chunk the scan cannot cut or whose pieces do not stitch, an input
that is not a regular file (standard input, a pipe: read here, it would be
gone for the run), `--verify-diagnostics`, flags that observe the run or that could fail
outside the key (a local reproducer, an executor other than the process,
thread or serial one, a Dask scheduler).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TypeAlias

from passflow.cache.keys import RunKeys, known_run_keys, run_keys
from passflow.cache.placement import place
from passflow.cache.sources import OWN_PIPELINE
from passflow.cache.store import ResultCache
from passflow.diagnostics import PassflowError
from passflow.sliced.outcome import Fallback, SlicedOutcome, stitch
from passflow.sliced.scan import scan_text
from passflow.source_diagnostics import SourceDiagnosticPrinter
from passflow.tools.cache_options import (
    cache_salt,
    input_key,
    open_cache,
    remote_notes,
)
from passflow.tools.invocation import (
    PROG,
    Invocation,
    read_input,
    split_chunks,
    write_chunks,
)
from passflow.tools.pass_manager_options import PassManagerOptions
from passflow.tools.sliced_options import replay_events, sliced_flags

__all__ = ["Answer", "look_up", "print_answer", "replay_from_cache"]

_LOCAL_EXECUTORS = (None, "serial", "thread", "process")
"""Executors whose making cannot fail on flags the key leaves out."""


def replay_from_cache(inv: Invocation) -> int | None:
    """The exit status of a run the cache holds in full, having printed what
    the full run prints; None, with nothing printed, for any other run."""
    args = inv.args
    if not _answerable(args):
        return None
    cache = open_cache(args, quiet=True)
    if cache is None:
        return None
    try:
        text, name = read_input(args.input)
    except OSError:
        _hand_over(inv, cache)
        return None
    try:
        key = input_key(name, cache_salt(inv), text)
        look = _LookUp(inv, text, name, key, likely_warm=cache.answered(key))
        if not look.likely_warm:
            # Loaded for a run that will likely miss: the lookup beside it.
            from passflow.tools.warm_fork import look_up_beside_the_run

            forked = look_up_beside_the_run(inv, cache, look.in_child)
            if forked is not None and forked.status is not None:
                cache.close()
                return forked.status
            if forked is not None:
                _hand_over(inv, cache)
                inv.read = text, name
                return None
        answer = look(cache)
    except BaseException:
        cache.close()
        raise
    if answer is None:
        _hand_over(inv, cache)
        inv.read = text, name
        return None
    return print_answer(inv, cache, answer)


class _LookUp:
    """`look_up` of the run of `text`, remembering its `key` as answered
    (`ResultCache.remember_answered`) when it finds the run in full, unless
    the store knew it already (`likely_warm`)."""

    def __init__(
        self, inv: Invocation, text: str, name: str, key: str, *, likely_warm: bool
    ) -> None:
        self.inv, self.text, self.name = inv, text, name
        self.key, self.likely_warm = key, likely_warm

    def __call__(self, cache: ResultCache) -> Answer | None:
        answer = look_up(self.inv, cache, self.text, self.name)
        if answer is not None and not self.likely_warm:
            cache.remember_answered(self.key)
        return answer

    def in_child(self, cache: ResultCache, announce: Callable[[], None]) -> int | None:
        """The lookup as `look_up_beside_the_run`'s child runs it: the exit
        status of a run it answered (announced before it prints), or None."""
        answer = self(cache)
        if answer is None:
            return None
        announce()
        return print_answer(self.inv, cache, answer)


def print_answer(inv: Invocation, cache: ResultCache, answer: Answer) -> int:
    """Print a run `look_up` answered, as the full run prints it, and close
    `cache`: the exit status."""
    text, name, outcomes = answer
    cache.close()
    printer = SourceDiagnosticPrinter(sys.stderr, name, text)
    outputs: list[str] = []
    for outcome in outcomes:
        replay_events(outcome.events, printer)
        outputs.append("" if outcome.output is None else outcome.output + "\n")
    for warning in cache.warnings:
        sys.stderr.write(f"{PROG}: warning: {warning}\n")
    for note in remote_notes(cache):
        sys.stderr.write(f"{PROG}: note: {note}\n")
    return write_chunks(inv.args, outputs, not any(o.failed for o in outcomes))


def _hand_over(inv: Invocation, cache: ResultCache) -> None:
    """Leave `cache` open for the full run that follows a miss: what this
    path read and computed (the source digests, the keys, the sound
    entries) is not read or computed again. A cache whose quiet opening
    left out what the run must say (a remote tier without its key) is
    closed: the run opens its own, and says it."""
    if inv.args.cache_remote and cache.remote is None:
        cache.close()
    else:
        inv.cache = cache


def _answerable(args: argparse.Namespace) -> bool:
    """Whether the flags allow the warm path: a cached sliced run of a file
    whose only pass-manager flags are the verifier and a local executor."""
    if args.verify_diagnostics is not None or args.report or args.ir_history:
        return False
    if not os.path.isfile(args.input):
        return False  # stdin, a pipe: what this path reads, the run could not
    if args.cache_stats or args.cache_clear or not sliced_flags(args):
        return False
    try:
        options = PassManagerOptions.from_args(args)
    except PassflowError:
        return False
    plain = PassManagerOptions(
        verify_each=options.verify_each,
        disable_threading=options.disable_threading,
        executor_kind=options.executor_kind,
        jobs=options.jobs,
    )
    return (
        options == plain
        and options.executor_kind in _LOCAL_EXECUTORS
        and (options.jobs is None or options.jobs >= 1)
    )


Answer: TypeAlias = tuple[str, str, list[SlicedOutcome]]
"""A run the cache holds in full: the input's text and name, and each
chunk's outcome."""


def look_up(inv: Invocation, cache: ResultCache, text: str, name: str) -> Answer | None:
    """The answer to the run of `text` (the input, read from the file `name`),
    if the cache holds every piece and shell (then counted as hits); else
    None. A chunk whose keys the store kept is not scanned
    (`known_run_keys`); the others' scans go to `inv.scanned`; the keys and
    sound entries stay in `cache.memo()`."""
    salt = cache_salt(inv)
    chunks: list[RunKeys] = []
    for chunk, first_line in split_chunks(text, inv.args.split_input_file):
        run = known_run_keys(cache, OWN_PIPELINE, name, chunk, first_line, salt)
        if run is None:
            slices = scan_text(chunk, first_line)
            if isinstance(slices, str):
                return None
            inv.scanned[chunk, first_line] = slices
            run = run_keys(cache, OWN_PIPELINE, name, slices, salt)
        chunks.append(run)
    shells = [run.shell for run in chunks]
    prefixes = cache.peek_shells(shells)
    if prefixes is None:
        return None  # a run never stored (a cold one)
    keys = [key for run in chunks for key in run.pieces]
    pieces = cache.peek_entries(keys)
    if pieces is None:
        return None
    outcomes: list[SlicedOutcome] = []
    for run in chunks:
        placed = [
            place(pieces[key], line, anchor)
            for key, line, anchor in zip(
                run.pieces, run.lines, run.anchors, strict=True
            )
        ]
        hits = [piece for piece in placed if piece is not None]
        if len(hits) != len(placed):
            return None  # a result pinned where its piece no longer stands
        if any(hits[i].header is None for i in run.referenced):
            return None  # stored by a run that did not watch it
        headers = [piece.header for piece in hits if piece.header is not None]
        outcome = stitch(prefixes[run.shell], hits, headers)
        if isinstance(outcome, Fallback):
            return None
        if outcome.output is None and not outcome.failed:
            return None  # passes follow the nested ones: they run on the IR
        outcomes.append(outcome)
    cache.record_hits(keys, shells)
    return text, name, outcomes
