"""Real servers for the remote cache tier, started in a temporary directory
and stopped on exit: Debian's redis-server on a Unix socket, and nginx
serving an HTTP cache (WebDAV `PUT` under a prefix, the layout of
bazel-remote and ccache's HTTP storage). The tests and `bench/cache_remote.py`
use them."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable, Generator
from pathlib import Path

__all__ = ["INSTALL", "free_port", "http_cache", "redis_server"]

REDIS = shutil.which("redis-server") or "/usr/bin/redis-server"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
INSTALL = (
    "apt-get install -y redis-server nginx-light "
    "(make test does it with CHROMIUM_INSTALL=yes)"
)


def free_port() -> int:
    """A loopback port nothing listens on (now)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _started(
    ready: Callable[[], bool], process: subprocess.Popen[bytes], what: str
) -> None:
    for _ in range(200):
        if ready():
            return
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"{what} did not start")


@contextlib.contextmanager
def _running(argv: list[str], ready: Callable[[], bool], what: str) -> Generator[None]:
    process = subprocess.Popen(
        argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _started(ready, process, what)
    try:
        yield
    finally:
        process.terminate()
        process.wait(10)


@contextlib.contextmanager
def redis_server(directory: Path) -> Generator[str]:
    """A redis-server on a Unix socket in `directory`; its URL."""
    assert os.access(REDIS, os.X_OK), f"{REDIS} is missing: {INSTALL}"
    sock = directory / "redis.sock"
    argv = [
        REDIS,
        "--port", "0",
        "--unixsocket", str(sock),
        "--unixsocketperm", "700",
        "--save", "",
        "--appendonly", "no",
        "--dir", str(directory),
    ]  # fmt: skip
    with _running(argv, sock.exists, "redis-server"):
        yield f"unix://{sock}"


@contextlib.contextmanager
def http_cache(directory: Path) -> Generator[str]:
    """nginx on a loopback port storing what is `PUT` under `/team/` (in
    `directory/nginx/store`, each request logged in `directory/nginx/access.log`);
    its URL."""
    assert os.access(NGINX, os.X_OK), f"{NGINX} is missing: {INSTALL}"
    root = directory / "nginx"
    (root / "store").mkdir(parents=True)
    port = free_port()
    temp = "".join(
        f"  {kind}_temp_path {root}/{kind};\n"
        for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    config = root / "nginx.conf"
    config.write_text(
        f"daemon off;\nworker_processes 1;\nuser root;\npid {root}/nginx.pid;\n"
        f"error_log {root}/error.log;\nevents {{}}\nhttp {{\n"
        f"  access_log {root}/access.log;\n"
        f"{temp}  server {{\n    listen 127.0.0.1:{port};\n    root {root}/store;\n"
        "    location /team/ {\n      dav_methods PUT;\n"
        "      create_full_put_path on;\n      client_max_body_size 64m;\n"
        "    }\n  }\n}\n"
    )

    def listening() -> bool:
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", port)) == 0

    with _running([NGINX, "-c", str(config), "-p", str(root)], listening, "nginx"):
        yield f"http://127.0.0.1:{port}/team"
