"""The result cache's shared tier (`--cache-remote=URL`): entries a team's CI
wrote, read by every machine that holds the team's key.

Two backends, both servers people already run:

- **Redis** (`redis://host:port/db`, `rediss://...`, `unix:///path/to.sock`),
  through the maintained `redis` client: an entry is one string value under
  `passflow:1:<sha256 of the key>`; a lookup of many keys is one `MGET`;
- an **HTTP cache** (`http://host:port/prefix`, `https://...`) in the layout
  bazel-remote and ccache's HTTP storage use: the entry's bytes under
  `/cas/<their sha256>`, and under `/ac/<sha256 of the key>` a signed record
  of them followed by the bytes, so that a lookup is one `GET` (as ccache
  keeps a result under `/ac/`); a record alone sends the lookup on to `/cas/`
  (`GET` and `PUT`; an nginx WebDAV location serves it too).

**Packs.** A run's entries also travel in packs (`packs_of`): its keys in
order, cut where a key's digest says so (content-defined, as rsync and casync
cut files), each pack one signed entry holding its pieces' entries. A writer
writes every pack that holds an entry it computed; a reader asks first for the
packs that hold what it misses, then one by one for what they did not give. So
a machine with an empty local cache reads a run of 1,000 functions in some 30
requests rather than 1,000, and an edit changes the one pack it falls in.

**Trust.** Whoever can write to the remote can put anything there, so an entry
is read only when it carries an HMAC-SHA256, under the team's shared key, of
the cache key and of the entry's content; the key comes from the file that
`--cache-remote-key-file` or `PASSFLOW_CACHE_REMOTE_KEY_FILE` names (never
from the command line, where `ps` shows it), and that file must be the user's
own and not writable by others. Without a key, the remote is neither read nor
written. An entry that fails its check is a miss (counted, one note), never
output; what is read is JSON data, decoded by the store, never code.

**Bounded.** Each request has a connect and a read timeout
(`CONNECT_TIMEOUT`, `READ_TIMEOUT`), and the Redis client loads only once
its server took a connection; the first failure (down, slow, refused,
garbage) costs one note and turns the remote off for the rest of the run, so a
dead remote costs at most one timeout, and the run goes on with the local
cache.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import re
import socket
import stat
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, cast
from urllib.parse import urlsplit

from passflow.diagnostics import PassflowError
from passflow.owner_only import GROUP_OR_OTHERS_WRITE, not_owner_only

__all__ = [
    "CONNECT_TIMEOUT",
    "KEY_FILE_VARIABLE",
    "PACK_MIN",
    "READ_TIMEOUT",
    "HttpStore",
    "RedisStore",
    "RemoteError",
    "RemoteStore",
    "RemoteTier",
    "open_remote",
    "packs_of",
    "read_key_file",
]

CONNECT_TIMEOUT = 1.0
"""Seconds to reach the remote before it counts as down."""

READ_TIMEOUT = 3.0
"""Seconds for one answer before the remote counts as too slow."""

KEY_FILE_VARIABLE = "PASSFLOW_CACHE_REMOTE_KEY_FILE"

PACK_MIN = 64
"""Keys a lookup's run holds at least before its entries travel in packs:
below, the requests a pack saves are few."""

_PACK_SPAN = 32
_PACK_MAX = 128
_PACK = "pack:"
_DOMAIN = b"passflow-cache-remote-1\0"
_REDIS_PREFIX = "passflow:1:"
_MIN_KEY_BYTES = 16
_AC_RECORD = re.compile(rb"\Apassflow-1 ([0-9a-f]{64}) ([0-9a-f]{64})\n?\Z")


class RemoteError(PassflowError):
    """The remote cache cannot be used as given (a bad URL, a key file that
    is missing, too short or not the user's own)."""


class RemoteStore(Protocol):
    """Raw storage of a backend: bytes by name; raises `OSError` (or a
    client's own error, which `RemoteTier` treats alike) when it fails."""

    def get_many(self, names: Sequence[str]) -> dict[str, bytes]: ...

    def put_many(self, items: Mapping[str, bytes]) -> None: ...

    def close(self) -> None: ...


def _name(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def _mac(secret: bytes, key: str, digest: str) -> str:
    message = _DOMAIN + key.encode() + b"\0" + digest.encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def packs_of(run: Sequence[str]) -> list[tuple[str, ...]]:
    """The packs the entries of `run` (a lookup's keys, hex digests, in
    program order) travel in: the keys, each once, cut after every key whose
    last four hex digits are a multiple of 32 (and after 128 keys without
    one). A cut depends on the keys since the last one only, so where an edit
    leaves the pieces alone their packs are the same. None below `PACK_MIN`."""
    keys = list(dict.fromkeys(run))
    if len(keys) < PACK_MIN:
        return []
    packs: list[tuple[str, ...]] = []
    start = 0
    for index, key in enumerate(keys):
        if int(key[-4:], 16) % _PACK_SPAN == 0 or index + 1 - start == _PACK_MAX:
            packs.append(tuple(keys[start : index + 1]))
            start = index + 1
    if start < len(keys):
        packs.append(tuple(keys[start:]))
    return packs


def _pack_key(pack: Sequence[str]) -> str:
    return _PACK + hashlib.sha256("\n".join(pack).encode()).hexdigest()


def read_key_file(path: str) -> bytes:
    """The shared key in `path`: the user's own file, not writable by group
    or others, at least 16 bytes (surrounding whitespace dropped)."""
    try:
        problem = not_owner_only(Path(path), GROUP_OR_OTHERS_WRITE)
        if problem is None and not stat.S_ISREG(os.stat(path).st_mode):
            problem = "not a regular file"
        data = Path(path).read_bytes().strip() if problem is None else b""
    except OSError as err:
        raise RemoteError(
            f"cannot read the remote cache key file '{path}': {err.strerror or err}"
        ) from None
    if problem is not None:
        raise RemoteError(
            f"the remote cache key file '{path}' is not yours alone ({problem}): "
            f"chmod 600 it"
        )
    if len(data) < _MIN_KEY_BYTES:
        raise RemoteError(
            f"the remote cache key file '{path}' holds {len(data)} bytes; a key "
            f"needs at least {_MIN_KEY_BYTES} (make one with "
            "`head -c 32 /dev/urandom | base64 > FILE`)"
        )
    return data


def _reachable(url: str) -> None:
    """Raise `OSError` unless the Redis server `url` names takes a connection
    within `CONNECT_TIMEOUT`: a server that is down costs no import of the
    client (a tenth of a second, most of it the asyncio it loads)."""
    parts = urlsplit(url)
    if parts.scheme == "unix":
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(CONNECT_TIMEOUT)
        with probe:
            probe.connect(parts.path)
        return
    address = (parts.hostname or "localhost", parts.port or 6379)
    socket.create_connection(address, timeout=CONNECT_TIMEOUT).close()


@dataclass
class RedisStore:
    """A Redis server: each name one string value under `passflow:1:`."""

    url: str

    def __post_init__(self) -> None:
        _reachable(self.url)
        import redis  # only when a redis remote is asked for, and answers

        connect = cast("Callable[..., redis.Redis]", redis.Redis.from_url)  # pyright: ignore[reportUnknownMemberType]
        self._redis = connect(
            self.url,
            socket_connect_timeout=CONNECT_TIMEOUT,
            socket_timeout=READ_TIMEOUT,
        )

    def names(self) -> list[str]:
        """Every name stored (what an operator lists; the tests too)."""
        listed = cast("Callable[[str], list[bytes]]", self._redis.keys)  # pyright: ignore[reportUnknownMemberType]
        return sorted(
            key.decode().removeprefix(_REDIS_PREFIX)
            for key in listed(_REDIS_PREFIX + "*")
        )

    def get_many(self, names: Sequence[str]) -> dict[str, bytes]:
        if not names:
            return {}
        values = self._redis.mget([f"{_REDIS_PREFIX}{name}" for name in names])
        found: dict[str, bytes] = {}
        for name, value in zip(names, values, strict=True):
            if isinstance(value, bytes):
                found[name] = value
        return found

    def put_many(self, items: Mapping[str, bytes]) -> None:
        if items:
            self._redis.mset(
                {f"{_REDIS_PREFIX}{name}": value for name, value in items.items()}
            )

    def close(self) -> None:
        self._redis.close()


@dataclass
class HttpStore:
    """An HTTP cache: `GET`/`PUT` of `<prefix>/ac/<name>` and
    `<prefix>/cas/<sha256>`, on a few kept-alive connections."""

    url: str
    connections: int = 8

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        self._https = parts.scheme == "https"
        self._host = parts.hostname or "localhost"
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._pool = ThreadPoolExecutor(self.connections, "passflow-remote")
        self._local: dict[int, object] = {}

    def _connection(self) -> object:
        import http.client
        import threading

        ident = threading.get_ident()
        found = self._local.get(ident)
        if found is None:
            kind = (
                http.client.HTTPSConnection
                if self._https
                else http.client.HTTPConnection
            )
            found = kind(self._host, self._port, timeout=CONNECT_TIMEOUT)
            self._local[ident] = found
        return found

    def _request(
        self, method: str, path: str, body: bytes | None = None
    ) -> bytes | None:
        import http.client

        connection = self._connection()
        assert isinstance(connection, http.client.HTTPConnection)
        for attempt in (0, 1):  # a kept-alive connection the server closed: once more
            try:
                connection.request(method, self._prefix + path, body=body)
                if connection.sock is not None:
                    connection.sock.settimeout(READ_TIMEOUT)
                response = connection.getresponse()
                data = response.read()
            except (
                http.client.RemoteDisconnected,
                BrokenPipeError,
                ConnectionResetError,
            ):
                connection.close()
                if attempt:
                    raise
                continue
            if method == "GET" and response.status == 404:
                return None
            if response.status >= 300:
                raise OSError(
                    f"HTTP {response.status} {response.reason} for {method} {path}"
                )
            return data
        return None

    def _get(self, name: str) -> tuple[str, bytes | None]:
        value = self._request("GET", f"/ac/{name}")
        if value is None:
            return name, None
        record, _, content = value.partition(b"\n")
        match = _AC_RECORD.match(record)
        if match is None:
            return name, value  # the tier refuses it, and says so
        if content:
            return name, value  # the entry beside its record: one request
        content = self._request("GET", f"/cas/{match.group(1).decode()}")
        if content is None:
            return name, None
        return name, record + b"\n" + content

    def get_many(self, names: Sequence[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        for answers in self._pool.map(self._get_each, self._shares(names)):
            for name, value in answers:
                if value is not None:
                    found[name] = value
        return found

    def _get_each(self, names: Sequence[str]) -> list[tuple[str, bytes | None]]:
        return [self._get(name) for name in names]

    def _shares(self, names: Sequence[str]) -> list[Sequence[str]]:
        """`names` cut into one share per connection: a task per connection
        rather than per name (the pool's own cost is per task)."""
        return [names[i :: self.connections] for i in range(self.connections)]

    def _put(self, item: tuple[str, bytes]) -> None:
        name, value = item
        record, _, content = value.partition(b"\n")
        match = _AC_RECORD.match(record)
        assert match is not None
        self._request("PUT", f"/cas/{match.group(1).decode()}", content)
        self._request("PUT", f"/ac/{name}", value)

    def put_many(self, items: Mapping[str, bytes]) -> None:
        list(self._pool.map(self._put, items.items()))

    def close(self) -> None:
        self._pool.shutdown(wait=True)


@dataclass
class RemoteTier:
    """A remote store seen through the team's key: `fetch` returns only
    entries whose HMAC checks out, `publish` signs what it writes (unless
    read-only). The first failure turns it off for the run, with one note."""

    connect: Callable[[], RemoteStore]
    """Makes the store on first use: a run the local cache answers in full
    never loads a client nor opens a connection."""
    secret: bytes
    read_only: bool = False
    url: str = ""
    notes: list[str] = field(default_factory=lambda: list[str]())
    hits: int = 0
    refused: int = 0
    packs: int = 0
    """Packs read (`packs_of`): their entries count in `hits`."""
    _off: bool = False
    _store: RemoteStore | None = None

    @property
    def store(self) -> RemoteStore:
        if self._store is None:
            self._store = self.connect()
        return self._store

    def _failed(self, err: BaseException) -> None:
        self._off = True
        self.notes.append(
            f"the remote cache '{self.url}' failed ({err}): going on without it"
        )

    def fetch(self, keys: Sequence[str], run: Sequence[str] = ()) -> dict[str, str]:
        """The entries (JSON text) the remote holds for `keys`, authenticated:
        from the packs of `run` (the lookup's keys, `keys` among them) that
        hold any of `keys`, then one by one for what they did not give."""
        if self._off or not keys:
            return {}
        wanted = dict.fromkeys(keys)
        packs = [pack for pack in packs_of(run) if not wanted.keys().isdisjoint(pack)]
        found: dict[str, str] = {}
        refused = 0
        raw: dict[str, bytes] = {}
        rest: dict[str, str] = {}
        try:
            if packs:
                named = {_name(_pack_key(pack)): pack for pack in packs}
                for name, value in self.store.get_many(list(named)).items():
                    items = self._unpacked(named[name], value)
                    if items is None:
                        refused += 1
                        continue
                    self.packs += 1
                    found.update(
                        (key, text) for key, text in items.items() if key in wanted
                    )
            rest = {_name(key): key for key in wanted if key not in found}
            raw = self.store.get_many(list(rest)) if rest else {}
        except Exception as err:  # any client error: the remote is not usable
            self._failed(err)
        for name, value in raw.items():
            text = self._opened(rest[name], value)
            if text is None:
                refused += 1
            else:
                found[rest[name]] = text
        if refused:
            self.refused += refused
            self.notes.append(
                f"{refused} remote cache entr{'y' if refused == 1 else 'ies'} "
                "refused: not signed with this key (or damaged)"
            )
        self.hits += len(found)
        return found

    def _opened(self, key: str, value: bytes) -> str | None:
        """The text `value` holds for `key` if its record is this key's
        signature of it; else None."""
        record, _, content = value.partition(b"\n")
        match = _AC_RECORD.match(record)
        digest = hashlib.sha256(content).hexdigest()
        if (
            match is None
            or match.group(1).decode() != digest
            or not hmac.compare_digest(
                match.group(2).decode(), _mac(self.secret, key, digest)
            )
        ):
            return None
        try:
            return content.decode()
        except UnicodeDecodeError:
            return None

    def _unpacked(self, pack: tuple[str, ...], value: bytes) -> dict[str, str] | None:
        """The entries (key → JSON text) the pack `value` holds; None unless
        it is this key's signature of a pack of the keys `pack`."""
        text = self._opened(_pack_key(pack), value)
        if text is None:
            return None
        try:
            items: object = json.loads(text)
        except ValueError:
            return None
        if not isinstance(items, dict):
            return None
        entries = cast("dict[str, object]", items)
        if not all(isinstance(entry, str) for entry in entries.values()):
            return None
        return cast("dict[str, str]", entries)

    def _signed(self, key: str, text: str) -> bytes:
        content = text.encode()
        digest = hashlib.sha256(content).hexdigest()
        record = f"passflow-1 {digest} {_mac(self.secret, key, digest)}"
        return record.encode() + b"\n" + content

    def publish(
        self,
        entries: Mapping[str, str],
        run: Sequence[str] = (),
        held: Callable[[Sequence[str]], Mapping[str, str]] | None = None,
    ) -> None:
        """Sign and write `entries` (key → JSON text), unless read-only; and,
        given the keys of their run, each of its packs that holds one of
        them, with the pack's other entries as `held` (the local store) has them."""
        if self._off or self.read_only or not entries:
            return
        items = {_name(key): self._signed(key, text) for key, text in entries.items()}
        packs = [pack for pack in packs_of(run) if not entries.keys().isdisjoint(pack)]
        others = [key for pack in packs for key in pack if key not in entries]
        known = {**(held(others) if held is not None and others else {}), **entries}
        for pack in packs:
            content = {key: known[key] for key in pack if key in known}
            pack_key = _pack_key(pack)
            items[_name(pack_key)] = self._signed(
                pack_key, json.dumps(content, separators=(",", ":"))
            )
        try:
            self.store.put_many(items)
        except Exception as err:  # any client error: the remote is not usable
            self._failed(err)

    def summary(self) -> str:
        """`--cache-stats`' line: where, what it gave, what it refused."""
        mode = ", read-only" if self.read_only else ""
        state = ", off after a failure" if self._off else ""
        packs = f" ({self.packs} packs)" if self.packs else ""
        return (
            f"{self.url}{mode}: {self.hits} entries read{packs}, "
            f"{self.refused} refused{state}"
        )

    def close(self) -> None:
        if self._store is not None:
            with contextlib.suppress(Exception):  # a dead connection: no news
                self._store.close()


def open_remote(
    url: str, key_file: str | None, *, read_only: bool
) -> RemoteTier | None:
    """The remote tier `url` names, or None (with the reason in `notes` of
    nobody: the caller says it) when no key file is given. Raises
    `RemoteError` for a URL it does not know or a key file it refuses."""
    scheme = urlsplit(url).scheme
    if scheme in ("redis", "rediss", "unix"):
        make: type[RedisStore] | type[HttpStore] = RedisStore
    elif scheme in ("http", "https"):
        make = HttpStore
    else:
        raise RemoteError(
            f"--cache-remote: '{url}' is not a redis://, rediss://, unix://, "
            "http:// or https:// URL"
        )
    path = key_file or os.environ.get(KEY_FILE_VARIABLE)
    if not path:
        return None
    secret = read_key_file(path)
    return RemoteTier(lambda: make(url), secret, read_only, url)
