"""passflow-opt on Dask: whole and sliced runs print what a serial run prints,
and the local cluster passflow starts for a run is its own.

The comparisons share the session's local Dask cluster (`dask_client`, in
conftest) through `DaskExecutor(client)`, as `--executor=dask --scheduler=...`
would, without connecting a new client per run. The security tests start
passflow's own cluster (`DaskExecutor()`, once for the module, or in a
subprocess where the whole process tree is inspected).
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import pathlib
import socket
import ssl
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import cast

import pytest
from distributed import Client
from distributed.security import Security

from passflow.execution import ChildExecutor
from passflow.executors import DaskExecutor, make_executor
from passflow.sliced import Fallback, SlicedOutcome
from passflow.sliced import run as sliced_run
from passflow.tools import chunk, opt, pass_manager_options

HERE = pathlib.Path(__file__).parent
LIT_CORPUS = sorted((HERE / "filecheck").rglob("*.mlir"))

Outcome = SlicedOutcome | Fallback

CALLS = textwrap.dedent("""\
    func.func @gen() -> i32 {
      %0 = arith.constant 1 : i32
      %1 = arith.addi %0, %0 : i32
      func.return %1 : i32
    }
    func.func @use() -> i32 {
      %0 = func.call @gen() : () -> i32
      %1 = arith.constant 0 : i32
      %2 = arith.addi %0, %1 : i32
      func.return %2 : i32
    }
    func.func @again() -> i32 {
      %0 = func.call @use() : () -> i32
      func.return %0 : i32
    }
""")


@dataclasses.dataclass
class DaskRuns:
    """What the Dask runs of a test did: the outcomes of their sliced runs and
    the executors they ran on."""

    outcomes: list[Outcome] = dataclasses.field(default_factory=lambda: [])
    executors: list[DaskExecutor] = dataclasses.field(default_factory=lambda: [])

    def sliced(self) -> int:
        return sum(isinstance(o, SlicedOutcome) for o in self.outcomes)

    def children_shipped(self) -> bool:
        """Whether whole runs sent children to the workers."""
        return any(e.profile.worker_busy > 0 for e in self.executors)


@pytest.fixture
def on_dask(dask_client: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[DaskRuns]:
    """`--executor=dask` runs on the module's cluster, recorded."""
    assert isinstance(dask_client, Client)
    runs = DaskRuns()

    def executor(
        kind: str, jobs: int | None = None, scheduler: str | None = None
    ) -> ChildExecutor | None:
        if kind != "dask":
            return make_executor(kind, jobs, scheduler)
        made = DaskExecutor(dask_client)
        runs.executors.append(made)
        return made

    def recording(*args: object, **kwargs: object) -> Outcome:
        outcome = real(*args, **kwargs)  # type: ignore[arg-type]
        runs.outcomes.append(outcome)
        return outcome

    real = sliced_run.run_sliced_on
    monkeypatch.setattr(pass_manager_options, "make_executor", executor)
    monkeypatch.setattr(sliced_run, "run_sliced_on", recording)
    yield runs


def whole_runs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """passflow-opt runs every chunk whole (through the executor), as it does
    with a flag that a sliced run cannot reproduce."""

    def never(*_args: object) -> bool:
        return False

    monkeypatch.setattr(chunk, "sliced_flags", never)


