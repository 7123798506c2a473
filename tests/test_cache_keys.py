"""One rule, one place: the full run (`passflow.sliced.run`) and passflow-opt's
warm path (`passflow.tools.warm_cache`) compute a run's keys with the same
function, `passflow.cache.keys.run_keys`, and get the same keys for the same
chunk, over the lit corpus and generated modules.

The runs happen in a process of their own, whose registry holds passflow's
passes alone (as passflow-opt's does): there both paths key a pipeline of
passflow's own passes as `OWN_PIPELINE`.
"""

from __future__ import annotations

import ast
import contextlib
import json
import subprocess
import sys
from pathlib import Path

from test_cache import GENERATED
from test_sliced import LIT_CORPUS, module

import passflow
from passflow.cache.keys import RunKeys, known_run_keys, run_keys
from passflow.cache.sources import OWN_PIPELINE, source_files
from passflow.cache.store import KEPT_SCANS, ResultCache
from passflow.sliced.scan import SourceSlices, scan_text

DRIVER = """
import contextlib, io, json, sys
from passflow.sliced import run as sliced_run
from passflow.tools import opt, warm_cache

cache, pipeline, *files = sys.argv[1:]
seen = {"full": {}, "warm": {}}

def recording(path, real):
    def record(memo, code, name, slices, salt):
        keys = real(memo, code, name, slices, salt)
        seen[path][f"{name}:{slices.first_line}"] = [keys.run, keys.shell, *keys.pieces]
        return keys
    return record

sliced_run.run_keys = recording("full", sliced_run.run_keys)
warm_cache.run_keys = recording("warm", warm_cache.run_keys)
for file in files:
    argv = [file, "-p", pipeline, "--split-input-file", "--allow-unregistered-dialect",
            f"--cache={cache}"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            opt.main(argv)
        except SystemExit:
            pass
json.dump(seen, sys.stdout)
"""


def _keys_of_both_paths(
    files: list[Path], tmp_path: Path
) -> dict[str, dict[str, list[str]]]:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            DRIVER,
            str(tmp_path / "cache"),
            "builtin.module(func.func(canonicalize,cse))",
            *map(str, files),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        check=True,
    )
    return json.loads(done.stdout)


def test_the_full_and_the_warm_path_compute_the_same_keys(tmp_path: Path) -> None:
    generated: list[Path] = []
    for index, text in enumerate([*GENERATED, module(25), module(3) * 2]):
        path = tmp_path / f"generated{index}.mlir"
        path.write_text(text)
        generated.append(path)
    seen = _keys_of_both_paths([*LIT_CORPUS, *generated], tmp_path)
    full, warm = seen["full"], seen["warm"]
    both = full.keys() & warm.keys()
    assert len(both) > 100 and all(full[chunk] == warm[chunk] for chunk in both)
    # Every generated module was keyed by both.
    assert {f"{path}:1" for path in generated[:-1]} <= both


def test_one_function_computes_the_keys() -> None:
    """No module but `passflow.cache.keys` hashes a key together: the full
    path and the warm path import `run_keys` and nothing else of it."""
    source = Path(passflow.__file__).parent
    for relative in ("sliced/run.py", "tools/warm_cache.py"):
        tree = ast.parse((source / relative).read_text())
        imported = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.module == "passflow.cache.keys"
            for alias in node.names
        }
        assert "run_keys" in imported, relative
        assert "hashlib" not in (source / relative).read_text(), relative


def test_the_code_identity_is_every_source_file_but_bytecode_and_stubs(
    tmp_path: Path,
) -> None:
    # xDSL's own tests write `.pyi` stubs into its package: no key may move.
    (tmp_path / "pkg" / "__pycache__").mkdir(parents=True)
    for name in ("pkg/a.py", "pkg/b.irdl", "pkg/a.pyi", "pkg/__pycache__/a.pyc"):
        (tmp_path / name).write_text("x")
    assert source_files(tmp_path) == [
        str(tmp_path / "pkg" / "a.py"),
        str(tmp_path / "pkg" / "b.irdl"),
    ]


def test_a_store_keeps_the_keys_of_the_last_texts_it_saw(tmp_path: Path) -> None:
    """`run_keys` keeps what it computed: a later store of the directory
    finds the same keys for the same text and arguments, and none for
    another salt, name or first line; the `KEPT_SCANS` most recent stay."""
    code = OWN_PIPELINE
    texts = [module(6 + i) for i in range(KEPT_SCANS + 1)]
    with contextlib.closing(ResultCache(tmp_path)) as store:
        computed = [
            run_keys(store, code, "in.mlir", scanned(text), "salt") for text in texts
        ]
    assert computed[0].referenced  # the generated module's callees
    with contextlib.closing(ResultCache(tmp_path)) as store:
        kept = [known_run_keys(store, code, "in.mlir", t, 1, "salt") for t in texts]
        assert kept[0] is None  # the oldest went
        assert kept[1:] == computed[1:]
        last = texts[-1]
        assert known_run_keys(store, code, "in.mlir", last, 1, "other") is None
        assert known_run_keys(store, code, "other.mlir", last, 1, "salt") is None
        assert known_run_keys(store, code, "in.mlir", last, 2, "salt") is None


def test_kept_keys_that_do_not_decode_are_none() -> None:
    keys = RunKeys("r", "s", ("a", "b"), (1, 5), ("x", "y"), frozenset({1}))
    assert RunKeys.from_json(keys.to_json()) == keys
    for text in (
        "", "{}", "[]", '["r","s",["a"],[1],["x"]]',
        '["r","s",["a","b"],[1],["x","y"],[1]]',  # a line missing
        '["r","s",["a"],[true],["x"],[]]',  # a bool is no line
        '["r","s",["a"],[1],[2],[]]', '[1,"s",["a"],[1],["x"],[]]',
        '["r","s","a",[1],["x"],[]]', '["r","s",["a"],[1],["x"],[1]]',
    ):  # fmt: skip
        assert RunKeys.from_json(text) is None, text


def scanned(text: str) -> SourceSlices:
    slices = scan_text(text, 1)
    assert not isinstance(slices, str), slices
    return slices
