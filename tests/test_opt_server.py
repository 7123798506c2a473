"""passflow-opt through `passflow-opt-server`: the same exit status, stdout,
stderr and output files as a run in passflow-opt's own process, for runs that
succeed, fail, read stdin or write files; a note and a run in the client's own
process when the server is missing, differs or is stale; the timeout, Ctrl-C,
and the server's own start and stop."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from test_startup_imports import ONE_FUNCTION

from passflow.tools.server_wire import SERVER_ENV

BIN = Path(sys.executable).parent
OPT = str(BIN / "passflow-opt")
SERVER = str(BIN / "passflow-opt-server")


SPLIT = """\
func.func @ok() {
  func.return
}
// -----
func.func @bad() {
  %0 = "test.unknown"() : () -> i32
  func.return %x : i32
}
"""

CANON_CSE = "--pass-pipeline=builtin.module(func.func(canonicalize,cse))"


@dataclass(frozen=True)
class Server:
    socket: Path
    process: subprocess.Popen[str]


def start(directory: Path, *flags: str, env: dict[str, str] | None = None) -> Server:
    directory.mkdir(mode=0o700, exist_ok=True)
    path = directory / "socket"
    process = subprocess.Popen(
        [SERVER, str(path), *flags],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == f"passflow-opt-server: listening on {path}\n"
    assert path.stat().st_mode & 0o077 == 0
    return Server(path, process)


def stop(server: Server) -> None:
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=30) == 0
    assert not server.socket.exists()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    running = start(tmp_path / "server")
    yield running
    stop(running)


@dataclass(frozen=True)
class Outcome:
    status: int
    stdout: bytes
    stderr: bytes


def opt(
    cwd: Path, *argv: str, stdin: bytes = b"", server: Path | None = None, **env: str
) -> Outcome:
    environment = {k: v for k, v in os.environ.items() if k != SERVER_ENV}
    environment.update(env, COLUMNS="80")
    if server is not None:
        environment[SERVER_ENV] = str(server)
    done = subprocess.run(
        [OPT, *argv], input=stdin, capture_output=True, cwd=cwd, env=environment
    )
    return Outcome(done.returncode, done.stdout, done.stderr)


CASES = {
    "canonicalize,cse": ([CANON_CSE, "one.mlir"], b""),
    "stdin": (["--pass-pipeline=builtin.module(cse)"], ONE_FUNCTION.encode()),
    "split input, one chunk fails": (
        ["split.mlir", "--split-input-file", "--allow-unregistered-dialect"],
        b"",
    ),
    "a failing pass": (
        ["one.mlir", "--pass-pipeline=builtin.module(test-pass-failure)"],
        b"",
    ),
    "an unknown flag": (["one.mlir", "--no-such-flag"], b""),
    "a missing file": (["missing.mlir"], b""),
    "ir printing and statistics": (
        [CANON_CSE, "one.mlir", "--mlir-print-ir-after-all", "--mlir-pass-statistics"],
        b"",
    ),
    "generic form, to a file": (
        [CANON_CSE, "one.mlir", "--mlir-print-op-generic", "-o", "out/result.mlir"],
        b"",
    ),
    "version": (["--version"], b""),
    "list passes": (["--list-passes"], b""),
}


@pytest.mark.parametrize("case", CASES)
def test_a_served_run_is_the_run_in_process(
    server: Server, tmp_path: Path, case: str
) -> None:
    argv, stdin = CASES[case]
    outcomes: list[Outcome] = []
    outputs: list[str | None] = []
    for via in (None, server.socket):
        work = tmp_path / ("served" if via else "alone")
        (work / "out").mkdir(parents=True)
        (work / "one.mlir").write_text(ONE_FUNCTION)
        (work / "split.mlir").write_text(SPLIT)
        outcomes.append(opt(work, *argv, stdin=stdin, server=via))
        result = work / "out" / "result.mlir"
        outputs.append(result.read_text() if result.exists() else None)
    alone, served = outcomes
    assert served == alone
    assert outputs[0] == outputs[1]
    assert b"note: " not in served.stderr or case == "a failing pass"


def test_a_missing_server_leaves_a_note_and_runs_here(tmp_path: Path) -> None:
    (tmp_path / "one.mlir").write_text(ONE_FUNCTION)
    alone = opt(tmp_path, CANON_CSE, "one.mlir")
    missing = tmp_path / "nobody" / "socket"
    noted = opt(tmp_path, CANON_CSE, "one.mlir", server=missing)
    note, rest = noted.stderr.split(b"\n", 1)
    assert note.decode() == (
        f"passflow-opt: note: no passflow-opt server at '{missing}' (No such file "
        f"or directory); running in this process (start 'passflow-opt-server "
        f"{missing}', or unset PASSFLOW_SERVER)"
    )
    assert (noted.status, noted.stdout, rest) == (
        alone.status,
        alone.stdout,
        alone.stderr,
    )


def test_a_client_with_other_interpreter_variables_runs_here(
    server: Server, tmp_path: Path
) -> None:
    (tmp_path / "one.mlir").write_text(ONE_FUNCTION)
    seeded = opt(
        tmp_path, CANON_CSE, "one.mlir", server=server.socket, PYTHONHASHSEED="7"
    )
    assert seeded.stderr.startswith(
        b"passflow-opt: note: the server runs another Python, its flags, passflow "
        b"or interpreter variables (PYTHON*, LANG, LC_*) than this command; running "
        b"in this process"
    )
    assert seeded.status == 0 and b"arith.muli %a, %a" in seeded.stdout


def test_a_server_whose_code_changed_refuses(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "server_probe_plugin.py").write_text("VALUE = 1\n")
    env = {**os.environ, "PYTHONPATH": str(site)}
    running = start(tmp_path / "server", "--preload", "server_probe_plugin", env=env)
    try:
        (tmp_path / "one.mlir").write_text(ONE_FUNCTION)
        first = opt(
            tmp_path, CANON_CSE, "one.mlir", server=running.socket, PYTHONPATH=str(site)
        )
        assert first.status == 0 and first.stderr == b""
        (site / "server_probe_plugin.py").write_text("VALUE = 22\n")
        stale = opt(
            tmp_path, CANON_CSE, "one.mlir", server=running.socket, PYTHONPATH=str(site)
        )
        assert stale.stderr.startswith(
            b"passflow-opt: note: passflow or a module the server loaded changed "
            b"since it started; running in this process"
        )
        assert stale.stdout == first.stdout
    finally:
        stop(running)


def _blocked_on_stdin(cwd: Path, server: Path | None) -> subprocess.Popen[bytes]:
    """passflow-opt reading a stdin that never ends."""
    env = {k: v for k, v in os.environ.items() if k != SERVER_ENV}
    if server is not None:
        env[SERVER_ENV] = str(server)
    return subprocess.Popen(
        [OPT, "--pass-pipeline=builtin.module(cse)"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
    )


def _ended(client: subprocess.Popen[bytes]) -> bytes:
    """What `client` wrote to stderr once it ended, its stdin still open."""
    client.wait(timeout=60)
    assert client.stderr is not None and client.stdin is not None
    client.stdin.close()
    return client.stderr.read()


def test_a_run_past_the_timeout_is_stopped(tmp_path: Path) -> None:
    running = start(tmp_path / "server", "--timeout", "1")
    try:
        client = _blocked_on_stdin(tmp_path, running.socket)
        stderr = _ended(client)
        assert client.returncode == 1
        assert stderr == (
            b"passflow-opt: the run took longer than the server's --timeout of 1 s "
            b"and was stopped\n"
        )
    finally:
        stop(running)


SPIN = """\
import os
import time
from pathlib import Path