def run_tool(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = opt.main(argv)
    return status, out.getvalue(), err.getvalue()


def compare(path: pathlib.Path, pipeline: str, *flags: str) -> tuple[int, str, str]:
    """Run `path` serially and on Dask; assert both print the same."""
    common = [
        str(path),
        f"--pass-pipeline={pipeline}",
        "--allow-unregistered-dialect",
        "--split-input-file",
        *flags,
    ]
    serial = run_tool([*common, "--mlir-disable-threading"])
    dask = run_tool([*common, "--executor=dask"])
    assert dask == serial, path
    return serial


PIPELINE = "builtin.module(func.func(canonicalize,cse))"


@pytest.mark.parametrize(
    "flag", ["--mlir-pass-statistics", "--dump-pass-pipeline", "--verify-each"]
)
def test_a_whole_run_on_dask_finds_the_callee_of_a_call(
    flag: str, on_dask: DaskRuns, tmp_path: pathlib.Path
) -> None:
    # The commands: the first two flags keep the run whole; each
    # function is a task of its own, and the call's verifier needs its callee.
    path = tmp_path / "calls.mlir"
    path.write_text(CALLS)
    status, out, err = compare(path, PIPELINE, flag)
    assert status == 0 and "could not be found" not in err
    assert out.count("func.call @") == 2
    whole = flag != "--verify-each"
    assert on_dask.sliced() == (0 if whole else 1)
    assert on_dask.children_shipped() == whole


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "sliced"])
def test_the_lit_corpus_prints_the_same_on_dask(
    whole: bool, on_dask: DaskRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    if whole:
        whole_runs_only(monkeypatch)
    for path in LIT_CORPUS:
        compare(path, PIPELINE)
    if whole:
        assert on_dask.outcomes == [] and on_dask.children_shipped()
    else:
        assert on_dask.sliced() >= 40  # most chunks of the corpus slice


# --- the local cluster passflow starts is the run's alone ---------------------


@pytest.fixture(scope="module")
def own_cluster() -> Iterator[DaskExecutor]:
    """`--executor=dask` without `--scheduler`: a local cluster of its own."""
    executor = DaskExecutor(jobs=1)
    yield executor
    executor.close()


def _setting(security: Security, name: str) -> object:
    """One of the settings of `security` (Dask's class is untyped)."""
    return cast(object, getattr(security, name))


def _refused(address: str, security: Security) -> str:
    """The error a client with `security` gets from the scheduler at `address`
    (Dask's `CommClosedError` and its kin are `OSError`s)."""
    with pytest.raises(OSError) as info:
        Client(address, security=security, timeout=5)
    return str(info.value)


def _tls_client(security: Security, *, with_certificate: bool) -> ssl.SSLContext:
    """A TLS client that trusts the run's certificate, presenting it or not."""
    authority = str(_setting(security, "tls_ca_file"))
    context = ssl.create_default_context(cadata=authority)
    context.check_hostname = False  # the certificate names "dask-internal"
    if with_certificate:
        with tempfile.TemporaryDirectory() as folder:
            cert = pathlib.Path(folder, "cert.pem")
            key = pathlib.Path(folder, "key.pem")
            cert.write_text(str(_setting(security, "tls_client_cert")))
            key.write_text(str(_setting(security, "tls_client_key")))
            context.load_cert_chain(cert, key)
    return context


def test_only_the_runs_credentials_reach_its_local_cluster(
    own_cluster: DaskExecutor,
) -> None:
    scheduler = own_cluster.client.scheduler
    assert scheduler is not None
    address = str(cast(object, scheduler.address))
    host, port = address.split("://")[1].rsplit(":", 1)
    assert host == "127.0.0.1"
    # Any other local process: plain TCP, or TLS with a certificate of its
    # own, is turned away; so is TLS without a client certificate, even one
    # that trusts the run's certificate.
    _refused(f"tcp://{host}:{port}", Security(require_encryption=False))
    other = Security.temporary()  # pyright: ignore[reportUnknownMemberType]
    assert "TLS certificate does not match" in _refused(f"tls://{host}:{port}", other)
    assert address.startswith("tls://")
    security = own_cluster.security
    assert security is not None and _setting(security, "require_encryption")
    no_certificate = _tls_client(security, with_certificate=False)
    with (
        socket.create_connection((host, int(port)), timeout=5) as raw,
        no_certificate.wrap_socket(raw) as tls,
        pytest.raises(ssl.SSLError, match="CERTIFICATE_REQUIRED"),
    ):
        tls.recv(1)  # TLS 1.3 refuses the client after the handshake
    # The same attempts with the run's credentials get through (the scheduler
    # answers with its handshake; a client runs a task).
    with (
        socket.create_connection((host, int(port)), timeout=5) as raw,
        _tls_client(security, with_certificate=True).wrap_socket(raw) as tls,
    ):
        assert tls.recv(1) != b""
    with Client(address, security=security, timeout=5) as client:
        submit = cast(Callable[..., Future[int]], client.submit)  # pyright: ignore[reportUnknownMemberType]
        assert submit(sum, [1, 2]).result() == 3


_PORTS = """\
import json, psutil
from passflow.executors.dask import DaskExecutor

executor = DaskExecutor(jobs=2)
info = executor.client.scheduler_info()
comm = [executor.client.scheduler.address]
for address, worker in info["workers"].items():
    comm += [address, worker["nanny"]]
me = psutil.Process()
listening = [
    c.laddr.port
    for process in [me, *me.children(recursive=True)]
    for c in process.net_connections("tcp")
    if c.status == psutil.CONN_LISTEN
]
print(json.dumps({
    "comm": sorted(int(a.rsplit(":", 1)[1]) for a in comm),
    "listening": sorted(listening),
    "services": info["services"],
    "dashboard_link": executor.client.dashboard_link,
}))
executor.close()
"""


def test_the_local_cluster_listens_on_its_tls_ports_only() -> None:
    # Dask starts an HTTP server on the scheduler and every worker whatever
    # the dashboard settings; none may be left listening (a subprocess, so that
    # no other cluster of the tests is counted).
    done = subprocess.run(
        [sys.executable, "-c", _PORTS], capture_output=True, text=True, check=True
    )
    found = json.loads(done.stdout)
    assert len(found["comm"]) == 5  # the scheduler, 2 workers, 2 nannies
    assert found["listening"] == found["comm"]
    assert found["services"] == {} and found["dashboard_link"] == ""


def _worker_log_level() -> int:
    import logging

    return logging.getLogger("distributed.worker").getEffectiveLevel()


def test_the_local_clusters_workers_log_nothing_below_critical(
    own_cluster: DaskExecutor,
) -> None:
    # A worker that loses its scheduler while the cluster closes logs a
    # traceback to passflow-opt's stderr unless its logging is quiet; the
    # setting is passed to the workers, and this process's environment is
    # left as it was.
    run = cast(Callable[..., dict[str, int]], own_cluster.client.run)  # pyright: ignore[reportUnknownMemberType]
    assert set(run(_worker_log_level).values()) == {50}
    assert "DASK_LOGGING__DISTRIBUTED" not in os.environ


def test_a_taken_dashboard_port_is_no_warning(tmp_path: pathlib.Path) -> None:
    # Port 8787 is the dashboard's default; Dask warns on stderr when it is
    # taken and another is used. A run on its own cluster prints what a serial
    # run prints.
    path = tmp_path / "calls.mlir"
    path.write_text(CALLS)
    tool = pathlib.Path(sys.executable).parent / "passflow-opt"
    command = [str(tool), str(path), f"--pass-pipeline={PIPELINE}"]
    with contextlib.ExitStack() as stack:
        taken = stack.enter_context(socket.socket())
        with contextlib.suppress(OSError):  # already taken: so much the better
            taken.bind(("127.0.0.1", 8787))
            taken.listen()
        runs = [
            subprocess.run(
                [*command, flag], capture_output=True, text=True, timeout=120
            )
            for flag in ("--mlir-disable-threading", "--executor=dask")
        ]
    serial, dask = ((r.returncode, r.stdout, r.stderr) for r in runs)
    assert dask == serial and serial[0] == 0 and serial[2] == ""


# --- one owner for parallelism -------------------------------------------------


def _log_forks(path: str) -> None:
    """Run on a worker: every fork it makes appends the child's pid to `path`."""
    import os

    def note() -> None:
        with open(path, "a") as log:
            log.write(f"{os.getpid()}\n")

    os.register_at_fork(after_in_child=note)


def test_a_dask_local_run_keeps_to_its_jobs(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--executor=dask --jobs=2` without a scheduler: two worker processes do
    the run's work (each beside the nanny Dask keeps to watch it), and neither
    forks workers of its own, sliced or whole."""
    cluster = DaskExecutor(jobs=2)
    try:
        log = tmp_path / "forks"
        run_on_workers = cast(Callable[..., object], cluster.client.run)  # pyright: ignore[reportUnknownMemberType]
        run_on_workers(_log_forks, str(log))
        info = cast(dict[str, dict[str, object]], cluster.client.scheduler_info())
        assert len(info["workers"]) == 2

        def executor(
            kind: str, jobs: int | None = None, scheduler: str | None = None
        ) -> ChildExecutor | None:
            if kind != "dask":
                return make_executor(kind, jobs, scheduler)
            return DaskExecutor(cluster.client)  # closing it leaves the cluster

        monkeypatch.setattr(pass_manager_options, "make_executor", executor)
        path = tmp_path / "input.mlir"
        body = "".join(
            f"func.func @f{i}() -> i32 {{\n  %c = arith.constant {i} : i32\n"
            f"  %d = arith.addi %c, %c : i32\n  func.return %d : i32\n}}\n"
            for i in range(40)
        )
        path.write_text(body)
        argv = [str(path), f"--pass-pipeline={PIPELINE}", "--executor=dask"]
        serial = run_tool([*argv[:2], "--mlir-disable-threading"])
        assert run_tool(argv) == serial  # sliced
        whole = run_tool([*argv, "--mlir-pass-statistics"])
        assert whole[0] == 0 and whole[1] == serial[1]
        assert not log.exists(), log.read_text()
    finally:
        cluster.close()
