"""Every Python block of the README runs, and type-checks under the project's
pyright settings; a block marked `excerpt=FILE` is a condensed part of FILE (an
example the test suite runs), which must define every class and function the
block uses without importing it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
_BLOCK = re.compile(r"^```python(?P<info>[^\n]*)\n(?P<code>.*?)^```", re.M | re.S)


def _blocks() -> list[tuple[int, str, str]]:
    text = README.read_text()
    return [
        (text.count("\n", 0, m.start()) + 1, m["info"].strip(), m["code"])
        for m in _BLOCK.finditer(text)
    ]


RUNNABLE = [(line, code) for line, info, code in _blocks() if not info]
EXCERPTS = [(line, info, code) for line, info, code in _blocks() if info]


@pytest.mark.parametrize(("line", "code"), RUNNABLE, ids=[str(b[0]) for b in RUNNABLE])
def test_the_block_runs(line: int, code: str, tmp_path: Path) -> None:
    script = tmp_path / f"readme_{line}.py"
    script.write_text(code)
    done = subprocess.run(
        [sys.executable, str(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize(("line", "code"), RUNNABLE, ids=[str(b[0]) for b in RUNNABLE])
def test_the_block_type_checks(line: int, code: str, tmp_path: Path) -> None:
    script = tmp_path / f"readme_{line}.py"
    script.write_text(code)
    pyright = Path(sys.executable).with_name("pyright")
    done = subprocess.run(
        [str(pyright), "--project", str(ROOT / "pyproject.toml"), str(script)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout


@pytest.mark.parametrize(
    ("line", "info", "code"), EXCERPTS, ids=[str(b[0]) for b in EXCERPTS]
)
def test_an_excerpt_names_a_file_that_defines_what_it_uses(
    line: int, info: str, code: str
) -> None:
    match = re.fullmatch(r"excerpt=(\S+)", info)
    assert match is not None, f"README line {line}: unknown block marker {info!r}"
    source = (ROOT / match[1]).read_text()
    imported = set(
        re.findall(
            r"\b(\w+)[,)]?", " ".join(re.findall(r"import \(?([^)]*)\)?", code, re.S))
        )
    )
    used = set(re.findall(r"\b([A-Z]\w+)\(", code)) - imported
    undefined = sorted(
        name
        for name in used
        if not re.search(rf"^(class|def) {name}\b|^{name} =", source, re.M)
        and not re.search(rf"^\s*(class|def) {name}\b", code, re.M)
    )
    assert undefined == [], (
        f"README line {line}: not defined in {match[1]}: {undefined}"
    )
