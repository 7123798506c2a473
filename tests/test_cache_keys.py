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
import json
import subprocess
import sys
from pathlib import Path

from test_cache import GENERATED
from test_sliced import LIT_CORPUS, module

import passflow
from passflow.cache.sources import source_files

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
