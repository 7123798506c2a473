"""Every Python block of README.md and docs/*.md runs, and type-checks under the
project's pyright settings (one pyright run for all of them).

A block runs as a program from the repository root, together with the blocks
marked `{continues}` after it. A block marked `{excerpt=FILE}` is a condensed
part of FILE, an example the test suite runs, which must define every class and
function the block uses without importing it. `{no-run="why"}` says why a block
cannot run here. The markers are described in tests/docs_blocks.py.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from docs_blocks import ROOT, Block, Program, all_blocks, python_programs

PROGRAMS = python_programs()
EXCERPTS = [
    b for b in all_blocks() if b.language == "python" and "excerpt" in b.attributes
]
_IDS = [program.where for program in PROGRAMS]


def _script(program: Program, directory: Path) -> Path:
    name = re.sub(r"\W", "_", program.where)
    return directory / f"{name}.py"


@pytest.fixture(scope="module")
def pyright_errors(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """The errors pyright reports in each program, by program."""
    directory = tmp_path_factory.mktemp("doc_programs")
    scripts = {program.where: _script(program, directory) for program in PROGRAMS}
    for program in PROGRAMS:
        scripts[program.where].write_text(program.code)
    pyright = Path(sys.executable).with_name("pyright")
    done = subprocess.run(
        [
            str(pyright),
            "--outputjson",
            "--project",
            str(ROOT / "pyproject.toml"),
            # This interpreter's packages (another xDSL in another venv), not
            # the `.venv` pyproject.toml names.
            "--pythonpath",
            sys.executable,
            *map(str, scripts.values()),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = json.loads(done.stdout)
    by_file: dict[str, list[str]] = {}
    for diagnostic in report["generalDiagnostics"]:
        if diagnostic["severity"] == "error":
            line = diagnostic["range"]["start"]["line"] + 1
            by_file.setdefault(diagnostic["file"], []).append(
                f"line {line}: {diagnostic['message']}"
            )
    assert report["summary"]["filesAnalyzed"] == len(scripts), done.stdout
    return {where: by_file.get(str(path), []) for where, path in scripts.items()}


@pytest.mark.parametrize("program", PROGRAMS, ids=_IDS)
def test_the_block_runs(program: Program, tmp_path: Path) -> None:
    script = _script(program, tmp_path)
    script.write_text(program.code)
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{program.where}:\n{done.stderr}"
    assert "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize("program", PROGRAMS, ids=_IDS)
def test_the_block_type_checks(
    program: Program, pyright_errors: dict[str, list[str]]
) -> None:
    assert pyright_errors[program.where] == [], program.where


def _imported_names(code: str) -> set[str]:
    return {
        alias.asname or alias.name
        for node in ast.walk(ast.parse(code))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }


@pytest.mark.parametrize("block", EXCERPTS, ids=[b.where for b in EXCERPTS])
def test_an_excerpt_names_a_tested_file_that_defines_what_it_uses(block: Block) -> None:
    name = block.attributes["excerpt"]
    source = (ROOT / name).read_text()
    used = set(re.findall(r"\b([A-Z]\w+)\(", block.code)) - _imported_names(block.code)
    undefined = sorted(
        used_name
        for used_name in used
        if not re.search(rf"^(class|def) {used_name}\b|^{used_name} =", source, re.M)
        and not re.search(rf"^\s*(class|def) {used_name}\b", block.code, re.M)
    )
    assert undefined == [], f"{block.where}: not defined in {name}: {undefined}"
    runners = [
        test.name
        for test in (ROOT / "tests").glob("test_*.py")
        if Path(name).name in test.read_text() and test.name != Path(__file__).name
    ]
    assert runners != [], f"{block.where}: no test runs {name}"