from passflow import OperationPass, register_pass


class Spin(OperationPass):
    argument = "test-spin"
    summary = "Runs until interrupted."

    def run_on_operation(self) -> None:
        Path(os.environ["SPIN_MARKER"]).touch()
        while True:
            time.sleep(0.01)


def register() -> None:
    register_pass(Spin)
"""


def test_ctrl_c_interrupts_the_served_run_as_the_run_in_process(
    tmp_path: Path,
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "spin_plugin.py").write_text(SPIN)
    info = site / "spin_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: spin-plugin\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(
        "[passflow.passes]\nspin = spin_plugin:register\n"
    )
    (tmp_path / "one.mlir").write_text(ONE_FUNCTION)
    env = {k: v for k, v in os.environ.items() if k != SERVER_ENV}
    env["PYTHONPATH"] = str(site)
    running = start(tmp_path / "server", env=env)
    outcomes: list[tuple[int, bytes]] = []
    try:
        for via in ("", str(running.socket)):
            marker = tmp_path / f"started{len(outcomes)}"
            client = subprocess.Popen(
                [OPT, "one.mlir", "--pass-pipeline=builtin.module(test-spin)"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=tmp_path,
                env={**env, SERVER_ENV: via, "SPIN_MARKER": str(marker)},
            )
            deadline = time.monotonic() + 120
            while not marker.exists() and time.monotonic() < deadline:
                time.sleep(0.05)  # until the pass runs (no timing is asserted)
            client.send_signal(signal.SIGINT)
            _, stderr = client.communicate(timeout=60)
            outcomes.append((client.returncode, stderr))
    finally:
        stop(running)
    assert outcomes[1] == outcomes[0]
    assert outcomes[0][0] == 130
    assert outcomes[0][1].endswith(b"passflow-opt: interrupted\n")


def test_the_socket_must_be_in_a_private_directory(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    shared.chmod(0o755)
    done = subprocess.run(
        [SERVER, str(shared / "socket")], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr == (
        f"passflow-opt-server: error: directory '{shared}' is open to other users "
        f"(owner uid {os.getuid()}, mode 0755)\n"
        "passflow-opt-server: note: put the socket in a directory of yours that "
        "only you can enter, e.g. one made by 'mktemp -d'\n"
    )


def test_a_second_server_on_the_same_socket_is_refused(server: Server) -> None:
    done = subprocess.run(
        [SERVER, str(server.socket)], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stderr.startswith(
        f"passflow-opt-server: error: a server already listens on '{server.socket}'"
    )


def _on_a_terminal(cwd: Path, *argv: str, **env: str) -> Outcome:
    """passflow-opt with a terminal (a pseudo-terminal) on stdin, where one
    function and an end of file (Ctrl-D) are typed."""
    leader, follower = os.openpty()
    os.write(leader, ONE_FUNCTION.encode() + b"\x04")
    try:
        environment = {k: v for k, v in os.environ.items() if k != SERVER_ENV}
        environment.update(env, COLUMNS="80")
        done = subprocess.run(
            [OPT, *argv], stdin=follower, capture_output=True, cwd=cwd, env=environment
        )
    finally:
        os.close(follower)
        os.close(leader)
    return Outcome(done.returncode, done.stdout, done.stderr)


def test_a_terminal_on_stdin_is_no_reason_to_refuse_a_file(
    server: Server, tmp_path: Path
) -> None:
    """Served whenever the input is a file; only a run that would read the
    terminal runs here, quietly unless PASSFLOW_SERVER_VERBOSE asks why."""
    (tmp_path / "one.mlir").write_text(ONE_FUNCTION)
    alone = opt(tmp_path, CANON_CSE, "one.mlir")
    verbose = {SERVER_ENV: str(server.socket), "PASSFLOW_SERVER_VERBOSE": "1"}
    served = _on_a_terminal(tmp_path, CANON_CSE, "one.mlir", **verbose)
    assert served == alone  # no note: it was served
    reads_terminal = {SERVER_ENV: str(server.socket)}
    quiet = _on_a_terminal(tmp_path, CANON_CSE, "-o", "x.mlir", **reads_terminal)
    assert (quiet.status, quiet.stderr) == (0, b"")  # run here, from the terminal
    assert (tmp_path / "x.mlir").read_bytes() == alone.stdout
    noted = _on_a_terminal(tmp_path, CANON_CSE, "-o", "one.mlir", **verbose)
    assert noted.stderr.startswith(
        b"passflow-opt: note: not served: the input is stdin, a terminal, which a "
        b"served run cannot read; running in this process\n"
    )


def opt_with(cwd: Path, env: dict[str, str], *argv: str) -> Outcome:
    """`opt` with these variables set (PASSFLOW_SERVER among them)."""
    environment = {k: v for k, v in os.environ.items() if k != SERVER_ENV}
    environment.update(env, COLUMNS="80")
    done = subprocess.run([OPT, *argv], capture_output=True, cwd=cwd, env=environment)
    return Outcome(done.returncode, done.stdout, done.stderr)


def _servers_on(path: Path) -> list[int]:
    """The processes whose command line names `path` (an auto server)."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                command = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if str(path).encode() in command:
                found.append(int(entry))
    return found


