"""How many processes a run may use: the one place that decides.

A run's processes share the machine with everything else on it, so their
number comes from three limits, the smallest winning:

* the CPUs this process may run on (`sched_getaffinity`: `taskset`, cpusets);
* the CPU quota of its cgroup (v2 `cpu.max`, v1 `cpu.cfs_quota_us` over
  `cpu.cfs_period_us`, in the process's own group and every group above it,
  rounded up): a container limited to 2 CPUs on a 64-core host gets 2;
* a GNU make jobserver, when `MAKEFLAGS` offers one (`--jobserver-auth=fifo:PATH`,
  make 4.4, or `--jobserver-auth=R,W`/`--jobserver-fds=R,W`, the pipe make 4.3
  hands to recipes marked `+`): the process itself runs on the token make gave
  it, and each extra worker takes one more token, only if one is free right now,
  and gives it back when it ends. With no free token, the run stays one process.
  A jobserver that `MAKEFLAGS` names but this process cannot reach (make closes
  the pipe for recipes not marked `+`) offers no token either: under `make -jN`
  passflow never adds processes make did not count.

`usable_cpus` gives the first two (the default for `--jobs`); `lease_workers`
gives the workers one parallel run may fork now, within `--jobs` and the
jobserver. Without `--jobs` a run also forks a worker only while the machine
has a CPU to spare at that moment (fewer runnable tasks than CPUs, the
instantaneous count of `/proc/loadavg`): two runs started together on two
cores, or a run on a loaded machine, stay one process each, and cost what
serial runs cost. It asks again as the run goes on, so a worker is added when
a CPU comes free. `--jobs N` is taken as asked (within the jobserver). Every pool of processes (`passflow.executors.pool`) takes its
workers from a `WorkerLease`.
"""

from __future__ import annotations

import contextlib
import math
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "CGROUP_ROOT",
    "FORK_PAYS",
    "LOOK_AGAIN",
    "ForkTimer",
    "Jobserver",
    "WorkerLease",
    "cgroup_cpu_limit",
    "default_jobs",
    "lease_workers",
    "machine_has_room",
    "reset_jobserver",
    "usable_cpus",
    "worker_available",
]

CGROUP_ROOT = Path("/sys/fs/cgroup")
"""Where the cgroup file systems are mounted (v2 unified, or one directory per
v1 controller)."""


def usable_cpus(
    cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = Path("/proc/self/cgroup")
) -> int:
    """The CPUs this process may keep busy: its affinity, capped by its
    cgroup's CPU quota (`cgroup_cpu_limit`). At least 1."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    limit = cgroup_cpu_limit(cgroup_root, proc_cgroup)
    if limit is not None:
        cpus = min(cpus, limit)
    return max(1, cpus)


def default_jobs() -> int:
    """The jobs a run has without `--jobs`: `usable_cpus()`."""
    return usable_cpus()


def cgroup_cpu_limit(
    cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = Path("/proc/self/cgroup")
) -> int | None:
    """The CPU quota of this process's cgroup and its ancestors, in whole CPUs
    (rounded up), or None when no group sets one or none can be read.

    `proc_cgroup` lists the process's groups (`/proc/self/cgroup`): the v2
    line `0::/path` names a directory under `cgroup_root` with `cpu.max`
    (`max 100000` or `200000 100000`); a v1 line `N:cpu,cpuacct:/path` a
    directory under the controller's mount with `cpu.cfs_quota_us` (-1: none)
    and `cpu.cfs_period_us`. Inside a container the group's path may not exist
    under the mount (the container sees its own group as the root), so the
    mount's top directory is read too."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    limits: list[float] = []
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, group = parts
        names = controllers.split(",")
        if controllers == "":
            limits += _quotas(cgroup_root, group, _v2_quota)
            limits += _quotas(cgroup_root / "unified", group, _v2_quota)
        elif "cpu" in names:
            for mount in (controllers, "cpu", "cpu,cpuacct", "cpuacct,cpu"):
                found = _quotas(cgroup_root / mount, group, _v1_quota)
                if found:
                    limits += found
                    break
    if not limits:
        return None
    return max(1, math.ceil(min(limits) - 1e-9))


def _quotas(
    mount: Path, group: str, read: Callable[[Path], float | None]
) -> list[float]:
    """The quotas set on `group` and its ancestors under `mount`."""
    found: list[float] = []
    directory = mount / group.strip("/")
    while True:
        quota = read(directory)
        if quota is not None:
            found.append(quota)
        if directory == mount or mount not in directory.parents:
            break
        directory = directory.parent
    return found


