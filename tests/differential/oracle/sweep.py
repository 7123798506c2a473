"""The oracle over many generated programs, in parallel: `make fuzz` runs 10,000.

A block of seeds is one unit of work, done by one worker process: each program of
the block goes through passflow-opt with `share` passes of `passes.PASSES` (the
passes take turns, so consecutive seeds spread over all of them; `share` equal to
their number runs every pass on every program), mlir-opt judges every output (`reference.rejections`), and MLIR's ExecutionEngine runs the
program and each optimisation's output (`jit.results`; a text several passes
print alike runs once). The workers are forked from this process, one per CPU it
may use unless `PASSFLOW_ORACLE_JOBS` says otherwise; mlir-opt and the JIT run in
children of theirs. Each finished block is appended to `PASSFLOW_ORACLE_LOG` (JSON
lines) when that is set, so a long run can be watched, and stopped with its
figures kept.
"""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..tools import run_passflow_text
from .inputs import generated
from .jit import Result, results
from .known import KNOWN_INVALID
from .passes import PASSES, OraclePass, argv
from .reference import rejections

__all__ = [
    "BLOCK",
    "Finding",
    "Tally",
    "check_block",
    "jobs",
    "passes_of",
    "sweep",
]

BLOCK = 25
"""Programs per unit of work (a worker's batch for mlir-opt and the JIT)."""


@dataclass(frozen=True)
class Finding:
    """One program a pass got wrong."""

    origin: str
    """`program:SEED` (`programs.program(SEED)` rebuilds it)."""
    pass_name: str
    kind: str
    """`invalid` (mlir-opt rejects the output), `different` (another result),
    `failed` (passflow-opt exited non-zero), `crashed` (a Python traceback),
    `unrunnable` (the program itself did not run: the generator's defect)."""
    detail: str


@dataclass
class Tally:
    """What a sweep covered and found."""

    programs: int = 0
    passes: int = 0
    """The passes the programs were spread over."""
    outputs_judged: int = 0
    """Outputs mlir-opt judged (a program's output for one of its passes)."""
    runs_after: int = 0
    """Programs run after an optimisation (each compared with the run before)."""
    refused: int = 0
    """Findings listed as known refusals (`known.KNOWN_INVALID`)."""
    findings: list[Finding] = field(default_factory=lambda: list[Finding]())
    by_pass: dict[str, int] = field(default_factory=lambda: dict[str, int]())
    """Programs each pass ran on."""

    def add(self, other: Tally) -> None:
        self.programs += other.programs
        self.passes = max(self.passes, other.passes)
        self.outputs_judged += other.outputs_judged
        self.runs_after += other.runs_after
        self.refused += other.refused
        self.findings += other.findings
        for name, count in other.by_pass.items():
            self.by_pass[name] = self.by_pass.get(name, 0) + count

    def count(self, kind: str) -> int:
        return sum(1 for finding in self.findings if finding.kind == kind)

    def line(self) -> str:
        """The figures a report quotes."""
        kinds = ("invalid", "different", "failed", "crashed", "unrunnable")
        found = ", ".join(f"{self.count(kind)} {kind}" for kind in kinds)
        fewest = min(self.by_pass.values(), default=0)
        return (
            f"{self.programs} programs over {self.passes} passes "
            f"(each ran on {fewest} or more): "
            f"{self.outputs_judged} outputs judged by mlir-opt, {self.runs_after} "
            f"runs after an optimisation; {found}, {self.refused} refused (known.py)"
        )


def _known(origin: str, pass_name: str) -> bool:
    return any(
        refusal.origin == origin and refusal.pass_name == pass_name
        for refusal in KNOWN_INVALID
    )


def passes_of(seed: int, share: int, passes: Sequence[OraclePass]) -> list[OraclePass]:
    """The `share` passes (of `passes`) that judge the program of `seed`: the
    next ones in turn, so that any `len(passes)` consecutive seeds give every
    pass `share` programs."""
    share = min(share, len(passes))
    return [passes[(seed * share + index) % len(passes)] for index in range(share)]


