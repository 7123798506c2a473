"""Nested pipelines on a Dask cluster (the optional `dask` extra).

`DaskExecutor` is a `ShippingExecutor` on a `dask.distributed.Client`: children
are chunked, shipped to the cluster's workers in passflow's compact IR encoding,
and their rewritten IR is spliced back here. Point it at a running scheduler
(`DaskExecutor("tcp://host:8786")`, passflow-opt's `--executor=dask
--scheduler=...`), hand it a `Client` you already have, or give it nothing to
start a local cluster of worker processes for the duration.

A local cluster is this run's alone: its scheduler and workers listen on
127.0.0.1 over TLS with credentials made for the run (`Security.temporary()`:
a self-signed certificate and key that exist only in this process's memory and
its workers'), and they require them from every peer, so no other local user
or process can connect a client and run code in the workers. Its scheduler
and workers serve nothing over HTTP: Dask starts an HTTP server on each
whatever its dashboard settings; here it gets no routes, listens on a random
loopback port (not 8787, so a taken port is no warning) and is stopped once
the cluster is up.

Workers must be able to import passflow, xDSL and every pass class of the
pipeline (and the dialects of the IR, through `context_factory`): the same
environment as the client, as Dask always requires.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Generator
from concurrent.futures import Executor
from typing import TYPE_CHECKING, Protocol, cast

from passflow.diagnostics import PassflowError
from passflow.executors.budget import default_jobs
from passflow.executors.shipping import ContextFactory, ShippingExecutor

if TYPE_CHECKING:
    from distributed import Client, LocalCluster
    from distributed.security import Security

__all__ = ["DEFAULT_TIMEOUT", "DaskExecutor", "quiet_dask_logging"]

DEFAULT_TIMEOUT = 10.0
"""Seconds passflow waits to reach (or reach again) a Dask scheduler."""


class DaskExecutor(ShippingExecutor):
    """Children as tasks on a Dask cluster.

    `client` is a `distributed.Client`, a scheduler address, or None (start a
    `LocalCluster` of `jobs` single-threaded worker processes, closed by
    `close()`, reachable only with `security`, its per-run TLS credentials).
    `jobs` defaults to the cluster's total worker threads.
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
        self.security: Security | None = None
        """The local cluster's credentials (None on a cluster passflow did not
        start)."""
        if client is None:
            cluster, self.security = _local_cluster(
                LocalCluster, jobs if jobs is not None else default_jobs()
            )
            self._cluster = cluster
            client = None
            try:
                client = Client(cluster, security=self.security)
                _stop_http_servers(client, cluster)
            except BaseException:
                if client is not None:
                    client.close()  # pyright: ignore[reportUnknownMemberType]
                cluster.close()
                raise
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


def _local_cluster(
    cluster_class: type[LocalCluster], workers: int
) -> tuple[LocalCluster, Security]:
    """A cluster of `workers` single-threaded worker processes on 127.0.0.1
    that only holders of its per-run credentials can reach, serving no HTTP
    routes (the HTTP servers are stopped by `_stop_http_servers`)."""
    from dask import config
    from distributed.security import Security

    try:
        security = Security.temporary()  # pyright: ignore[reportUnknownMemberType]
    except ImportError:  # pragma: no cover - depends on the installation
        raise PassflowError(
            "the dask executor's local cluster needs the cryptography package "
            "for its TLS credentials: pip install 'passflow[dask]'"
        ) from None
    # The nannies pass this configuration on to the workers they start, again
    # after a worker died: their HTTP servers never serve anything.
    no_routes: dict[str, list[str]] = {
        "distributed.scheduler.http.routes": [],
        "distributed.worker.http.routes": [],
    }
    with config.set(no_routes), _quiet_workers():  # pyright: ignore[reportUnknownMemberType]
        cluster = cluster_class(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            protocol="tls://",
            security=security,
            dashboard_address=None,  # pyright: ignore[reportArgumentType]
            # `dashboard_address=None` alone still has the scheduler's HTTP
            # server listen on 8787 (and warn when that port is taken).
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
        )
    return cluster, security


_WORKER_LOGGING = "DASK_LOGGING__DISTRIBUTED"


@contextlib.contextmanager
def _quiet_workers() -> Generator[None]:
    """Start the local cluster's processes with Dask's log records below
    CRITICAL off their stderr (which is passflow-opt's): a worker that loses
    its scheduler while the cluster closes would print a traceback of its own
    on a run that succeeded. They read it from the environment, when they
    import distributed; a user's own setting stays."""
    if _WORKER_LOGGING in os.environ:
        yield
        return
    os.environ[_WORKER_LOGGING] = "critical"
    try:
        yield
    finally:
        os.environ.pop(_WORKER_LOGGING, None)


class _HTTPServing(Protocol):
    """A Dask scheduler or worker, as far as its HTTP server goes."""

    http_server: object
    services: dict[str, object]


def _stop_http(server: _HTTPServing) -> None:
    stop = getattr(server.http_server, "stop", None)
    if callable(stop):
        stop()
    server.services.pop("dashboard", None)


def _stop_scheduler_http(dask_scheduler: _HTTPServing) -> None:
    _stop_http(dask_scheduler)


def _stop_worker_http(dask_worker: _HTTPServing) -> None:
    _stop_http(dask_worker)


def _stop_http_servers(client: Client, cluster: LocalCluster) -> None:
    """Stop the HTTP servers of the cluster's scheduler and workers (on their
    event loops, as Dask runs these functions); the cluster's copy of the
    scheduler's services then names no dashboard either."""
    run_on_scheduler = cast(Callable[..., object], client.run_on_scheduler)  # pyright: ignore[reportUnknownMemberType]
    run = cast(Callable[..., object], client.run)  # pyright: ignore[reportUnknownMemberType]
    run_on_scheduler(_stop_scheduler_http)
    run(_stop_worker_http)
    info = cast(dict[str, object], cluster.scheduler_info)  # pyright: ignore[reportUnknownMemberType]
    services = info.get("services")
    if isinstance(services, dict):
        cast(dict[str, object], services).pop("dashboard", None)


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
    (`passflow.sliced.outcome.ExecutorLostError`); without this, Dask's
    client logs its reconnection attempts and Tornado a traceback per closed
    stream around it."""
    names = [*logging.root.manager.loggerDict, "distributed", "tornado"]
    for name in names:
        if name.split(".")[0] in ("distributed", "tornado"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
