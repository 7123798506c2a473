"""Nested pipelines on a Dask cluster (the optional `dask` extra).

`DaskExecutor` is a `ShippingExecutor` on a `dask.distributed.Client`: children
are chunked, shipped to the cluster's workers in passflow's compact IR encoding,
and their rewritten IR is spliced back here. Point it at a running scheduler
(`DaskExecutor("tcp://host:8786")`, passflow-opt's `--executor=dask
--scheduler=...`), hand it a `Client` you already have, or give it nothing to
start a local cluster of worker processes for the duration.

Workers must be able to import passflow, xDSL and every pass class of the
pipeline (and the dialects of the IR, through `context_factory`): the same
environment as the client, as Dask always requires.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Executor
from typing import TYPE_CHECKING, cast

from passflow.diagnostics import PassflowError
from passflow.executors.child_run import default_jobs
from passflow.executors.shipping import ContextFactory, ShippingExecutor

if TYPE_CHECKING:
    from distributed import Client, LocalCluster

__all__ = ["DEFAULT_TIMEOUT", "DaskExecutor", "quiet_dask_logging"]

DEFAULT_TIMEOUT = 10.0
"""Seconds passflow waits to reach (or reach again) a Dask scheduler."""


class DaskExecutor(ShippingExecutor):
    """Children as tasks on a Dask cluster.

    `client` is a `distributed.Client`, a scheduler address, or None (start a
    `LocalCluster` of `jobs` single-threaded worker processes, closed by
    `close()`). `jobs` defaults to the cluster's total worker threads.
    `timeout`: seconds to reach a scheduler given by address, and to reconnect
    to it once connected; past it the run fails with one error instead of
    waiting (Dask's own default is 30 s).
    """

    name = "dask"

    def __init__(
        self,
        client: Client | str | None = None,
        *,
        jobs: int | None = None,
        chunks_per_job: int = 4,
        context_factory: ContextFactory | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        try:
            from distributed import Client, LocalCluster
        except ImportError:  # pragma: no cover - depends on the installation
            raise PassflowError(
                "the dask executor needs dask.distributed: pip install 'passflow[dask]'"
            ) from None
        self._cluster: LocalCluster | None = None
        self._owns_client = not isinstance(client, Client)
        if client is None:
            self._cluster = LocalCluster(
                n_workers=jobs if jobs is not None else default_jobs(),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,  # pyright: ignore[reportArgumentType]
            )
            client = Client(self._cluster)
        elif isinstance(client, str):
            client = _connect(Client, client, timeout)
        self.client = client
        if jobs is None:
            nthreads = cast(Callable[[], dict[str, int]], client.nthreads)  # pyright: ignore[reportUnknownMemberType]
            jobs = sum(nthreads().values()) or 1
        get_executor = cast(Callable[..., Executor], client.get_executor)  # pyright: ignore[reportUnknownMemberType]
        super().__init__(
            get_executor(pure=False),
            jobs=jobs,
            chunks_per_job=chunks_per_job,
            context_factory=context_factory,
        )

    def close(self) -> None:
        if self._owns_client:
            self.client.close()  # pyright: ignore[reportUnknownMemberType]
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None


def _connect(client_class: type[Client], address: str, timeout: float) -> Client:
    """A client of the scheduler at `address`, with the security settings of
    Dask's configuration (`distributed.comm.tls.*`, `require-encryption`); a
    scheduler that cannot be reached, or only without the encryption the
    configuration requires, is a `PassflowError` naming it."""
    try:
        return client_class(address, timeout=timeout)
    except (OSError, RuntimeError, ValueError) as err:
        raise PassflowError(
            f"cannot connect to the Dask scheduler '{address}': {err}"
        ) from None


def quiet_dask_logging() -> None:
    """Keep Dask's and Tornado's log records below CRITICAL off stderr.

    A command-line tool reports a lost scheduler in one error of its own
    (`passflow.sliced.shipped.ExecutorLostError`); without this, Dask's
    client logs its reconnection attempts and Tornado a traceback per closed
    stream around it."""
    names = [*logging.root.manager.loggerDict, "distributed", "tornado"]
    for name in names:
        if name.split(".")[0] in ("distributed", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
