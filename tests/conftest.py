"""Shared fixtures: a context that allows unregistered ops and a parser for it;
a forking process pool and a local Dask cluster for the executor tests."""

from __future__ import annotations

import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor

import pytest

from passflow import ir
from passflow.all_passes import register_all_passes

# Under `make -jN test` the suite would run inside make's jobserver, which keeps
# every run it cannot reach one process: the tests that count workers set their
# own MAKEFLAGS (tests/test_worker_budget.py).
os.environ.pop("MAKEFLAGS", None)

# pytest-xdist's workers (`make test` runs them) start with Ctrl-C ignored, and
# the processes they start would inherit that: the tests of what an interrupt
# does need Python's own handler, as in a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def ctx() -> ir.Context:
    return ir.default_context(allow_unregistered=True)


@pytest.fixture
def parse(ctx: ir.Context) -> Callable[[str], ir.ModuleOp]:
    def _parse(text: str) -> ir.ModuleOp:
        return ir.parse_module(text, ctx, "input.mlir")

    return _parse


@pytest.fixture(scope="session")
def process_pool() -> Iterator[ProcessPoolExecutor]:
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork"))
    yield pool
    pool.shutdown()


@pytest.fixture(scope="module")
def dask_client() -> Iterator[object]:
    """A local Dask cluster for one test file: its event loop's threads stop
    with the file, instead of running beside every later test (and moving
    `random`'s state under Hypothesis's draws)."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        dashboard_address=None,
        host="127.0.0.1",
        protocol="tcp",
    )
    client = distributed.Client(cluster, timeout=30)
    yield client
    client.close()
    cluster.close()


@pytest.fixture(autouse=True, scope="session")
def _all_passes() -> None:
    """passflow's passes by name, as the tools register them."""
    register_all_passes()