def _until(condition: Callable[[], bool], seconds: float = 120) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_auto_starts_one_server_per_user_that_exits_when_idle(
    tmp_path: Path,
) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))  # a short path
    (tmp_path / "one.mlir").write_text(ONE_FUNCTION)
    alone = opt(tmp_path, CANON_CSE, "one.mlir")
    env = {
        SERVER_ENV: "auto",
        "XDG_RUNTIME_DIR": str(runtime),
        "PASSFLOW_SERVER_IDLE": "20",
    }
    first = opt_with(tmp_path, env, CANON_CSE, "one.mlir")
    assert (first.status, first.stdout, first.stderr) == (
        alone.status,
        alone.stdout,
        alone.stderr,
    )  # quiet: auto explains only when asked
    directory = runtime / "passflow"
    assert directory.stat().st_mode & 0o777 == 0o700
    assert _until(lambda: any(p.suffix == ".sock" for p in directory.iterdir()))
    (socket_path,) = [p for p in directory.iterdir() if p.suffix == ".sock"]
    assert len(_servers_on(socket_path)) == 1
    served = opt_with(
        tmp_path, {**env, "PASSFLOW_SERVER_VERBOSE": "1"}, CANON_CSE, "one.mlir"
    )
    assert served == alone  # no note: served
    # Idle for 20 s: the server exits and removes its socket.
    assert _until(lambda: not _servers_on(socket_path) and not socket_path.exists())
    shutil.rmtree(runtime)


