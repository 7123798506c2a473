"""`passflow-opt-server SOCKET`: passflow-opt kept resident, for test suites.

A FileCheck suite starts passflow-opt once per RUN line, and each start
imports Python, xDSL and passflow again (docs/conformance.md, "Running a
FileCheck suite fast"). The server imports them once, then forks a fresh
process for each request of a `passflow-opt` started with `PASSFLOW_SERVER`
set to its socket (`opt_client`). Each run is a copy of the server as it was
when it was ready, so no run sees what another did; it takes the client's
command line, working directory, environment, umask and standard streams, and
runs `passflow.tools.opt.main` as the client's own process would.

Nothing starts unless the user starts it. The socket must be in a directory
only its owner can enter (mode 0700, as `mktemp -d` makes), and only processes
of the same user are served (`SO_PEERCRED`). A run reads what its command line
names, from the client's directory, with the user's rights, as it would
without the server. A request that is not sent within `REQUEST_SECONDS`, or a
run longer than `--timeout`, is ended. SIGTERM or SIGINT stops the server and
removes its socket; runs in progress finish. A client whose interpreter,
passflow or interpreter variables differ from the server's, or that comes after
a module the server loaded changed on disk, is refused: it runs the command
itself, after a note. So is a run whose input is stdin when stdin is a
terminal (a forked run is not in the terminal's foreground process group and
could not read it), without a note: the client expected it.

`--auto` is the server `PASSFLOW_SERVER=auto` starts (`server_auto`): it holds
a lock beside its socket (a second `--auto` server for the same socket exits),
exits after `--idle-timeout` seconds without a connection, and exits as soon
as one of its runs finds that the code it loaded changed.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import gc
import importlib
import io
import os
import select
import signal
import socket
import stat
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

from passflow.owner_only import not_owner_only
from passflow.tools.file_stamps import Stamp, current, manifest
from passflow.tools.server_wire import WireError, identity, peer_uid, receive, send

__all__ = ["PRELOAD", "REQUEST_SECONDS", "ServerError", "main", "serve"]

PROG = "passflow-opt-server"

PRELOAD = (
    "passflow.tools.opt",
    "passflow.tools.opt_run",
    "passflow.tools.chunk",
    "passflow.tools.help_cache",
    "passflow.pass_manager",
    "passflow.pipeline_text",
    "passflow.registry",
    "passflow.executors.forking",
    "passflow.transforms.canonicalize",
    "passflow.transforms.cse",
    "passflow.testing.test_dialect",
    "xdsl.dialects.builtin",
    "xdsl.dialects.func",
    "xdsl.dialects.arith",
    "xdsl.dialects.scf",
    "xdsl.dialects.cf",
    "xdsl.dialects.memref",
    "xdsl.dialects.tensor",
    "xdsl.dialects.affine",
    "xdsl.dialects.math",
    "xdsl.dialects.llvm",
    "xdsl.dialects.vector",
    "xdsl.dialects.linalg",
)
"""The modules imported before the first fork: passflow-opt's run, its two
most used passes, and the dialects of most test files. Importing a module has
no effect beyond registering what it defines, which a run would do too; a run
imports anything else it needs itself (`--preload` adds more)."""

REQUEST_SECONDS = 10.0
"""How long a client may take to send its request once connected."""

LOCK_SECONDS = 5.0
"""How long an `--auto` server waits for the one before it on the same socket
to exit (it found its code stale) before it gives up."""

_STOP = (signal.SIGTERM, signal.SIGINT)


class ServerError(Exception):
    """Why the server cannot start: printed as `passflow-opt-server: error: ...`
    with a note on how to fix it."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


class _Stop(Exception):
    """SIGTERM or SIGINT reached the server."""


def _check_directory(directory: Path) -> None:
    try:
        problem = not_owner_only(directory)
    except OSError as err:
        raise ServerError(
            f"cannot use directory '{directory}': {err.strerror}",
            "create it with 'mktemp -d' (mode 0700)",
        ) from None
    if problem is not None:
        raise ServerError(
            f"directory '{directory}' is open to other users ({problem})",
            "put the socket in a directory of yours that only you can enter, "
            "e.g. one made by 'mktemp -d'",
        )


def listen(path: Path) -> socket.socket:
    """A socket listening at `path`, in a private directory; a socket left
    there by a server that is gone is replaced, a live one is not."""
    _check_directory(path.parent)
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise ServerError(
                f"'{path}' exists and is not a socket", "choose another path"
            )
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            try:
                probe.connect(str(path))
            except OSError:
                path.unlink()  # nobody listens: a stopped server's
            else:
                raise ServerError(
                    f"a server already listens on '{path}'",
                    "stop it (SIGTERM) or choose another path",
                )
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o077)
    try:
        listener.bind(str(path))
        listener.listen(64)
    except OSError as err:
        listener.close()
        raise ServerError(
            f"cannot listen on '{path}': {err.strerror}", "choose another path"
        ) from None
    finally:
        os.umask(mask)
    return listener


