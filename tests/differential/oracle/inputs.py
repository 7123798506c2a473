"""The inputs of the oracle: passflow's lit corpus, xDSL's filecheck corpus and
generated programs, each cut into the modules `--split-input-file` would give.

Only inputs mlir-opt accepts count (`accepted`): the others are tests of
passflow's errors, or use dialects MLIR does not have.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from ..corpus import CORPUS, split_chunks
from ..tools import Outcome, run_passflow_text
from .passes import argv
from .programs import program
from .reference import rejections

__all__ = [
    "FIRST_SEED",
    "LONG",
    "PROGRAMS",
    "SCALE",
    "SWEEP_PROGRAMS",
    "SWEEP_SHARE",
    "Input",
    "accepted",
    "corpus",
    "generated",
    "passflow_output",
    "programs",
    "xdsl_sample",
]

LONG = os.environ.get("PASSFLOW_FUZZ", "") == "long"
"""`make fuzz`: every xDSL chunk, and `SWEEP_PROGRAMS` programs through `sweep`."""
SCALE = int(os.environ.get("PASSFLOW_FUZZ_SCALE", "20"))
PROGRAMS = 12
"""Generated programs each pass's own tests judge (and run before and after)."""
SWEEP_PROGRAMS = 500 * SCALE if LONG else 2
"""Generated programs `test_sweep` judges: 10,000 in `make fuzz` (`FUZZ_SCALE=20`),
in parallel."""
SWEEP_SHARE = int(os.environ.get("PASSFLOW_ORACLE_SHARE") or 1)
"""Passes that judge each program of the sweep, in turn (`sweep.passes_of`): one
by default, so 10,000 programs give each of the 17 passes 588 of them;
`PASSFLOW_ORACLE_SHARE=17` runs every pass on every program (17 times the work)."""
FIRST_SEED = int(
    os.environ.get("PASSFLOW_ORACLE_SEED") or (random.randrange(1 << 40) if LONG else 0)
)
"""The first program's seed: 0 in `make test`, random in `make fuzz`
(`PASSFLOW_ORACLE_SEED=N` replays a run)."""
XDSL_EVERY = 1 if LONG else 16
"""`make test` judges every 16th chunk of xDSL's corpus; `make fuzz` all of them."""

_ROOT = Path(__file__).resolve().parents[3]
_LIT = _ROOT / "tests" / "filecheck"
_MARKER = "// -----"


@dataclass(frozen=True)
class Input:
    origin: str
    """Where it comes from: `lit:Transforms/cse.mlir#2` (the 1-based chunk)."""
    text: str


def _chunks(label: str, root: Path) -> list[Input]:
    found: list[Input] = []
    for path in sorted(root.rglob("*.mlir")):
        if "Output" in path.parts or "Inputs" in path.parts:
            continue
        try:
            source = path.read_bytes()
            pieces = split_chunks(source, True)
        except UnicodeDecodeError:
            continue
        relative = path.relative_to(root).as_posix()
        for chunk in pieces:
            if chunk.text.strip() and _MARKER not in chunk.text:
                found.append(Input(f"{label}:{relative}#{chunk.number}", chunk.text))
    return found


@cache
def corpus(label: str) -> tuple[Input, ...]:
    """Every chunk of the corpus `lit` (passflow's) or `xdsl` (the wheel's)."""
    return tuple(_chunks(label, _LIT if label == "lit" else CORPUS))


def generated(count: int, first: int = 0) -> tuple[Input, ...]:
    """The programs of seeds `first` .. `first + count - 1` (`programs.program`)."""
    return tuple(
        Input(f"program:{seed}", program(seed)) for seed in range(first, first + count)
    )


def xdsl_sample() -> tuple[Input, ...]:
    """The chunks of xDSL's corpus this run judges (`XDSL_EVERY`)."""
    return corpus("xdsl")[::XDSL_EVERY]


@cache
def programs() -> tuple[Input, ...]:
    """The generated programs this run judges: `PROGRAMS` of them, from seed 0,
    or from `FIRST_SEED` (an input's origin names its seed)."""
    return generated(PROGRAMS, first=FIRST_SEED)


@cache
def passflow_output(element: str, text: str) -> Outcome:
    """passflow-opt's outcome of running the pipeline element on `text` (shared by
    the validity and execution tests)."""
    return run_passflow_text(argv(element), text)


@cache
def accepted(inputs: tuple[Input, ...]) -> tuple[Input, ...]:
    """The inputs mlir-opt parses and verifies (with --allow-unregistered-dialect)."""
    errors = rejections([item.text for item in inputs])
    return tuple(
        item for item, error in zip(inputs, errors, strict=True) if error is None
    )