def _v2_quota(directory: Path) -> float | None:
    try:
        fields = (directory / "cpu.max").read_text().split()
    except OSError:
        return None
    if len(fields) < 1 or fields[0] == "max":
        return None
    period = fields[1] if len(fields) > 1 else "100000"
    return _ratio(fields[0], period)


def _v1_quota(directory: Path) -> float | None:
    try:
        quota = (directory / "cpu.cfs_quota_us").read_text().strip()
        period = (directory / "cpu.cfs_period_us").read_text().strip()
    except OSError:
        return None
    return _ratio(quota, period)


def _ratio(quota: str, period: str) -> float | None:
    try:
        q, p = int(quota), int(period)
    except ValueError:
        return None
    if q <= 0 or p <= 0:
        return None
    return q / p


@dataclass
class Jobserver:
    """A GNU make jobserver this process can take tokens from.

    `read_fd` is non-blocking and this process's own: a fifo opened here, or
    the inherited pipe reopened through `/proc/self/fd` (setting `O_NONBLOCK`
    on make's own descriptor would change it for make too). A token is a byte:
    read one to take it, write the same byte back to give it back."""

    read_fd: int
    write_fd: int
    owned: tuple[int, ...] = ()
    """Descriptors opened here, closed by `close`."""

    @staticmethod
    def from_makeflags(makeflags: str | None) -> Jobserver | str | None:
        """The jobserver `makeflags` offers: a `Jobserver`, None when it offers
        none, or why the one it names cannot be used (then no token is free)."""
        if not makeflags:
            return None
        auth: str | None = None
        for word in makeflags.split():
            for prefix in ("--jobserver-auth=", "--jobserver-fds="):
                if word.startswith(prefix):
                    auth = word[len(prefix) :]  # the last one wins, as in make
        if auth is None:
            return None
        if auth.startswith("fifo:"):
            return _open_fifo(auth[len("fifo:") :])
        read, sep, write = auth.partition(",")
        if not sep:
            return f"unknown jobserver style '{auth}'"
        try:
            return _open_pipe(int(read), int(write))
        except ValueError:
            return f"unknown jobserver style '{auth}'"

    def take(self) -> bytes | None:
        """A token if one is free now, else None (never waits)."""
        try:
            token = os.read(self.read_fd, 1)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return None
        return token or None

    def give(self, token: bytes) -> None:
        """Give `token` back to make."""
        with contextlib.suppress(OSError):
            os.write(self.write_fd, token)

    def close(self) -> None:
        for fd in self.owned:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.owned = ()


def _open_fifo(path: str) -> Jobserver | str:
    try:
        if not stat.S_ISFIFO(os.stat(path).st_mode):
            return f"the jobserver '{path}' is not a fifo"
        read = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as err:
        return f"cannot open the jobserver '{path}' ({err.strerror})"
    try:
        write = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except OSError as err:
        os.close(read)
        return f"cannot open the jobserver '{path}' ({err.strerror})"
    return Jobserver(read, write, (read, write))


