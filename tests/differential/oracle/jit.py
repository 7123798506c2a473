"""Running programs with MLIR's ExecutionEngine (the Python bindings of the wheel).

`results` runs a batch of programs in one child Python (`python -m
differential.oracle.jit`, from tests/): a program a pass broke may crash or loop, and must not take the
test session with it. A batch whose child crashes or runs past `TIMEOUT` is split
in halves until the program to blame is alone; its result says what happened.

A program's result is the list of what `@main` returned for each argument of
`ARGUMENTS`, or a one-line reason it did not run.
"""

from __future__ import annotations

import ctypes
import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["ARGUMENTS", "LOWERING", "Result", "results"]

ARGUMENTS = (0, 1, -7, 123456789)
"""The arguments `@main` is run with."""

LOWERING = (
    "builtin.module(convert-scf-to-cf,convert-cf-to-llvm,convert-arith-to-llvm,"
    "finalize-memref-to-llvm,convert-func-to-llvm,reconcile-unrealized-casts)"
)
"""MLIR's passes from the programs' dialects to LLVM, before the JIT."""

BATCH = 200
"""Programs one child process runs."""
TIMEOUT = 120.0
"""Seconds a batch may take (a program runs in microseconds; this is a hang)."""

Result = tuple[int, ...] | str

_TESTS = Path(__file__).resolve().parents[2]


def _run_here(text: str) -> Result:
    # Imported in the child only: the bindings' stubs are partly untyped.
    from mlir import execution_engine, ir, passmanager

    manager: Any = passmanager.PassManager
    with ir.Context():
        try:
            module = ir.Module.parse(text)
            manager.parse(LOWERING).run(module.operation)
        except Exception as err:  # the bindings raise MLIRError (and ValueError)
            return "rejected by MLIR: " + " ".join(str(err).split())[:300]
        engine: Any = execution_engine.ExecutionEngine(module, opt_level=0)
        returned: list[int] = []
        for argument in ARGUMENTS:
            arg, result = ctypes.c_int64(argument), ctypes.c_int64(0)
            engine.invoke("main", ctypes.pointer(arg), ctypes.pointer(result))
            returned.append(result.value)
        return tuple(returned)


def _run_batch(texts: Sequence[str]) -> list[Result] | str:
    try:
        done = subprocess.run(
            [sys.executable, "-m", "differential.oracle.jit"],
            input=json.dumps(list(texts)),
            capture_output=True,
            text=True,
            cwd=_TESTS,
            timeout=TIMEOUT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return f"did not finish in {TIMEOUT:.0f} s"
    if done.returncode != 0:
        return f"the JIT's process ended with status {done.returncode}"
    found: list[list[int] | str] = json.loads(done.stdout)
    return [item if isinstance(item, str) else tuple(item) for item in found]


def results(texts: Sequence[str]) -> list[Result]:
    """What each program returns for `ARGUMENTS`, or why it did not run."""
    if len(texts) > BATCH:
        return [
            result
            for start in range(0, len(texts), BATCH)
            for result in results(texts[start : start + BATCH])
        ]
    if not texts:
        return []
    found = _run_batch(texts)
    if not isinstance(found, str):
        return found
    if len(texts) == 1:
        return [found]
    half = len(texts) // 2
    return results(texts[:half]) + results(texts[half:])


def _main() -> None:
    texts: list[str] = json.load(sys.stdin)
    found: list[Result] = [_run_here(text) for text in texts]
    json.dump(
        [item if isinstance(item, str) else list(item) for item in found], sys.stdout
    )


if __name__ == "__main__":
    _main()
