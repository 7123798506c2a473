"""`passflow-opt`'s entry point: the run in this process, or in a resident
`passflow-opt-server` when `PASSFLOW_SERVER` names one's socket (or is `auto`:
the user's own server, started on first use, `server_auto`).

The variable is read before anything heavy is imported: with it set, this
process loads the standard library's socket and json and nothing of the IR.
It hands the server its command line, working directory, environment, umask
and its stdin, stdout and stderr themselves (`server_wire`), so the run writes
the same bytes to the same places, and exits with the run's status.

A server that cannot be reached, runs another Python or passflow, or was
started before the code changed, does not run it: this process runs it
itself, after one `note:` line on stderr that says why and how to fix it. A
run whose input is stdin, a terminal, is refused quietly (a forked run could
not read the terminal: it is not in the terminal's foreground process group);
with the input a file, a terminal on stdin is no reason to refuse. With
`auto`, every reason is quiet: `PASSFLOW_SERVER_VERBOSE=1` shows them all.
"""

from __future__ import annotations

import os
import signal
import sys
from typing import TYPE_CHECKING

from passflow.tools.server_wire import (
    AUTO,
    SERVER_ENV,
    VERBOSE_ENV,
    WireError,
    identity,
    peer_uid,
    receive,
    send,
)

if TYPE_CHECKING:
    import socket

__all__ = ["main", "relay"]

PROG = "passflow-opt"


def main() -> int:
    """`passflow-opt`: relayed to the server `PASSFLOW_SERVER` names, else here."""
    address = os.environ.get(SERVER_ENV)
    if address:
        status = relay(address, sys.argv)
        if status is not None:
            return status
    from passflow.tools.opt import main as run_here  # the tool itself: heavy

    return run_here()


def _verbose() -> bool:
    return os.environ.get(VERBOSE_ENV, "0") not in ("", "0")


def _note(reason: str, address: str, *, quiet: bool = False) -> None:
    """Say why this run is not served: always for a server the user named,
    unless the reason is an expected one (`quiet`); for `auto`, or a quiet
    reason, only with `PASSFLOW_SERVER_VERBOSE`."""
    if quiet or address == AUTO or os.environ.get(SERVER_ENV) == AUTO:
        if not _verbose():
            return
        sys.stderr.write(
            f"{PROG}: note: not served: {reason}; running in this process\n"
        )
    else:
        sys.stderr.write(
            f"{PROG}: note: {reason}; running in this process (start "
            f"'passflow-opt-server {address}', or unset {SERVER_ENV})\n"
        )
    sys.stderr.flush()


def relay(address: str, argv: list[str]) -> int | None:
    """Run `argv` in the server at `address` (or the user's own, `auto`): the
    run's exit status, or None when the server did not run it (a note says
    why) and this process must."""
    auto = address == AUTO
    if auto:
        # Loaded for `auto` only: its digest and start-up need more modules.
        from passflow.tools.server_auto import auto_socket

        found = auto_socket()
        if isinstance(found, str):
            _note(found, address)
            return None
        address = str(found)
    import socket  # the server's variable is set: its wire loads

    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as err:
        _note(f"cannot make a socket ({err.strerror})", address)
        return None
    with sock:
        try:
            sock.connect(address)
        except OSError as err:
            reason = f"no passflow-opt server at '{address}' ({err.strerror or err})"
            if auto:
                from passflow.tools.server_auto import start_server

                problem = start_server(address)
                reason += f"; {problem}" if problem else "; started one"
            _note(reason, address)
            return None
        try:
            if peer_uid(sock) != os.getuid():
                _note(f"the server at '{address}' runs as another user", address)
                return None
            umask = os.umask(0o077)
            os.umask(umask)
            request = {
                "argv": argv,
                "cwd": os.getcwd(),
                "env": dict(os.environ),
                "umask": umask,
                "identity": identity(),
            }
            send(sock, request, [0, 1, 2])
            reply = _reply(sock)
        except (OSError, WireError) as err:
            _note(f"the server at '{address}' failed ({err})", address)
            return None
        if reply is None:
            sys.stderr.write(
                f"{PROG}: the passflow-opt server at '{address}' closed the "
                "connection before the run ended\n"
            )
            return 1
    return _outcome(reply, address)


def _reply(sock: socket.socket) -> dict[str, object] | None:
    """The server's reply; a SIGINT meanwhile interrupts the run (as Ctrl-C
    would the process), a second one gives up on it."""
    try:
        return receive(sock)[0]
    except KeyboardInterrupt:
        send(sock, {"interrupt": True})
    try:
        return receive(sock)[0]
    except KeyboardInterrupt:
        return {"ran": 130}


def _outcome(reply: dict[str, object], address: str) -> int | None:
    ran, stopped, refused = reply.get("ran"), reply.get("stopped"), reply.get("refused")
    if isinstance(ran, int):
        if ran < 0:  # killed by a signal: end the same way
            signal.signal(-ran, signal.SIG_DFL)
            os.kill(os.getpid(), -ran)
            return 128 - ran
        return ran
    if isinstance(stopped, str):
        sys.stderr.write(f"{PROG}: {stopped}\n")
        return 1
    _note(str(refused), address, quiet=reply.get("quiet") is True)
    return None
