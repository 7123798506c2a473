"""The wire between `passflow-opt` and `passflow-opt-server`: JSON messages on
a unix socket, the client's standard streams passed along as descriptors.

A request is one message, `{"argv", "cwd", "env", "umask", "identity"}`, sent
with the client's descriptors 0, 1 and 2 (`SCM_RIGHTS`): the run reads and
writes the client's own stdin, stdout and stderr, so its bytes, their order and
whether each is a terminal are the same as in the client's own process. While
the run lasts the client may send `{"interrupt": true}` (it got SIGINT); the
reply is one message: `{"ran": status}` (a negative status: killed by that
signal), `{"stopped": message}` (the server's `--timeout` ended it) or
`{"refused": reason}` (the run did not start: the client runs it itself).

This module is imported by every `passflow-opt` that finds `PASSFLOW_SERVER`
set, before anything else of passflow: it uses the standard library only.
"""

from __future__ import annotations

import json
import os
import struct
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the socket module loads where a socket is used
    import socket

__all__ = [
    "AUTO",
    "IDLE_ENV",
    "PRELOAD_ENV",
    "SERVER_ENV",
    "VERBOSE_ENV",
    "WireError",
    "identity",
    "peer_uid",
    "receive",
    "send",
]

SERVER_ENV = "PASSFLOW_SERVER"
"""The variable that names the server's socket (or `auto`); unset, passflow-opt
runs alone."""

AUTO = "auto"
"""`PASSFLOW_SERVER=auto`: one server per user (and installation), started by
the first run that finds none (`server_auto`)."""

VERBOSE_ENV = "PASSFLOW_SERVER_VERBOSE"
"""Set (to anything but `0` or nothing): passflow-opt says on stderr why a run
was not served, also when that is expected (the input is a terminal, an `auto`
server was just started)."""

IDLE_ENV = "PASSFLOW_SERVER_IDLE"
"""Seconds an `auto` server waits for a run before it exits (default 300)."""

PRELOAD_ENV = "PASSFLOW_SERVER_PRELOAD"
"""Comma-separated modules an `auto` server imports before serving (a plugin's
passes); when one changes on disk, the server refuses and exits."""

_LENGTH = struct.Struct("!I")
_LARGEST = 1 << 26
"""No message is larger (64 MiB): an environment and a command line fit."""

_INTERPRETER_VARIABLES = ("LANG", "LC_ALL", "LC_CTYPE")
"""Beyond `PYTHON*`: what sets the interpreter's encodings when it starts."""


class WireError(Exception):
    """A message that is cut short, too large or not a JSON object."""


def send(sock: socket.socket, message: dict[str, Any], fds: Sequence[int] = ()) -> None:
    """One message, with `fds` passed along with its first byte."""
    import socket  # loaded with `sock`

    data = json.dumps(message).encode()
    head = _LENGTH.pack(len(data))
    if fds:
        socket.send_fds(sock, [head], list(fds))
    else:
        sock.sendall(head)
    sock.sendall(data)


def _exactly(sock: socket.socket, size: int) -> bytes:
    parts: list[bytes] = []
    while size:
        part = sock.recv(min(size, 1 << 20))
        if not part:
            raise WireError("the connection closed inside a message")
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def receive(
    sock: socket.socket, fds: int = 0
) -> tuple[dict[str, Any] | None, list[int]]:
    """The next message (None: the peer closed the connection) and the
    descriptors that came with it (at most `fds`)."""
    import socket  # loaded with `sock`

    received: list[int] = []
    if fds:
        head, received, _, _ = socket.recv_fds(sock, _LENGTH.size, fds)
    else:
        head = sock.recv(_LENGTH.size)
    if not head:
        return None, received
    try:
        head += _exactly(sock, _LENGTH.size - len(head))
        (size,) = _LENGTH.unpack(head)
        if size > _LARGEST:
            raise WireError(f"a message of {size} bytes")
        message = json.loads(_exactly(sock, size))
    except BaseException:
        for fd in received:
            os.close(fd)
        raise
    if not isinstance(message, dict):
        raise WireError("a message that is not a JSON object")
    return message, received  # pyright: ignore[reportUnknownVariableType]


def peer_uid(sock: socket.socket) -> int:
    """The user id of the process at the other end (Linux's `SO_PEERCRED`)."""
    import socket  # loaded with `sock`

    credentials = sock.getsockopt(
        socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")
    )
    _, uid, _ = struct.unpack("3i", credentials)
    return uid


def identity() -> dict[str, Any]:
    """What must match between a client and the server for a forked run to be
    the client's own: the interpreter and its flags, where passflow is imported
    from, and the variables that set the interpreter up when it starts (`PYTHONHASHSEED`,
    `PYTHONPATH`, encodings), which a forked process cannot take from the
    client."""
    package = sys.modules["passflow"].__file__
    variables = {
        name: value
        for name, value in os.environ.items()
        if name.startswith("PYTHON") or name in _INTERPRETER_VARIABLES
    }
    return {
        "python": sys.executable,
        "flags": list(sys.flags),
        "passflow": package,
        "variables": variables,
    }
