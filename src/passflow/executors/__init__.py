"""Executors that run an adaptor's children in other processes.

`ProcessExecutor` forks workers that already hold the parsed module (the fast
one on a multi-core machine); `ShippingExecutor` sends children to any
`concurrent.futures.Executor` and back; `DaskExecutor` is that, on a Dask
cluster (the `dask` extra). The in-process executors and the contract they all
keep are in `passflow.execution`.
"""

from passflow.executors.dask import DaskExecutor
from passflow.executors.forking import ProcessExecutor
from passflow.executors.shipping import ShippingExecutor

__all__ = ["DaskExecutor", "ProcessExecutor", "ShippingExecutor"]
