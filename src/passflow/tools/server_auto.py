"""`PASSFLOW_SERVER=auto`: the user's own `passflow-opt-server`, started on
first use.

The socket lives in passflow's directory of the user's runtime directory
(`$XDG_RUNTIME_DIR/passflow`, else `/tmp/passflow-UID`), made with mode 0700;
the server itself refuses a directory other users can enter. Its name holds a
digest of the client's `server_wire.identity()` and the modules it preloads,
so each interpreter, passflow installation and set of interpreter variables
has its own server, and a client only ever finds a server that can run it.

The first run that finds no server starts one, detached, and runs in its own
process meanwhile (it does not wait for the server's imports); the runs after
it are served. The server exits after `PASSFLOW_SERVER_IDLE` seconds without
a run (300 by default), at once when passflow or a preloaded module changed
on disk (the run that found out runs in its own process; the next one starts
a fresh server), and on SIGTERM. Like `server_wire`, this module uses the
standard library only: it runs before anything heavy is imported.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from pathlib import Path

from passflow.tools.server_wire import IDLE_ENV, PRELOAD_ENV, SERVER_ENV, identity

__all__ = ["DEFAULT_IDLE", "auto_socket", "preloaded", "start_server"]

DEFAULT_IDLE = 300.0
"""Seconds an `auto` server waits for a run before it exits."""


_SOCKET_PATH_LIMIT = 108  # sun_path, with its terminating NUL (Linux)


def preloaded() -> list[str]:
    """The modules `PASSFLOW_SERVER_PRELOAD` names."""
    value = os.environ.get(PRELOAD_ENV, "")
    return [name.strip() for name in value.split(",") if name.strip()]


def auto_socket() -> Path | str:
    """Where this user's server for this client listens, its directory made
    (mode 0700) if missing; or why there is no such place."""
    base = os.environ.get("XDG_RUNTIME_DIR", "")
    if base and os.path.isabs(base) and os.path.isdir(base):
        directory = Path(base) / "passflow"
    else:
        directory = Path(tempfile.gettempdir()) / f"passflow-{os.getuid()}"
    try:
        directory.mkdir(mode=0o700, exist_ok=True)
    except OSError as err:
        return f"cannot make the server's directory '{directory}' ({err.strerror})"
    key = json.dumps([identity(), preloaded()], sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    path = directory / f"opt-server-{digest}.sock"
    if len(os.fsencode(path)) >= _SOCKET_PATH_LIMIT:
        return f"the socket path '{path}' is too long for a unix socket"
    return path


def start_server(path: str) -> str | None:
    """Start a detached `passflow-opt-server --auto` on `path` (None), or say
    why it could not be started. It inherits this process's interpreter and
    environment, so that it serves this client; a second one started
    meanwhile for the same path exits (the first holds the path's lock)."""
    import subprocess  # only the run that starts a server needs it

    idle = os.environ.get(IDLE_ENV) or f"{DEFAULT_IDLE:g}"
    argv = [
        sys.executable,
        "-m",
        "passflow.tools.opt_server",
        "--auto",
        f"--idle-timeout={idle}",
        *(f"--preload={name}" for name in preloaded()),
        path,
    ]
    environment = {k: v for k, v in os.environ.items() if k != SERVER_ENV}
    try:
        subprocess.Popen(
            argv,
            cwd="/",
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as err:
        return f"cannot start passflow-opt-server ({err.strerror or err})"
    return None