def test_an_auto_server_whose_code_changed_refuses_and_exits(tmp_path: Path) -> None:
    runtime = Path(tempfile.mkdtemp(prefix="rt-", dir="/tmp"))  # a short path
    site = tmp_path / "site"
    site.mkdir()
    (site / "auto_probe_plugin.py").write_text("VALUE = 1\n")
    (tmp_path / "one.mlir").write_text(ONE_FUNCTION)
    env = {
        SERVER_ENV: "auto",
        "XDG_RUNTIME_DIR": str(runtime),
        "PASSFLOW_SERVER_PRELOAD": "auto_probe_plugin",
        "PASSFLOW_SERVER_VERBOSE": "1",
        "PYTHONPATH": str(site),
    }
    first = opt_with(tmp_path, env, CANON_CSE, "one.mlir")
    assert b"note: not served: no passflow-opt server at" in first.stderr
    assert b"; started one; running in this process" in first.stderr
    directory = runtime / "passflow"
    assert _until(lambda: any(p.suffix == ".sock" for p in directory.iterdir()))
    (socket_path,) = [p for p in directory.iterdir() if p.suffix == ".sock"]
    served = opt_with(tmp_path, env, CANON_CSE, "one.mlir")
    assert served.stderr == b"" and served.stdout == first.stdout
    (site / "auto_probe_plugin.py").write_text("VALUE = 22\n")
    stale = opt_with(tmp_path, env, CANON_CSE, "one.mlir")
    assert stale.stderr.startswith(
        b"passflow-opt: note: not served: passflow or a module the server loaded "
        b"changed since it started; running in this process\n"
    )
    assert stale.stdout == first.stdout
    assert _until(lambda: not _servers_on(socket_path))  # it exited
    again = opt_with(tmp_path, env, CANON_CSE, "one.mlir")  # starts a fresh one
    assert b"started one" in again.stderr
    assert _until(lambda: socket_path.exists())
    fresh = opt_with(tmp_path, env, CANON_CSE, "one.mlir")
    assert fresh.stderr == b""
    for pid in _servers_on(socket_path):
        os.kill(pid, signal.SIGTERM)
    assert _until(lambda: not _servers_on(socket_path))
    shutil.rmtree(runtime)
