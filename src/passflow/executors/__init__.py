"""The executors that run an adaptor's children, and how to choose one.

- `SerialExecutor`: every child on the calling thread (`--mlir-disable-threading`);
- `ThreadExecutor`: MLIR's threaded adaptor on a thread pool (MLIR's semantics,
  no speedup under the GIL);
- `ProcessExecutor`: forked workers that already hold the parsed module (the one
  that makes passflow faster on several cores);
- `ShippingExecutor`: children shipped to any `concurrent.futures.Executor`;
- `DaskExecutor`: that, on a Dask cluster (the `dask` extra).

All keep the contract of `passflow.execution` and run each child through
`passflow.executors.child_run`. `make_executor` is what passflow-opt's
`--executor`/`--jobs`/`--scheduler` build; `as_child_executor` wraps a
`concurrent.futures` executor.

Importing this package loads no executor: each class loads on first use of its
name (or when `make_executor` builds one), so a serial run never imports the
thread pool, the shipping codec or Dask, and a run of the default process
executor only its own module. Nor does it load the IR: a tool declares
`--executor` (`EXECUTOR_KINDS`) for nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from passflow.diagnostics import PassflowError
from passflow.lazy import lazy_exports

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from passflow.execution import ChildExecutor
    from passflow.executors.budget import default_jobs
    from passflow.executors.child_run import ExecutorProfile
    from passflow.executors.dask import DaskExecutor
    from passflow.executors.forking import ProcessExecutor
    from passflow.executors.serial import SerialExecutor
    from passflow.executors.shipping import ShippingExecutor
    from passflow.executors.threads import ThreadExecutor

__all__ = [
    "EXECUTOR_KINDS",
    "DaskExecutor",
    "ExecutorProfile",
    "ProcessExecutor",
    "SerialExecutor",
    "ShippingExecutor",
    "ThreadExecutor",
    "as_child_executor",
    "default_executor_kind",
    "default_jobs",
    "make_executor",
    "threading_disabled",
]

_MODULES = {
    "passflow.executors.dask": ("DaskExecutor",),
    "passflow.executors.budget": ("default_jobs",),
    "passflow.executors.child_run": ("ExecutorProfile",),
    "passflow.executors.forking": ("ProcessExecutor",),
    "passflow.executors.serial": ("SerialExecutor",),
    "passflow.executors.shipping": ("ShippingExecutor",),
    "passflow.executors.threads": ("ThreadExecutor",),
}
"""The names this package exports, by the module that defines them."""


__getattr__ = lazy_exports(__name__, _MODULES)


EXECUTOR_KINDS = ("serial", "thread", "process", "dask")
"""What `make_executor` (and passflow-opt's `--executor`) accepts."""


def default_executor_kind() -> str:
    """What passflow-opt uses without `--executor`: forked processes where the
    platform can fork, else serial.

    Measured (bench/parallel.py): processes beat serial from about a hundred
    functions of cheap passes, and because the parent runs children itself for
    `serial_budget` seconds and forks only if the rest would take twice that,
    smaller inputs cost what a serial run costs. Threads never beat serial under
    the GIL."""
    # The process executor's module: loaded for a run, not to declare the flags.
    from passflow.executors.forking import can_fork

    return "process" if can_fork() else "serial"


def make_executor(
    kind: str, jobs: int | None = None, scheduler: str | None = None
) -> ChildExecutor:
    """The executor passflow-opt's `--executor`, `--jobs` and `--scheduler` ask for.

    `jobs` (default: the usable cores) bounds the workers; one job means serial.
    `scheduler` is a Dask scheduler address (`tcp://host:8786`) for `dask`; without
    one, `dask` starts a local cluster of `jobs` worker processes.
    """
    if kind not in EXECUTOR_KINDS:
        raise PassflowError(
            f"unknown executor '{kind}' (expected one of: {', '.join(EXECUTOR_KINDS)})"
        )
    if scheduler is not None and kind != "dask":
        raise PassflowError(
            f"a scheduler address needs the dask executor, not '{kind}'"
        )
    if jobs is not None and jobs < 1:
        raise PassflowError(f"the number of jobs must be at least 1, got {jobs}")
    # Each executor's module loads here, when it is chosen (start-up: the
    # thread pool, the shipping codec and Dask cost a run that uses none).
    if kind == "serial" or (jobs == 1 and kind != "dask"):
        from passflow.executors.serial import SerialExecutor

        return SerialExecutor()
    if kind == "thread":
        from passflow.executors.threads import ThreadExecutor

        return ThreadExecutor(jobs)
    if kind == "process":
        from passflow.executors.forking import ProcessExecutor

        return ProcessExecutor(jobs)
    from passflow.executors.dask import DaskExecutor

    return DaskExecutor(scheduler, jobs=jobs)


def as_child_executor(
    executor: ChildExecutor | Executor | None, jobs: int | None = None
) -> ChildExecutor | None:
    """Accept a `ChildExecutor` as is and wrap a `concurrent.futures.Executor`.

    A `ThreadPoolExecutor` becomes a `ThreadExecutor` on that pool (children share
    this process's IR); any other executor (a `ProcessPoolExecutor`, Dask's
    `client.get_executor()`, ...) runs elsewhere, so children are shipped to it
    and their rewritten IR shipped back (`ShippingExecutor`).
    """
    # The pass manager that calls this has loaded the execution contract (and
    # the IR bridge below it), which declaring `--executor` does not need.
    from passflow.execution import ChildExecutor

    if executor is None or isinstance(executor, ChildExecutor):
        return executor
    # Loaded only for a foreign executor (start-up: see make_executor).
    from concurrent.futures import ThreadPoolExecutor

    from passflow.executors.shipping import ShippingExecutor
    from passflow.executors.threads import ThreadExecutor

    if isinstance(executor, ThreadPoolExecutor):
        return ThreadExecutor(jobs, pool=executor)
    return ShippingExecutor(executor, jobs=jobs)


def threading_disabled(executor: ChildExecutor | None) -> bool:
    """Whether nested pipelines run serially on the calling thread: no
    executor, or one that runs every child there (serial, one job). The one
    rule for `--mlir-disable-threading`, `--executor=serial` and `--jobs=1`."""
    return executor is None or executor.threading_disabled