def _open_pipe(read: int, write: int) -> Jobserver | str:
    """The inherited pipe, checked to be a pipe open for reading at `read` and
    for writing at `write` (a recipe make did not share its jobs with may have
    other files at those numbers), and reopened without blocking (Linux)."""
    if _access_mode(read) != os.O_RDONLY or _access_mode(write) != os.O_WRONLY:
        return (
            f"the jobserver's pipe ({read},{write}) is not open in this process "
            "(mark the make recipe with '+' to share make's jobs)"
        )
    try:  # a description of our own, so that O_NONBLOCK is ours alone
        own = os.open(f"/proc/self/fd/{read}", os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return f"cannot reopen the jobserver's pipe ({read}) without blocking"
    return Jobserver(own, write, (own,))


def _access_mode(fd: int) -> int | None:
    """`fd`'s access mode if it is an open pipe or fifo, else None."""
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return None
        info = Path(f"/proc/self/fdinfo/{fd}").read_text()
    except (OSError, ValueError):
        return None
    for line in info.splitlines():
        if line.startswith("flags:"):
            return int(line.split()[1], 8) & os.O_ACCMODE
    return None


_jobserver: Jobserver | str | None = None
_looked = False


def _environment_jobserver() -> Jobserver | str | None:
    """The jobserver of this process's `MAKEFLAGS`, looked up once."""
    global _jobserver, _looked
    if not _looked:
        _jobserver = Jobserver.from_makeflags(os.environ.get("MAKEFLAGS"))
        _looked = True
    return _jobserver


def reset_jobserver() -> None:
    """Forget the jobserver looked up (tests; a server's run with another
    environment)."""
    global _jobserver, _looked
    if isinstance(_jobserver, Jobserver):
        _jobserver.close()
    _jobserver, _looked = None, False


@dataclass
class WorkerLease:
    """The extra processes one parallel run may have: at most `limit`, each
    backed by a jobserver token when there is a jobserver.

    `grow` asks for one more (True if granted), `shrink` gives one back,
    `close` gives back all it holds. A pool grows before each fork and
    shrinks when a worker ends."""

    limit: int
    jobserver: Jobserver | None = None
    blocked: str | None = None
    """Why no worker may be added at all (an unreachable jobserver), or None."""
    adaptive: bool = False
    """Grant a worker only while the machine has a CPU to spare (`machine_has_room`)."""
    tokens: list[bytes] = field(default_factory=lambda: list[bytes]())
    held: int = 0
    _next_look: float = 0.0

    def grow(self) -> bool:
        if self.blocked is not None or self.held >= self.limit:
            return False
        if self.adaptive:
            now = time.monotonic()
            if now < self._next_look:
                return False
            if not machine_has_room():
                self._next_look = now + LOOK_AGAIN
                return False
        if self.jobserver is not None:
            token = self.jobserver.take()
            if token is None:
                return False
            self.tokens.append(token)
        self.held += 1
        return True

    def shrink(self) -> None:
        if self.held <= 0:
            return
        self.held -= 1
        if self.jobserver is not None and self.tokens:
            self.jobserver.give(self.tokens.pop())

    def close(self) -> None:
        while self.held:
            self.shrink()

    def __enter__(self) -> WorkerLease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def lease_workers(limit: int, *, adaptive: bool = False) -> WorkerLease:
    """A lease of up to `limit` extra worker processes (a run of `jobs` jobs:
    `jobs - 1`), within the jobserver of `MAKEFLAGS` if it offers one, and,
    `adaptive` (no `--jobs` given), while the machine has a CPU to spare."""
    found = _environment_jobserver()
    if isinstance(found, str):
        return WorkerLease(max(0, limit), blocked=found, adaptive=adaptive)
    return WorkerLease(max(0, limit), found, adaptive=adaptive)


def worker_available(limit: int, *, adaptive: bool = False) -> bool:
    """Whether a lease of `limit` would grant a worker right now (a jobserver
    token is taken and given straight back): a run that cannot fork now
    should not prepare for workers it will not get."""
    with lease_workers(limit, adaptive=adaptive) as lease:
        return lease.grow()


LOOK_AGAIN = 0.05
"""Seconds before a run that found no room (no spare CPU, no free token)
looks again."""

FORK_PAYS = 2.0
"""Forking for the rest of a run's work pays when the rest would take this
many serial budgets: forking and warming up a worker costs about one budget,
and two jobs save at most half of the rest."""


class ForkTimer:
    """When a run that starts its work in this process forks for the rest:
    the one rule the adaptor's process runs and sliced runs share.

    The run asks `fork_now` before each unit of work (a child, a batch) and
    counts each unit it ran here in `done`. Until `budget` seconds have gone,
    it works here; then it forks if the rest, estimated from the units done,
    would take `FORK_PAYS` budgets or more and a worker is free now
    (`available`: the lease would grant one). When none is free (a loaded
    machine, no jobserver token), the run goes on as a serial run and asks
    again `LOOK_AGAIN` s (or a budget) later: it costs what a serial run costs,
    and forks when a CPU comes free. Once the rest is too small to pay, it
    never asks again. (A plain class: a dataclass costs its import a
    millisecond, and every default run imports this module.)"""

    __slots__ = ("available", "budget", "done", "never", "start")

    def __init__(self, budget: float, available: Callable[[], bool]) -> None:
        self.budget = budget
        self.available = available
        self.done = 0
        self.never = False
        self.start = time.perf_counter()

    def fork_now(self, remaining: int) -> bool:
        """Whether to fork for the `remaining` units now."""
        if self.never:
            return False
        now = time.perf_counter()
        spent = now - self.start
        if spent < self.budget:
            return False
        if self.done and spent / self.done * remaining < FORK_PAYS * self.budget:
            self.never = True
            return False
        if self.available():
            return True
        self.start, self.done = now + max(LOOK_AGAIN - self.budget, 0.0), 0
        return False


def machine_has_room(loadavg: Path = Path("/proc/loadavg")) -> bool:
    """Whether one more process would find a CPU free right now: the runnable
    tasks (this one included), plus one, fit the machine's CPUs. True when
    the count cannot be read (not Linux)."""
    try:
        runnable = int(loadavg.read_text().split()[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return True
    return runnable + 1 <= (os.cpu_count() or 1)
