"""How many processes a run uses: affinity, the cgroup CPU quota and a GNU make
jobserver (`passflow.executors.budget`), and the pools that obey them."""

from __future__ import annotations

import multiprocessing
import os
import pathlib
import shutil
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from typing import NamedTuple

import pytest

from passflow import OperationPass, PassManager, Statistic, ir
from passflow.executors import ProcessExecutor, budget
from passflow.executors.budget import (
    Jobserver,
    WorkerLease,
    cgroup_cpu_limit,
    lease_workers,
    machine_has_room,
    reset_jobserver,
    usable_cpus,
)
from passflow.executors.pool import ForkPool, PoolWorker
from passflow.pipeline_text import parse_pass_pipeline
from passflow.sliced import SlicedOutcome, run_sliced
from passflow.sliced.run import run_sliced_on
from passflow.tools.sliced_options import SMALL_INPUT, worth_slicing


def _tree(root: pathlib.Path, files: dict[str, str]) -> pathlib.Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


# --- the cgroup CPU quota ---------------------------------------------------


def test_cgroup_v2_quota_is_the_smallest_on_the_path_rounded_up(
    tmp_path: pathlib.Path,
) -> None:
    root = _tree(
        tmp_path / "fs",
        {
            "cpu.max": "max 100000\n",
            "ci/cpu.max": "150000 100000\n",  # 1.5 CPUs above the job's group
            "ci/job/cpu.max": "400000 100000\n",
        },
    )
    proc = _tree(tmp_path, {"cgroup": "0::/ci/job\n"}) / "cgroup"
    assert cgroup_cpu_limit(root, proc) == 2
    assert usable_cpus(root, proc) == min(2, len(os.sched_getaffinity(0)))


def test_cgroup_v2_without_a_quota_leaves_the_affinity(tmp_path: pathlib.Path) -> None:
    root = _tree(tmp_path / "fs", {"cpu.max": "max 100000\n", "a/cpu.max": "max"})
    proc = _tree(tmp_path, {"cgroup": "0::/a\n"}) / "cgroup"
    assert cgroup_cpu_limit(root, proc) is None
    assert usable_cpus(root, proc) == len(os.sched_getaffinity(0))


def test_cgroup_v1_quota_over_period(tmp_path: pathlib.Path) -> None:
    root = _tree(
        tmp_path / "fs",
        {
            "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "50000\n",
            "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
            "cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
            "cpu,cpuacct/cpu.cfs_period_us": "100000\n",
        },
    )
    proc = _tree(
        tmp_path,
        {"cgroup": "12:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n"},
    )
    assert cgroup_cpu_limit(root, proc / "cgroup") == 1  # half a CPU: one process
    assert usable_cpus(root, proc / "cgroup") == 1


