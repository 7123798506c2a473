"""The result cache's shared tier (`--cache-remote`) against real servers:
Debian's redis-server (on a Unix socket) and nginx serving an HTTP cache
(WebDAV `PUT`, the layout of bazel-remote and ccache's HTTP storage), each
started here in a temporary directory and stopped after the test.

A second "machine" (an empty local cache, the same remote and key) prints
what a run without the cache prints, from the remote's entries; entries the
key did not sign are never printed; without a key the remote is not used; a
read-only machine writes nothing; a remote that is down costs one note."""

from __future__ import annotations

import hashlib
import http.server
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from remote_servers import free_port, http_cache, redis_server
from test_cache import tool
from test_sliced import module

from passflow.cache.remote import (
    PACK_MIN,
    HttpStore,
    RedisStore,
    RemoteError,
    RemoteTier,
    packs_of,
    read_key_file,
)

PIPELINE = "builtin.module(func.func(canonicalize,cse))"


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    with redis_server(tmp_path) as url:
        yield url


@pytest.fixture
def http_url(tmp_path: Path) -> Iterator[str]:
    with http_cache(tmp_path) as url:
        yield url


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "team.key"
    path.write_text("0123456789abcdef-the-team-key\n")
    path.chmod(0o600)
    return path


def _run(source: Path, cache: Path, *flags: str) -> tuple[int, str, str]:
    return tool(
        [
            str(source),
            f"--pass-pipeline={PIPELINE}",
            f"--cache={cache}",
            "--executor=process",
            "--jobs=2",
            *flags,
        ]
    )


def _hits(stats: str) -> tuple[int, int]:
    line = next(line for line in stats.splitlines() if line.startswith("lookups:"))
    hits = int(line.split(": ")[2].split(" hits")[0])
    misses = int(line.split(", ")[1].split(" misses")[0])
    return hits, misses


@pytest.mark.parametrize("backend", ["redis_url", "http_url"])
def test_a_second_machine_prints_the_uncached_output_from_the_remote(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path, key_file: Path
) -> None:
    url: str = request.getfixturevalue(backend)
    source = tmp_path / "input.mlir"
    source.write_text(module(40))
    plain = tool([str(source), f"--pass-pipeline={PIPELINE}"])
    remote = (f"--cache-remote={url}", f"--cache-remote-key-file={key_file}")
    assert _run(source, tmp_path / "ci", *remote) == plain  # CI writes
    status, out, err = _run(
        source,
        tmp_path / "laptop",
        *remote,
        "--cache-remote-read-only",
        "--cache-stats",
    )
    assert (status, out[: len(plain[1])], err) == plain
    stats = out[len(plain[1]) :]
    hits, misses = _hits(stats)
    assert misses == 0 and hits == 40  # every piece came from the remote
    assert f"remote: {url}, read-only: 40 entries read, 0 refused" in stats
    # A remote hit is kept locally: the next run needs no remote at all.
    assert _run(source, tmp_path / "laptop") == plain