@dataclass(frozen=True)
class _Server:
    """What every request is checked against: the server's identity and the
    stamps of the code it loaded."""

    identity: dict[str, Any]
    stamps: list[Stamp]
    timeout: float
    idle: float | None = None
    """Seconds without a connection after which the server exits (None: never)."""
    auto: bool = False
    """Exit when a run finds the code stale (the next client starts a new one)."""


def _stop(signum: int, frame: object) -> NoReturn:
    raise _Stop


def serve(listener: socket.socket, server: _Server) -> NoReturn:
    """Fork a handler for each connection of the same user, until SIGTERM or
    SIGINT raise `_Stop` (`main` installs the handler); the kernel reaps the
    handlers."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    uid = os.getuid()
    listener.settimeout(server.idle)
    while True:
        try:
            connection, _ = listener.accept()
        except TimeoutError:  # idle: runs in progress finish in their handlers
            raise _Stop from None
        except OSError:  # out of descriptors, say: the client sees no server
            time.sleep(0.1)
            continue
        with connection:
            try:
                if peer_uid(connection) != uid:
                    send(connection, {"refused": "the server serves its own user only"})
                    continue
                _fork_handler(listener, connection, server)
            except OSError as err:  # cannot fork: the client runs it itself
                with contextlib.suppress(OSError):
                    send(connection, {"refused": f"the server cannot fork ({err})"})


def _fork_handler(
    listener: socket.socket, connection: socket.socket, server: _Server
) -> None:
    # No signal may run the server's handler in the handler process.
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP)
    try:
        pid = os.fork()
        if pid == 0:
            _handler_process(listener, connection, server)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP)


def _handler_process(
    listener: socket.socket, connection: socket.socket, server: _Server
) -> NoReturn:
    status = 1
    try:
        os.close(listener.detach())  # the server's to accept on, not ours
        for fd in _held:  # the lock stays the server's (closing does not unlock)
            os.close(fd)
        for signum in (*_STOP, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP)
        _handle(connection, server)
        status = 0
    finally:
        os._exit(status)


def _refusal(request: dict[str, Any], fds: list[int], server: _Server) -> str | None:
    """Why the server must not run `request` (None: it may)."""
    if len(fds) != 3:
        return "the request came without its standard streams"
    theirs = request.get("identity")
    if theirs != server.identity:
        return (
            "the server runs another Python, its flags, passflow or interpreter "
            "variables (PYTHON*, LANG, LC_*) than this command"
        )
    if not current(server.stamps):
        if server.auto:  # the next client starts a server of the new code
            os.kill(os.getppid(), signal.SIGTERM)
        return "passflow or a module the server loaded changed since it started"
    return None


def _reads_the_terminal(request: dict[str, Any], stdin: int) -> bool:
    """Whether the run's input is stdin and stdin is a terminal."""
    if not os.isatty(stdin):
        return False
    from passflow.tools.opt import reads_stdin  # preloaded

    return reads_stdin([str(arg) for arg in request.get("argv", [])][1:])


def _handle(connection: socket.socket, server: _Server) -> None:
    connection.settimeout(REQUEST_SECONDS)
    try:
        request, fds = receive(connection, fds=3)
    except (OSError, WireError):
        return
    if request is None:
        return
    connection.settimeout(None)
    refusal = _refusal(request, fds, server)
    if refusal is not None:
        send(connection, {"refused": refusal})
        return
    if _reads_the_terminal(request, fds[0]):
        send(
            connection,
            {
                "refused": "the input is stdin, a terminal, which a served run "
                "cannot read",
                "quiet": True,
            },
        )
        return
    pid = os.fork()
    if pid == 0:
        os.close(connection.detach())
        _run_process(request, fds)
    with contextlib.suppress(OSError):  # here too: a signal may come before the run's
        os.setpgid(pid, pid)
    for fd in fds:
        os.close(fd)
    send(connection, _wait(pid, connection, server.timeout))