def check_block(
    seeds: range, passes: Sequence[OraclePass] = PASSES, share: int | None = None
) -> Tally:
    """`share` passes (all by default) on each program of `seeds`: validity, and
    for the optimisations the results before and after."""
    share = len(passes) if share is None else share
    programs = generated(len(seeds), first=seeds.start)
    tally = Tally(programs=len(programs), passes=len(passes))
    judged: list[tuple[str, str, str]] = []  # origin, pass, output
    runs: dict[str, None] = {item.text: None for item in programs}
    after: list[tuple[str, str, str]] = []  # origin, pass, output
    for seed, item in zip(seeds, programs, strict=True):
        for pass_ in passes_of(seed, share, passes):
            tally.by_pass[pass_.name] = tally.by_pass.get(pass_.name, 0) + 1
            outcome = run_passflow_text(argv(pass_.element), item.text)
            if outcome.traceback is not None:
                tally.findings.append(
                    Finding(item.origin, pass_.name, "crashed", outcome.traceback)
                )
            elif outcome.output is None:
                tally.findings.append(
                    Finding(item.origin, pass_.name, "failed", outcome.details)
                )
            else:
                judged.append((item.origin, pass_.name, outcome.output))
                if pass_.optimisation:
                    after.append((item.origin, pass_.name, outcome.output))
                    runs[outcome.output] = None
    tally.outputs_judged = len(judged)
    errors = rejections([output for _, _, output in judged])
    for (origin, name, output), error in zip(judged, errors, strict=True):
        if error is None:
            continue
        if _known(origin, name):
            tally.refused += 1
        else:
            tally.findings.append(
                Finding(origin, name, "invalid", f"{error}\n--- output:\n{output}")
            )
    texts = list(runs)
    found: dict[str, Result] = dict(zip(texts, results(texts), strict=True))
    before = {item.origin: found[item.text] for item in programs}
    sources = {item.origin: item.text for item in programs}
    for origin, result in before.items():
        if isinstance(result, str):
            tally.findings.append(Finding(origin, "-", "unrunnable", result))
    for origin, name, output in after:
        was, now = before[origin], found[output]
        if isinstance(was, str):
            continue
        tally.runs_after += 1
        if was != now:
            tally.findings.append(
                Finding(
                    origin,
                    name,
                    "different",
                    f"the result was {was}, is {now}\n--- before:\n"
                    f"{sources[origin]}\n--- after:\n{output}",
                )
            )
    return tally


def jobs() -> int:
    """Worker processes: `PASSFLOW_ORACLE_JOBS`, else one per CPU this process
    may use."""
    wanted = os.environ.get("PASSFLOW_ORACLE_JOBS")
    if wanted:
        return max(1, int(wanted))
    return max(1, len(os.sched_getaffinity(0)))


def _blocks(first: int, count: int, size: int) -> Iterator[range]:
    for start in range(first, first + count, size):
        yield range(start, min(start + size, first + count))


def sweep(
    first: int,
    count: int,
    *,
    workers: int | None = None,
    log: Path | None = None,
    block: int = BLOCK,
    passes: Sequence[OraclePass] = PASSES,
    share: int | None = None,
) -> Tally:
    """`check_block` on the programs of seeds `first` .. `first + count - 1`, a
    block per task on `workers` forked processes (one: in this process)."""
    workers = jobs() if workers is None else workers
    total = Tally()
    blocks = list(_blocks(first, count, block))

    def record(part: Tally, seeds: range) -> None:
        total.add(part)
        if log is not None:
            entry = {"first": seeds.start, "count": len(seeds), **asdict(part)}
            with log.open("a", encoding="utf-8") as stream:
                stream.write(json.dumps(entry) + "\n")

    if workers == 1:
        for seeds in blocks:
            record(check_block(seeds, passes, share), seeds)
        return total
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(workers, mp_context=context) as pool:
        done = pool.map(
            check_block, blocks, [passes] * len(blocks), [share] * len(blocks)
        )
        for seeds, part in zip(blocks, done, strict=True):
            record(part, seeds)
    return total