def test_entries_signed_with_another_key_are_never_printed(
    redis_url: str, tmp_path: Path, key_file: Path
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(module(12))
    plain = tool([str(source), f"--pass-pipeline={PIPELINE}"])
    attacker_key = tmp_path / "attacker.key"
    attacker_key.write_text("not-the-team-key-at-all-0000")
    attacker_key.chmod(0o600)
    # The attacker computes the right keys (they are no secret) and writes
    # entries with other contents, signed with their own key.
    assert _run(source, tmp_path / "attacker", f"--cache-remote={redis_url}",
                f"--cache-remote-key-file={attacker_key}") == plain  # fmt: skip
    store = RedisStore(redis_url)
    stored = store.get_many(store.names())
    assert stored
    store.put_many(
        {
            name: value.replace(b"arith.muli", b"evil.op")
            for name, value in stored.items()
        }
    )
    store.close()
    status, out, err = _run(
        source, tmp_path / "victim", f"--cache-remote={redis_url}",
        f"--cache-remote-key-file={key_file}",
    )  # fmt: skip
    assert (status, out) == plain[:2]
    assert "evil.op" not in out
    assert "remote cache entries refused: not signed with this key" in err


def test_without_a_key_the_remote_is_not_used(
    redis_url: str, tmp_path: Path, key_file: Path
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(module(8))
    plain = tool([str(source), f"--pass-pipeline={PIPELINE}"])
    assert _run(source, tmp_path / "ci", f"--cache-remote={redis_url}",
                f"--cache-remote-key-file={key_file}") == plain  # fmt: skip
    env = os.environ.pop("PASSFLOW_CACHE_REMOTE_KEY_FILE", None)
    try:
        status, out, err = _run(
            source, tmp_path / "other", f"--cache-remote={redis_url}", "--cache-stats"
        )
    finally:
        if env is not None:
            os.environ["PASSFLOW_CACHE_REMOTE_KEY_FILE"] = env
    assert status == 0 and out.startswith(plain[1])
    assert _hits(out[len(plain[1]) :]) == (0, 8)  # nothing read from the remote
    assert err == (
        "passflow-opt: note: the remote cache is neither read nor written without "
        "its key: give --cache-remote-key-file=FILE or PASSFLOW_CACHE_REMOTE_KEY_FILE\n"
    )


def test_a_read_only_machine_writes_nothing(
    redis_url: str, tmp_path: Path, key_file: Path
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(module(6))
    assert _run(source, tmp_path / "laptop", f"--cache-remote={redis_url}",
                f"--cache-remote-key-file={key_file}",
                "--cache-remote-read-only")[0] == 0  # fmt: skip
    store = RedisStore(redis_url)
    try:
        assert store.names() == []
    finally:
        store.close()


@pytest.mark.parametrize(
    "url", ["redis://127.0.0.1:{port}/0", "http://127.0.0.1:{port}/x"]
)
def test_a_remote_that_is_down_costs_one_note(
    url: str, tmp_path: Path, key_file: Path
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(module(10))
    plain = tool([str(source), f"--pass-pipeline={PIPELINE}"])
    down = url.format(port=free_port())  # nothing listens there
    status, out, err = _run(
        source,
        tmp_path / "c",
        f"--cache-remote={down}",
        f"--cache-remote-key-file={key_file}",
    )
    assert (status, out) == plain[:2]
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(
        f"passflow-opt: note: the remote cache '{down}' failed ("
    )
    assert lines[0].endswith("): going on without it")


def test_a_redis_remote_that_is_down_loads_no_client(
    tmp_path: Path, key_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The client (a tenth of a second to import) loads only once the server
    took a connection: with `redis` unimportable, a dead server's note is
    the refused connection's."""
    monkeypatch.setitem(sys.modules, "redis", None)
    source = tmp_path / "input.mlir"
    source.write_text(module(3))
    down = f"redis://127.0.0.1:{free_port()}/0"
    status, _, err = _run(
        source, tmp_path / "c", f"--cache-remote={down}",
        f"--cache-remote-key-file={key_file}",
    )  # fmt: skip
    assert status == 0
    assert f"the remote cache '{down}' failed (" in err
    assert "Connection refused" in err and "redis" not in err.replace(down, "")


def test_the_key_file_must_be_yours_alone_and_long_enough(tmp_path: Path) -> None:
    path = tmp_path / "k"
    path.write_text("0123456789abcdef-long-enough")
    path.chmod(0o620)
    with pytest.raises(RemoteError, match=r"is not yours alone .*chmod 600"):
        read_key_file(str(path))
    path.chmod(0o600)
    assert read_key_file(str(path)) == b"0123456789abcdef-long-enough"
    path.write_text("short")
    with pytest.raises(RemoteError, match="holds 5 bytes; a key needs at least 16"):
        read_key_file(str(path))
    with pytest.raises(RemoteError, match="cannot read the remote cache key file"):
        read_key_file(str(tmp_path / "missing"))


def test_a_bad_remote_url_is_one_error(tmp_path: Path, key_file: Path) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(module(2))
    status, out, err = _run(
        source, tmp_path / "c", "--cache-remote=ftp://example/x",
        f"--cache-remote-key-file={key_file}",
    )  # fmt: skip
    assert (status, out) == (1, "")
    assert err == (
        "passflow-opt: --cache-remote: 'ftp://example/x' is not a redis://, "
        "rediss://, unix://, http:// or https:// URL\n"
    )


class _Garbage(http.server.BaseHTTPRequestHandler):
    """Answers every request with 200 and bytes that are no cache entry."""

    def do_GET(self) -> None:
        body = b"passflow-1 " + b"0" * 64 + b" " + b"1" * 64 + b"\n<html>oops</html>"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self) -> None:
        self.send_response(500)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        del format, args


def test_a_remote_that_answers_garbage_or_nothing_is_never_printed(
    tmp_path: Path, key_file: Path
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(module(6))
    plain = tool([str(source), f"--pass-pipeline={PIPELINE}"])
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Garbage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/x"
        status, out, err = _run(
            source, tmp_path / "g", f"--cache-remote={url}",
            f"--cache-remote-key-file={key_file}",
        )  # fmt: skip
    finally:
        server.shutdown()
    assert (status, out) == plain[:2]
    assert "6 remote cache entries refused" in err
    assert f"the remote cache '{url}' failed (HTTP 500" in err  # the write
    # A server that takes the connection and never answers: one read timeout.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        url = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"
        status, out, err = _run(
            source, tmp_path / "s", f"--cache-remote={url}",
            f"--cache-remote-key-file={key_file}",
        )  # fmt: skip
    assert (status, out) == plain[:2]
    assert err.count("\n") == 1
    assert err.startswith(f"passflow-opt: note: the remote cache '{url}' failed (")


def _gets(log: Path, count: int, answered: str = "") -> list[str]:
    """The `GET`s nginx logged in `log` (those it answered with the status
    `answered`, if given), once `count` are (it logs a request as it ends,
    maybe after the client has its answer)."""
    lines: list[str] = []
    for _ in range(100):
        lines = [
            line
            for line in log.read_text().splitlines()
            if '"GET ' in line and f'" {answered}' in line
        ]
        if len(lines) >= count:
            break
        time.sleep(0.05)
    return lines


def test_an_http_lookup_is_one_get_of_the_record_and_its_entry(
    http_url: str, tmp_path: Path
) -> None:
    """Written: the entry under `/cas/` and, under `/ac/`, its signed record
    followed by it; read: one `GET` of `/ac/` (a record alone, as an older
    writer left it, sends the lookup on to `/cas/`)."""
    secret = b"0123456789abcdef-the-team-key"
    entries = {f"key{i}": f'{{"entry":{i}}}' for i in range(3)}
    writer = HttpStore(http_url)
    RemoteTier(lambda: writer, secret, url=http_url).publish(entries)
    store = tmp_path / "nginx" / "store" / "team"
    assert len(list((store / "ac").iterdir())) == len(list((store / "cas").iterdir()))
    log = tmp_path / "nginx" / "access.log"

    def gets(count: int) -> list[str]:
        return sorted(line.split('"')[1].split("/")[2] for line in _gets(log, count))

    reader = HttpStore(http_url)
    tier = RemoteTier(lambda: reader, secret, url=http_url)
    assert tier.fetch(list(entries)) == entries
    assert gets(3) == ["ac"] * 3
    for record in (store / "ac").iterdir():  # the records alone
        record.write_bytes(record.read_bytes().partition(b"\n")[0] + b"\n")
    assert tier.fetch(list(entries)) == entries
    assert gets(9) == ["ac"] * 6 + ["cas"] * 3
    writer.close()
    reader.close()


def _key(index: int) -> str:
    return hashlib.sha256(str(index).encode()).hexdigest()


def test_packs_are_cut_by_content_so_an_edit_changes_only_its_own() -> None:
    run = [_key(i) for i in range(1000)]
    packs = packs_of(run)
    assert [key for pack in packs for key in pack] == run  # each key once, in order
    assert 15 < len(packs) < 70 and max(map(len, packs)) <= 128
    edited = [*run[:500], _key(-1), *run[501:]]
    changed = set(packs_of(edited)) - set(packs)
    assert len(changed) <= 2  # the edited key's pack (and the next, at a cut)
    assert any(_key(-1) in pack for pack in changed)
    inserted = [*run[:500], _key(-2), *run[500:]]
    assert len(set(packs_of(inserted)) - set(packs)) <= 2
    assert packs_of(run[: PACK_MIN - 1]) == []  # few keys travel one by one
    assert packs_of([*run[:100], *run[:100]]) == packs_of(run[:100])


def test_a_second_machine_reads_a_large_module_in_packs(
    http_url: str, tmp_path: Path, key_file: Path
) -> None:
    """A run of 200 functions, written by CI, is read back by a machine with
    an empty cache in one `GET` a pack (about 8), not one a function; after
    CI ran an edit of one function, which rewrites that function's pack whole
    from its local cache, the same holds for the edited module."""
    source = tmp_path / "input.mlir"
    remote = (f"--cache-remote={http_url}", f"--cache-remote-key-file={key_file}")
    log = tmp_path / "nginx" / "access.log"
    for round_, special in enumerate(
        ({}, {100: "  %edited = arith.constant 5 : i32\n"})
    ):
        source.write_text(module(200, special))
        plain = tool([str(source), f"--pass-pipeline={PIPELINE}"])
        assert _run(source, tmp_path / "ci", *remote) == plain  # CI writes
        # Found ones only: CI's lookups (all misses) may be logged late.
        before = len(_gets(log, 0, "200"))
        status, out, err = _run(
            source, tmp_path / f"laptop{round_}", *remote,
            "--cache-remote-read-only", "--cache-stats",
        )  # fmt: skip
        assert (status, out[: len(plain[1])], err) == plain
        stats = out[len(plain[1]) :]
        assert _hits(stats) == (200, 0)
        packs = int(stats.split("entries read (")[1].split(" packs)")[0])
        assert 3 <= packs <= 20
        gets = len(_gets(log, before + packs, "200")) - before
        assert packs <= gets <= packs + 1  # the packs (and the printed shell)


@pytest.mark.parametrize("backend", ["redis_url", "http_url"])
def test_a_forged_or_moved_pack_is_never_read(
    backend: str, request: pytest.FixtureRequest
) -> None:
    """A pack another key signed, a pack with an entry changed, and a pack
    copied under another pack's name are refused, and what they hold is
    then asked for one by one."""
    url: str = request.getfixturevalue(backend)
    secret = b"0123456789abcdef-the-team-key"
    run = [_key(i) for i in range(300)]
    entries = {key: f'{{"entry":"{key[:8]}"}}' for key in run}
    make = RedisStore if backend == "redis_url" else HttpStore
    store = make(url)
    RemoteTier(lambda: store, b"another key, not the team's", url=url).publish(
        {key: '{"entry":"evil"}' for key in run}, run
    )
    # Only the attacker's packs and entries are there: nothing is read.
    tier = RemoteTier(lambda: store, secret, url=url)
    assert tier.fetch(run, run) == {}
    assert tier.refused == len(packs_of(run)) + len(run) and tier.packs == 0
    RemoteTier(lambda: store, secret, url=url).publish(entries, run)
    tier = RemoteTier(lambda: store, secret, url=url)
    assert tier.fetch(run, run) == entries and tier.packs == len(packs_of(run))
    first, second = packs_of(run)[:2]
    first_name = hashlib.sha256(("pack:" + hashlib.sha256(
        "\n".join(first).encode()).hexdigest()).encode()).hexdigest()  # fmt: skip
    second_name = hashlib.sha256(("pack:" + hashlib.sha256(
        "\n".join(second).encode()).hexdigest()).encode()).hexdigest()  # fmt: skip
    value = store.get_many([first_name])[first_name]
    store.put_many({second_name: value})  # the first pack, under the second's name
    damaged = value.replace(b"entry", b"evil!", 1)
    assert damaged != value
    store.put_many({first_name: damaged})  # an entry changed, the record kept
    tier = RemoteTier(lambda: store, secret, url=url)
    assert tier.fetch(run, run) == entries  # read one by one instead
    assert tier.refused == 2 and tier.packs == len(packs_of(run)) - 2
    assert "2 remote cache entries refused" in tier.notes[0]
    store.close()


class _MemoryStore:
    """A remote store in a dict: what the generated test below needs of one
    (the servers' own behaviour is what the tests above run against)."""

    def __init__(self) -> None:
        self.values: dict[str, bytes] = {}

    def get_many(self, names: Sequence[str]) -> dict[str, bytes]:
        return {name: self.values[name] for name in names if name in self.values}

    def put_many(self, items: Mapping[str, bytes]) -> None:
        self.values.update(items)

    def close(self) -> None:
        pass


_RUNS = st.lists(st.integers(0, 300), min_size=80, max_size=250)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(_RUNS, st.integers(0, 3)), min_size=1, max_size=4),
    st.integers(0, 3),
    st.lists(st.tuples(st.integers(0, 249), st.integers(-1, 300)), max_size=6),
    st.integers(0, 3),
)
def test_packs_give_what_one_by_one_gives(
    writes: list[tuple[list[int], int]],
    which: int,
    edits: list[tuple[int, int]],
    missing: int,
) -> None:
    """Writers publish runs of generated keys (each computing some of them,
    holding the rest from before, as a local store does); a reader missing
    some keys of one of those runs, edited (keys replaced or dropped), gets
    through packs exactly what it gets one by one: each entry published for
    those keys, never another."""
    read = list(writes[which % len(writes)][0])
    for position, index in edits:
        if position < len(read):
            read[position : position + 1] = [] if index < 0 else [index]
    secret = b"0123456789abcdef-the-team-key"
    store = _MemoryStore()

    def text(index: int) -> str:
        return f'{{"entry":{index}}}'

    held: dict[str, str] = {}
    for run, seed in writes:
        keys = [_key(i) for i in run]
        computed = {
            _key(i): text(i) for i in run if (i + seed) % 3 and _key(i) not in held
        }
        writer = RemoteTier(lambda: store, secret)
        writer.publish(
            computed, keys, lambda wanted: {k: held[k] for k in wanted if k in held}
        )
        held.update(computed)
    keys = [_key(i) for i in read]
    wanted = [key for i, key in zip(read, keys, strict=True) if i % 4 != missing]
    expected = {key: held[key] for key in wanted if key in held}
    packed = RemoteTier(lambda: store, secret)
    assert packed.fetch(wanted, keys) == expected
    assert RemoteTier(lambda: store, secret).fetch(wanted) == expected
    assert packed.refused == 0
    event(f"packs read: {'some' if packed.packs else 'none'}")