def _wait(pid: int, connection: socket.socket, timeout: float) -> dict[str, Any]:
    """Wait for the run `pid` to end: its status; the client's interrupt is
    passed on to the run's process group as SIGINT, the client leaving or the
    timeout ends it."""
    ended = os.pidfd_open(pid)
    deadline = time.monotonic() + timeout
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                _signal_group(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return {
                    "stopped": f"the run took longer than the server's --timeout "
                    f"of {timeout:g} s and was stopped"
                }
            ready, _, _ = select.select([ended, connection], [], [], left)
            if ended in ready:
                _, status = os.waitpid(pid, 0)
                return {"ran": os.waitstatus_to_exitcode(status)}
            if connection in ready:
                try:
                    message, _ = receive(connection)
                except (OSError, WireError):
                    message = None
                if message is None:  # the client is gone
                    _signal_group(pid, signal.SIGKILL)
                else:
                    _signal_group(pid, signal.SIGINT)
    finally:
        os.close(ended)


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # it ended meanwhile
        os.killpg(pid, signum)


def _stdio(fd: int, like: object) -> io.TextIOWrapper:
    """Standard stream `fd` as the interpreter makes one when it starts
    (line-buffered for stderr and for a terminal), with the encoding and
    error handler of the server's (`like`), which the same interpreter
    variables (`server_wire.identity`) chose."""
    binary = open(fd, "rb" if fd == 0 else "wb", closefd=False)  # noqa: SIM115
    return io.TextIOWrapper(
        binary,
        encoding=getattr(like, "encoding", None) or "utf-8",
        errors=getattr(like, "errors", None)
        or ("backslashreplace" if fd == 2 else "strict"),
        newline="\n",
        line_buffering=fd == 2 or (fd == 1 and os.isatty(fd)),
    )


def _run_process(request: dict[str, Any], fds: list[int]) -> NoReturn:
    """The run: become the client's process, then run passflow-opt's main."""
    status = 1
    try:
        os.setpgid(0, 0)
        for target, fd in enumerate(fds):  # received after 0-2: above them
            os.dup2(fd, target)
            os.close(fd)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.umask(int(request["umask"]))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(request["env"]).items()})
        sys.argv = [str(arg) for arg in request["argv"]]
        sys.stdin = sys.__stdin__ = _stdio(0, sys.__stdin__)
        sys.stdout = sys.__stdout__ = _stdio(1, sys.__stdout__)
        sys.stderr = sys.__stderr__ = _stdio(2, sys.__stderr__)
        try:
            os.chdir(str(request["cwd"]))
        except OSError as err:
            sys.stderr.write(
                f"passflow-opt: cannot enter '{err.filename}': {err.strerror}\n"
            )
        else:
            status = _exit_status(_main)
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except Exception:
                status = status or 120  # as the interpreter's own exit
        os._exit(status)


def _main() -> object:
    from passflow.tools.opt import main  # preloaded

    return main()


def _exit_status(run: Any) -> int:
    """`sys.exit(run())`'s status, as the interpreter computes it."""
    try:
        code = run()
    except SystemExit as exit_:
        code = exit_.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1


_held: list[int] = []  # the lock's descriptor, held until the process exits


def _lock(path: Path) -> bool:
    """Take the lock beside `path` (waiting `LOCK_SECONDS` at most for a
    server that is exiting): False if another server holds it."""
    _check_directory(path.parent)
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    deadline = time.monotonic() + LOCK_SECONDS
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                return False
            time.sleep(0.05)
            continue
        _held.append(fd)
        return True


def preload(modules: Sequence[str]) -> None:
    """Import `modules` (the server's copy of them is each run's)."""
    for name in modules:
        try:
            importlib.import_module(name)
        except Exception as err:
            raise ServerError(
                f"cannot preload '{name}': {err}", "check the --preload module name"
            ) from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Serve passflow-opt runs from one resident process: each "
        "run is forked from it, with Python, xDSL and passflow already imported. "
        "Set PASSFLOW_SERVER=SOCKET for the passflow-opt commands to use it.",
    )
    parser.add_argument(
        "socket", type=Path, help="the socket to listen on, in a directory of mode 0700"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        metavar="SECONDS",
        help="end a run that takes longer (default 600)",
    )
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="exit after SECONDS without a run (default: never)",
    )
    parser.add_argument(
        "--auto",
        action="store_true",
        help="the server PASSFLOW_SERVER=auto starts: one per socket (a lock "
        "beside it), gone once a run finds its code changed",
    )
    parser.add_argument(
        "--preload",
        action="append",
        default=[],
        metavar="MODULE",
        help="also import MODULE before serving (a plugin's passes, say)",
    )
    args = parser.parse_args(argv)
    path: Path = args.socket.absolute()
    try:
        if args.auto and not _lock(path):
            return 0  # another server serves this socket
        listener = listen(path)
    except ServerError as err:
        sys.stderr.write(f"{PROG}: error: {err}\n{PROG}: note: {err.fix}\n")
        return 1
    bound = path.stat().st_ino
    for signum in _STOP:
        signal.signal(signum, _stop)
    try:
        preload([*PRELOAD, *args.preload])
        # The modules only: plugins are found by each run, not preloaded.
        server = _Server(
            identity(),
            manifest(search_path=False),
            args.timeout,
            args.idle_timeout,
            args.auto,
        )
        gc.collect()
        gc.freeze()  # the runs share these pages with the server
        sys.stdout.write(f"{PROG}: listening on {path}\n")
        sys.stdout.flush()
        serve(listener, server)
    except ServerError as err:
        sys.stderr.write(f"{PROG}: error: {err}\n{PROG}: note: {err.fix}\n")
        return 1
    except _Stop:
        pass
    finally:
        listener.close()
        if path.exists() and path.stat().st_ino == bound:
            path.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
