"""`passflow-opt`'s entry point: the run in this process, or in a resident
`passflow-opt-server` when `PASSFLOW_SERVER` names one's socket.

The variable is read before anything heavy is imported: with it set, this
process loads the standard library's socket and json and nothing of the IR.
It hands the server its command line, working directory, environment, umask
and its stdin, stdout and stderr themselves (`server_wire`), so the run writes
the same bytes to the same places, and exits with the run's status.

A server that cannot be reached, runs another Python or passflow, or was
started before the code changed, does not run it: this process runs it
itself, after one `note:` line on stderr that says why and how to fix it. With
stdin a terminal, the run stays here without a note (a forked run could not
read the terminal: it is not in the terminal's foreground process group).
"""

from __future__ import annotations

import os
import signal
import socket
import sys

from passflow.tools.server_wire import (
    SERVER_ENV,
    WireError,
    identity,
    peer_uid,
    receive,
    send,
)

__all__ = ["main", "relay"]

PROG = "passflow-opt"


def main() -> int:
    """`passflow-opt`: relayed to the server named by `PASSFLOW_SERVER`, else here."""
    address = os.environ.get(SERVER_ENV)
    if address and not os.isatty(0):
        status = relay(address, sys.argv)
        if status is not None:
            return status
    from passflow.tools.opt import main as run_here  # the tool itself: heavy

    return run_here()


def _note(reason: str, address: str) -> None:
    sys.stderr.write(
        f"{PROG}: note: {reason}; running in this process (start "
        f"'passflow-opt-server {address}', or unset {SERVER_ENV})\n"
    )
    sys.stderr.flush()


def relay(address: str, argv: list[str]) -> int | None:
    """Run `argv` in the server at `address`: the run's exit status, or None
    when the server did not run it (a note says why) and this process must."""
    try:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as err:
        _note(f"cannot make a socket ({err.strerror})", address)
        return None
    with sock:
        try:
            sock.connect(address)
        except OSError as err:
            _note(
                f"no passflow-opt server at '{address}' ({err.strerror or err})",
                address,
            )
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
    _note(str(refused), address)
    return None