def test_cgroup_v1_unlimited_and_unreadable(tmp_path: pathlib.Path) -> None:
    root = _tree(
        tmp_path / "fs",
        {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"},
    )
    proc = _tree(tmp_path, {"cgroup": "3:cpu:/\n"}) / "cgroup"
    assert cgroup_cpu_limit(root, proc) is None
    assert cgroup_cpu_limit(root, tmp_path / "missing") is None


def test_a_container_sees_its_group_as_the_mount_root(tmp_path: pathlib.Path) -> None:
    """Inside a cgroup namespace the path in /proc/self/cgroup may not exist
    under the mount: the mount's own files are the container's limit."""
    root = _tree(tmp_path / "fs", {"cpu.max": "300000 100000\n"})
    proc = _tree(tmp_path, {"cgroup": "0::/kubepods/pod1/ctr\n"}) / "cgroup"
    assert cgroup_cpu_limit(root, proc) == 3


# --- the jobserver ----------------------------------------------------------


@pytest.fixture
def makeflags(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """MAKEFLAGS set by the test is looked up afresh, and forgotten after."""
    reset_jobserver()
    yield
    monkeypatch.delenv("MAKEFLAGS", raising=False)
    reset_jobserver()


class Pipe(NamedTuple):
    read: int
    write: int


def _pipe_with(tokens: int) -> tuple[int, int]:
    read, write = os.pipe()
    os.set_inheritable(read, True)
    os.set_inheritable(write, True)
    os.write(write, b"+" * tokens)
    return read, write


def _drain(fd: int) -> bytes:
    os.set_blocking(fd, False)
    try:
        return os.read(fd, 64)
    except BlockingIOError:
        return b""
    finally:
        os.set_blocking(fd, True)


def test_pipe_jobserver_grants_one_worker_per_free_token(
    makeflags: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    read, write = _pipe_with(2)
    try:
        monkeypatch.setenv("MAKEFLAGS", f" -j3 --jobserver-auth={read},{write}")
        lease = lease_workers(7)
        assert [lease.grow() for _ in range(4)] == [True, True, False, False]
        assert _drain(read) == b""  # both tokens are ours now
        lease.shrink()
        assert _drain(read) == b"+"  # one back
        os.write(write, b"+")
        lease.close()
        assert _drain(read) == b"++"  # every token back, none made up
    finally:
        os.close(read)
        os.close(write)


def test_fifo_jobserver(
    makeflags: None, monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path
) -> None:
    fifo = tmp_path / "jobserver"
    os.mkfifo(fifo)
    keep = os.open(fifo, os.O_RDWR)  # make's end: keeps the fifo open
    try:
        os.write(keep, b"ab")
        monkeypatch.setenv("MAKEFLAGS", f"-j3 --jobserver-auth=fifo:{fifo}")
        with lease_workers(1) as lease:
            assert lease.grow()
            assert not lease.grow()  # the limit, though a token is free
        assert sorted(_drain(keep)) == sorted(b"ab")
    finally:
        os.close(keep)


def test_an_unreachable_jobserver_offers_no_token(
    makeflags: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """make 4.3 closes its pipe in recipes not marked '+': MAKEFLAGS still
    names it, and the run stays one process."""
    free = os.open(os.devnull, os.O_RDONLY)
    os.close(free)  # a descriptor number nothing holds
    monkeypatch.setenv("MAKEFLAGS", f"-j8 --jobserver-auth={free},{free}")
    lease = lease_workers(3)
    assert not lease.grow()
    assert lease.blocked is not None and "'+'" in lease.blocked
    # A regular file at those numbers is no pipe either.
    with open(__file__) as file:
        fd = file.fileno()
        found = Jobserver.from_makeflags(f"--jobserver-auth={fd},{fd}")
        assert isinstance(found, str)


def test_no_jobserver_means_the_limit(makeflags: None) -> None:
    assert Jobserver.from_makeflags("-k -j") is None
    assert Jobserver.from_makeflags(None) is None
    lease = WorkerLease(2)
    assert [lease.grow() for _ in range(3)] == [True, True, False]


# --- the pools obey it --------------------------------------------------------


def _functions(count: int) -> str:
    return "".join(
        f"func.func @f{i}(%a: i32) -> i32 {{\n"
        f"  %c = arith.constant {i} : i32\n"
        "  %0 = arith.addi %a, %c : i32\n  %1 = arith.addi %a, %c : i32\n"
        "  %2 = arith.muli %0, %1 : i32\n  func.return %2 : i32\n}\n"
        for i in range(count)
    )


def _pm() -> PassManager:
    pm = PassManager("builtin.module", ir.default_context())
    pm.assign(parse_pass_pipeline("builtin.module(func.func(canonicalize,cse))"))
    return pm


@pytest.fixture
def jobserver(makeflags: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[Pipe]:
    """A make jobserver pipe with no free token, named by MAKEFLAGS."""
    read, write = _pipe_with(0)
    monkeypatch.setenv("MAKEFLAGS", f"-j2 --jobserver-auth={read},{write}")
    yield Pipe(read, write)
    os.close(read)
    os.close(write)


def _run_adaptor(executor: ProcessExecutor) -> None:
    pm = _pm()
    pm.executor = executor
    pm.run(ir.parse_module(_functions(40), pm.context))


def test_no_free_token_keeps_the_adaptor_in_this_process(jobserver: Pipe) -> None:
    executor = ProcessExecutor(4, serial_budget=0)
    _run_adaptor(executor)
    assert executor.profile.runs == 0  # every child here, as a serial run: no fork
    assert executor.profile.shipped == 0


def test_a_free_token_is_taken_and_given_back(jobserver: Pipe) -> None:
    os.write(jobserver.write, b"+")
    executor = ProcessExecutor(4, serial_budget=0, parent_runs_children=False)
    _run_adaptor(executor)
    assert executor.profile.in_parent == 0  # one worker ran them all
    assert _drain(jobserver.read) == b"+"


def test_a_sliced_run_forks_through_its_executors_pool(jobserver: Pipe) -> None:
    outcome = run_sliced(_functions(60), "x.mlir", _pm(), jobs=4, serial_budget=0)
    assert isinstance(outcome, SlicedOutcome) and outcome.profile is not None
    assert outcome.profile.workers == 0  # no token: no worker
    os.write(jobserver.write, b"+")
    outcome = run_sliced(_functions(60), "x.mlir", _pm(), jobs=4, serial_budget=0)
    assert isinstance(outcome, SlicedOutcome) and outcome.profile is not None
    assert outcome.profile.workers == 1
    assert _drain(jobserver.read) == b"+"


# --- a real make -j -----------------------------------------------------------


def _passflow_processes(marker: str) -> int:
    count = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = pathlib.Path(f"/proc/{entry}/environ").read_bytes()
            stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        # passflow-opt and its forked workers, not make or a shell; zombies are done.
        if (
            marker.encode() in environ
            and "(passflow-opt) " in stat
            and ") Z " not in stat
        ):
            count += 1
    return count


def _most_at_once(command: list[str], cwd: pathlib.Path, marker: str) -> int:
    most = 0
    done = threading.Event()

    def watch() -> None:
        nonlocal most
        while not done.is_set():
            most = max(most, _passflow_processes(marker))
            time.sleep(0.002)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        env = {**os.environ, "PASSFLOW_BUDGET_TEST": marker}
        env.pop("MAKEFLAGS", None)
        env.pop("PASSFLOW_SERVER", None)
        subprocess.run(command, cwd=cwd, env=env, check=True, capture_output=True)
    finally:
        done.set()
        watcher.join()
    return most


@pytest.mark.skipif(shutil.which("make") is None, reason="needs GNU make")
def test_make_j_bounds_every_passflow_process(tmp_path: pathlib.Path) -> None:
    """`make -j2` of four passflow-opt runs, each of which forks workers when
    it may: never more than 2 passflow processes at once. Alone under
    `make -j3`, one run takes the free tokens and forks (so the count sees
    workers when there are some)."""
    (tmp_path / "in.mlir").write_text(_functions(1500))
    opt = pathlib.Path(sys.executable).with_name("passflow-opt")
    recipe = (
        f"\t+{opt} --jobs=4 --pass-pipeline='builtin.module(func.func("
        "canonicalize,cse))' in.mlir -o $@\n"
    )
    targets = [f"out{i}.mlir" for i in range(4)]
    (tmp_path / "Makefile").write_text(
        f"all: {' '.join(targets)}\n"
        + "".join(f"{target}:\n{recipe}" for target in targets)
    )
    most = _most_at_once(["make", "-j2", "all"], tmp_path, "bounded")
    assert 1 <= most <= 2
    for target in targets:
        (tmp_path / target).unlink()
    alone = _most_at_once(["make", "-j3", "out0.mlir"], tmp_path, "alone")
    assert 2 <= alone <= 3


def test_the_machine_has_room_while_runnable_tasks_leave_a_cpu(
    tmp_path: pathlib.Path,
) -> None:
    cpus = os.cpu_count() or 1
    loadavg = tmp_path / "loadavg"
    loadavg.write_text(f"0.10 0.20 0.30 {cpus - 1}/300 4242\n")
    assert machine_has_room(loadavg)
    loadavg.write_text(f"9.10 9.20 9.30 {cpus}/300 4242\n")
    assert not machine_has_room(loadavg)
    assert machine_has_room(tmp_path / "missing")  # not Linux: no say


def test_without_jobs_a_busy_machine_keeps_the_run_one_process(
    makeflags: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No `--jobs`: a worker only while a CPU is free; `--jobs` as asked."""
    monkeypatch.setattr(budget, "machine_has_room", lambda: False)
    assert not lease_workers(3, adaptive=True).grow()
    assert lease_workers(3).grow()
    default, asked = (
        ProcessExecutor(serial_budget=0),
        ProcessExecutor(4, serial_budget=0),
    )
    for executor in (default, asked):
        pm = _pm()
        pm.executor = executor
        pm.run(ir.parse_module(_functions(40), pm.context))
    assert default.profile.runs == 0  # the serial path
    assert asked.profile.runs == 1 and asked.profile.in_parent < 40


def test_a_run_that_can_fork_no_worker_runs_whole(jobserver: Pipe) -> None:
    """Slicing pays only with workers: with none to be had now, passflow-opt
    runs the file whole (serial cost), and slices once a token is free."""
    text = _functions(1500)
    assert len(text) > SMALL_INPUT
    executor = ProcessExecutor(2)
    assert not worth_slicing(executor, text)
    os.write(jobserver.write, b"+")
    assert worth_slicing(executor, text)
    assert _drain(jobserver.read) == b"+"  # asked, not kept


# --- a loaded machine costs what a serial run costs -----------------------------


class _SlowWarner(OperationPass):
    """Warns on each function and counts it, taking a few milliseconds."""

    argument = "test-slow-warner"
    op_name = "func.func"
    seen = Statistic("seen", "Functions seen")

    def run_on_operation(self) -> None:
        time.sleep(0.002)
        self.seen += 1
        self.emit_warning(self.get_operation(), "seen")


def _no_pool(*args: object) -> None:
    raise AssertionError("a run with no worker to be had made a pool")


def _warned(executor: ProcessExecutor | None, count: int) -> tuple[list[str], int]:
    """The warnings of a `_SlowWarner` run on `count` functions, in order,
    and its statistic."""
    pm = PassManager("builtin.module", ir.default_context())
    warner = _SlowWarner()
    pm.nest("func.func").add(warner)
    pm.executor = executor
    seen: list[str] = []
    pm.add_diagnostic_handler(lambda diagnostic: seen.append(str(diagnostic)))
    pm.run(ir.parse_module(_functions(count), pm.context, "x.mlir"))
    return seen, warner.seen


def test_with_no_worker_free_an_adaptor_takes_the_serial_path(
    makeflags: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No worker to be had: the children run as a serial run runs them, and
    no pool (multiprocessing, the workers' prepass) is ever made."""
    monkeypatch.setattr(budget, "machine_has_room", lambda: False)
    monkeypatch.setattr(ProcessExecutor, "pool", _no_pool)
    executor = ProcessExecutor(serial_budget=0)
    assert _warned(executor, 30) == _warned(None, 30)
    assert executor.profile.runs == 0


def test_a_worker_that_comes_free_mid_run_takes_the_rest(
    makeflags: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first children run serially while the machine is busy; once a CPU
    is free, the run forks for the rest. Diagnostics and statistics read as
    after a serial run: the serial part's first, then the rest's."""
    free_at = time.monotonic() + 0.15
    monkeypatch.setattr(budget, "machine_has_room", lambda: time.monotonic() > free_at)
    executor = ProcessExecutor(serial_budget=0.01)
    forked = _warned(executor, 200)
    assert executor.profile.runs == 1
    assert 0 < executor.profile.children < 200  # some ran before the fork
    assert forked == _warned(None, 200)
    assert forked[1] == 200


def test_a_sliced_run_with_no_worker_free_makes_no_pool(
    makeflags: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(budget, "machine_has_room", lambda: False)
    monkeypatch.setattr(ProcessExecutor, "pool", _no_pool)
    text = _functions(60)
    outcome = run_sliced_on(ProcessExecutor(serial_budget=0), text, "x.mlir", _pm())
    assert isinstance(outcome, SlicedOutcome)
    assert outcome.profile.workers == 0
    alone = run_sliced(text, "x.mlir", _pm(), jobs=1)
    assert isinstance(alone, SlicedOutcome)
    assert outcome.output == alone.output is not None


def _idle(conn: object) -> None:
    """A worker that does nothing (never forked here)."""


def test_a_worker_holds_its_next_task_until_the_end_nears() -> None:
    """A worker's next task waits in its pipe while it runs one (it never
    waits for the parent to come back from a task of its own); near the end
    (no more tasks than the parent's and the workers' queues hold), one at a
    time, so the last tasks go to whoever is free first."""
    context = multiprocessing.get_context("fork")
    pool = ForkPool(WorkerLease(1), _idle, (), "test")
    parent_end, child_end = context.Pipe()
    worker = PoolWorker(context.Process(target=print), parent_end)
    pool.workers[parent_end] = worker
    pending = deque(range(8))
    pool.feed(worker, pending)
    assert list(worker.inflight) == [0, 1]
    assert [child_end.recv(), child_end.recv()] == [0, 1]
    worker.inflight.popleft()  # task 0 answered
    pool.feed(worker, pending)
    assert list(worker.inflight) == [1, 2]
    worker.inflight.clear()
    pool.feed(worker, pending)  # 5 left
    assert list(worker.inflight) == [3, 4]
    worker.inflight.clear()
    pool.feed(worker, pending)  # 3 left: one at a time
    assert list(worker.inflight) == [5]
    assert list(pending) == [6, 7]
    parent_end.close()
    child_end.close()
