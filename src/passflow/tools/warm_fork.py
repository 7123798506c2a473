"""passflow-opt's warm path beside the full run's start-up: when the cache
will likely miss, the lookup runs in a forked process while this one loads
the full run.

A run the cache held in full with the same input text and flags
(`ResultCache.answered`) is looked up in the process, as before
(`warm_cache`). Any other (a file edited since, a cold cache) will likely
miss, and its full run would start
loading its modules (the IR, xDSL's dialects, the pass manager: most of an
edited run's time) only once the lookup found the miss. So the lookup forks:
the child scans, keys and reads the cache as the warm path does while this
process imports the full run's modules. A run the cache holds in full after
all is printed by the child, and this process ends with its status having
printed nothing; otherwise the child hands back what it computed (each
chunk's scan, the keys, the sound entries: `LookupMemo`) and the run goes on
here, computing and reading none of it again. Either way the output is what
the warm path or the full run prints: the guess only decides where the
lookup runs.

The child is one more process: it is a worker of the run's budget
(`passflow.executors.budget.lease_workers`: `--jobs`, the CPUs the process
may use, a make jobserver's token; it only does, earlier, work the run does
anyway, so it is made on a busy machine too), and never made for one job, a serial or thread
executor, a remote tier (its connection stays in one process), standard
streams that are not the process's files (a program that captures
passflow-opt's output in Python), or in a process that has loaded the IR
already (a server's run), where the full run has nothing left to load.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from passflow.cache.store import LookupMemo, ResultCache
from passflow.diagnostics import PassflowError
from passflow.executors.budget import WorkerLease, default_jobs, lease_workers
from passflow.sliced.scan import SourceSlices
from passflow.tools.cache_options import open_cache
from passflow.tools.invocation import PROG, Invocation
from passflow.tools.pass_manager_options import PassManagerOptions

__all__ = ["ChildLookUp", "Forked", "look_up_beside_the_run"]

_ANSWERED = b"A"
_HANDED = b"H"

_THE_RUN = (
    "xdsl.ir",
    "xdsl.irdl",
    "xdsl.dialects.builtin",
    "xdsl.parser",
    "xdsl.printer",
    "passflow.ir",
    "passflow.pass_manager",
    "passflow.all_passes",
    "passflow.tools.opt_run",
    "passflow.sliced.batch",
    "passflow.sliced.run",
    "passflow.sliced.shipped",
)
"""What the full run of a sliced pipeline imports besides what the warm path
has, in steps of at most some tens of milliseconds: `_load_the_run` imports
them while the child looks the run up."""

ChildLookUp = Callable[[ResultCache, Callable[[], None]], int | None]
"""The lookup the child runs with its own store: for a run it answers, it
calls the second argument (the parent then waits for it) before printing,
and returns the exit status; None for a miss, having printed nothing."""


@dataclass(frozen=True)
class Forked:
    """The run was looked up in a child: it answered the run (it printed what
    the run prints) with exit `status`, or, None, the run goes on here."""

    status: int | None


def look_up_beside_the_run(
    inv: Invocation, cache: ResultCache, look_up: ChildLookUp
) -> Forked | None:
    """For a run that will likely miss (the caller's guess), when a worker is
    free: `look_up` run in a forked child with its own store while this
    process loads the full run: the child's exit status if it answered the
    run, else `Forked(None)` with what it computed in `cache` and
    `inv.scanned` (or nothing, if it failed). None, having done nothing, when
    the run is not forked: the caller looks it up itself."""
    lease = _worker_for(inv)
    if lease is None:
        return None
    with lease:
        return _forked(inv, cache, look_up)


def _worker_for(inv: Invocation) -> WorkerLease | None:
    """A lease of the one worker the lookup runs in, if the run's modules
    are still to load and its flags allow a second process; else None."""
    args = inv.args
    if "passflow.ir" in sys.modules or args.cache_remote:
        return None
    if not hasattr(os, "fork") or not hasattr(os, "memfd_create"):
        return None
    try:  # the child prints to the process's own files, not to a stand-in
        sys.stdout.fileno()
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        return None
    try:
        options = PassManagerOptions.from_args(args)
    except PassflowError:
        return None
    if options.disable_threading or options.executor_kind not in (None, "process"):
        return None
    jobs = default_jobs() if options.jobs is None else options.jobs
    if jobs < 2:
        return None
    # Not adaptive: the child only does, earlier, the lookup the run does
    # anyway, so a busy machine costs it no more than a fork.
    lease = lease_workers(jobs - 1)
    if lease.grow():
        return lease
    lease.close()
    return None


def _forked(inv: Invocation, cache: ResultCache, look_up: ChildLookUp) -> Forked | None:
    sys.stdout.flush()
    sys.stderr.flush()
    memo = os.memfd_create("passflow-lookup")
    ready, said = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        for fd in (memo, ready, said):
            os.close(fd)
        return None  # no second process: looked up here
    if pid == 0:
        os.close(ready)
        _child(inv, look_up, memo, said)
    os.close(said)
    try:
        word = _load_the_run(ready)
        if word == _ANSWERED:
            status = _status_of(pid)
            pid = 0
            return Forked(status)
        if word == _HANDED:
            _take(inv, cache, memo)
    except BaseException:  # Ctrl-C, a failure here: the child must not print
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        raise
    finally:
        if pid:
            _status_of(pid)
        os.close(ready)
        os.close(memo)
    return Forked(None)


def _child(inv: Invocation, look_up: ChildLookUp, memo: int, said: int) -> NoReturn:
    """The child's life: look the run up; print it and say so first if it
    answers, else hand back what it computed. Ends the process. Until it
    says it answers, a failure is silent: the parent runs the run whole."""
    status = 1
    child = _Child(said)
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C: the parent says so
        cache = open_cache(inv.args, quiet=True)
        if cache is not None:
            status = child.look_up(inv, cache, look_up, memo)
    except BrokenPipeError:  # `passflow-opt ... | head`: the reader left
        with contextlib.suppress(OSError):
            sys.stderr.close()
    except PassflowError as err:
        if child.answered:
            sys.stderr.write(f"{PROG}: {err}\n")
    except BaseException:  # a crash while printing: shown as the run shows it
        if child.answered:
            import traceback

            traceback.print_exc()
    finally:
        with contextlib.suppress(BaseException):
            sys.stdout.flush()
            sys.stderr.flush()
        os._exit(status)


class _Child:
    """The child's side of the pipe to the parent (`said`)."""

    def __init__(self, said: int) -> None:
        self.said = said
        self.answered = False

    def announce(self) -> None:
        """Tell the parent this process answers the run (before printing)."""
        os.write(self.said, _ANSWERED)
        self.answered = True

    def look_up(
        self, inv: Invocation, cache: ResultCache, look_up: ChildLookUp, memo: int
    ) -> int:
        """The exit status of the run `look_up` answered, or 0 having handed
        back (in the file `memo`) what it computed for a miss."""
        status = look_up(cache, self.announce)
        if status is not None:
            return status
        import pickle  # a miss only: the child hands its work back

        data = pickle.dumps(
            (inv.scanned, cache.memo()), protocol=pickle.HIGHEST_PROTOCOL
        )
        view = memoryview(data)
        while view:
            view = view[os.write(memo, view) :]
        cache.close()
        os.write(self.said, _HANDED)
        return 0


def _take(inv: Invocation, cache: ResultCache, memo: int) -> None:
    """Adopt what the child computed: each chunk's scan and `LookupMemo`."""
    size = os.lseek(memo, 0, os.SEEK_END)
    with open(memo, "rb", closefd=False) as stream:
        stream.seek(0)
        data = stream.read(size)
    import pickle  # loaded by the full run anyway

    scanned, computed = pickle.loads(data)
    found: dict[tuple[str, int], SourceSlices] = scanned
    lookups: LookupMemo = computed
    inv.scanned.update(found)
    cache.adopt(lookups)


def _status_of(pid: int) -> int:
    """The exit status of the child `pid`, waited for (a signal that ended
    it as the shell shows it, 128 + its number)."""
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return 1
    code = os.waitstatus_to_exitcode(status)
    return 128 - code if code < 0 else code


def _load_the_run(ready: int) -> bytes:
    """Import what the full run imports, one module at a time, until the
    child says what it found on the pipe `ready`: that word (empty if the
    child ended without one). A module that fails to load fails again where
    the run imports it; a child that answered stops the loading."""
    os.set_blocking(ready, False)
    for module in _THE_RUN:
        try:
            return os.read(ready, 1)
        except BlockingIOError:
            pass
        with contextlib.suppress(Exception):
            importlib.import_module(module)
    os.set_blocking(ready, True)
    return os.read(ready, 1)
