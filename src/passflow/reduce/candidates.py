"""Trying candidates: each in its own forked process, `jobs` at a time.

A candidate may crash the interpreter, hang, or leave a pass's global state
changed; a forked process isolates each from the reducer and from the others,
and is killed when it overruns the timeout (then it is not interesting) or is
no longer needed. A killed trial is over once its pipe closes: what it started
that holds the pipe (a test command's supervisor) has then exited too. The
forked process also makes its candidate: it edits its own copy of the current
IR in place, so the reducer neither copies, prints nor parses IR per candidate.
The answer is always the one a serial search gives: the first interesting
candidate in order, however many run at once.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from passflow.executors.lifetime import die_with_parent
from passflow.reduce.command import POLL
from passflow.reduce.interesting import NotInterestingError
from passflow.reduce.outcome import Candidate, CandidateMaker

__all__ = ["CandidateRunner", "Judge"]

Judge = Callable[[Candidate], bool]
"""Says whether a candidate is interesting; may raise `NotInterestingError`."""

_YES = b"1"
_NO = b"0"
_ERROR = b"E"
_LEFT_BEHIND_GRACE = 10.0
"""Seconds a killed trial's pipe may stay open (a bound: its test command's
supervisor closes it within milliseconds of the trial's death)."""


@dataclass
class _Trial:
    index: int
    pid: int
    reader: int
    started: float
    answer: bytes = b""


@dataclass
class CandidateRunner:
    """Runs `judge` on candidates; counts the tests it made.

    `jobs` is how many candidates run at once; `timeout` (seconds, None: no
    limit) bounds each; `isolate=False` runs them in this process, one at a
    time (where there is no `fork`, always)."""

    judge: Judge
    jobs: int = 1
    timeout: float | None = None
    isolate: bool = True
    tests: int = 0
    _running: dict[int, _Trial] = field(default_factory=lambda: dict[int, _Trial]())

    def first_interesting(
        self, candidates: Iterable[CandidateMaker | None]
    ) -> int | None:
        """The index of the first interesting candidate (None entries, and
        makers that give None, are edits that could not be made), or None if
        none is."""
        if not self.isolate or not hasattr(os, "fork"):
            return self._serially(candidates)
        try:
            return self._in_parallel(iter(enumerate(candidates)))
        finally:
            self._stop_all()

    def _serially(self, candidates: Iterable[CandidateMaker | None]) -> int | None:
        for index, maker in enumerate(candidates):
            candidate = None if maker is None else maker(False)
            if candidate is not None:
                self.tests += 1
                if self.judge(candidate):
                    return index
        return None

    def _in_parallel(
        self, pending: Iterator[tuple[int, CandidateMaker | None]]
    ) -> int | None:
        found: int | None = None
        exhausted = False
        while True:
            while not exhausted and found is None and len(self._running) < self.jobs:
                entry = next(pending, None)
                if entry is None:
                    exhausted = True
                elif entry[1] is not None:
                    self._start(entry[0], entry[1])
            earlier = [
                t for t in self._running.values() if found is None or t.index < found
            ]
            if not earlier:
                return found
            for trial in self._wait(earlier):
                del self._running[trial.index]
                if trial.answer.startswith(_ERROR):
                    raise NotInterestingError(trial.answer[1:].decode(errors="replace"))
                if trial.answer == _YES and (found is None or trial.index < found):
                    found = trial.index

    def _start(self, index: int, maker: CandidateMaker) -> None:
        self.tests += 1
        reader, writer = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child's side is measured by its answer
            os.close(reader)
            self._child(parent, writer, maker)
        os.close(writer)
        self._running[index] = _Trial(index, pid, reader, time.monotonic())

    def _child(self, parent: int, writer: int, maker: CandidateMaker) -> None:
        answer = _NO
        try:
            die_with_parent(parent)
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            quiet = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(quiet, fd)
            candidate = maker(True)
            answer = _YES if candidate is not None and self.judge(candidate) else _NO
        except NotInterestingError as err:
            answer = _ERROR + str(err).encode()
        except BaseException:
            answer = _NO
        finally:
            try:
                os.write(writer, answer)
            finally:
                os._exit(0)

    def _wait(self, trials: list[_Trial]) -> list[_Trial]:
        """The trials among `trials` that answered (or died, or overran)."""
        wait_for = POLL
        if self.timeout is not None:
            oldest = min(t.started for t in trials)
            wait_for = min(POLL, max(0.0, oldest + self.timeout - time.monotonic()))
        readable, _, _ = select.select([t.reader for t in trials], [], [], wait_for)
        done: list[_Trial] = []
        now = time.monotonic()
        for trial in trials:
            if trial.reader in readable:
                trial.answer = os.read(trial.reader, 1 << 16)
                self._reap(trial)
                done.append(trial)
            elif self.timeout is not None and now - trial.started >= self.timeout:
                self._reap(trial, kill=True)
                done.append(trial)
        return done

    @staticmethod
    def _reap(trial: _Trial, *, kill: bool = False) -> None:
        """Wait for `trial` to end; `kill`: kill it first, then wait until
        every process it left holding its pipe is gone too (a test command's
        supervisor, which exits once it has killed the command's group)."""
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(trial.pid, signal.SIGKILL)
            _wait_for_eof(trial.reader, _LEFT_BEHIND_GRACE)
        os.close(trial.reader)
        os.waitpid(trial.pid, 0)

    def _stop_all(self) -> None:
        for trial in self._running.values():
            with contextlib.suppress(ProcessLookupError):
                os.kill(trial.pid, signal.SIGKILL)
        for trial in self._running.values():
            self._reap(trial, kill=True)
        self._running.clear()


def _wait_for_eof(fd: int, seconds: float) -> None:
    """Read `fd` until its end of file, for at most `seconds`."""
    deadline = time.monotonic() + seconds
    while (left := deadline - time.monotonic()) > 0:
        readable, _, _ = select.select([fd], [], [], min(left, POLL))
        if readable and not os.read(fd, 1 << 16):
            return
