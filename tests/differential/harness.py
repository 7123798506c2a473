"""One case through both tools, its verdicts, and what the suite must complain of."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

from .compare import Kind, Verdict, compare
from .corpus import Case, Chunk, NotApplicable, split_chunks
from .known import KNOWN, Cause, Known, Problem
from .tools import NATIVE, Outcome, passflow_pipeline, run_passflow, run_xdsl

__all__ = ["CaseResult", "ChunkResult", "Summary", "native_passes", "run_case"]


def native_passes(case: Case) -> tuple[str, ...]:
    """passflow's own passes in the case's pipeline (their passflow-opt names)."""
    translated = passflow_pipeline(case.pipeline)
    inner = translated.removeprefix("builtin.module(").removesuffix(")")
    names = {element.split("{", 1)[0] for element in inner.split(",")}
    return tuple(sorted(name for name in set(NATIVE.values()) if name in names))


@dataclass(frozen=True)
class ChunkResult:
    chunk: Chunk
    xdsl: Outcome
    passflow: Outcome
    verdict: Verdict
    known_differences: tuple[Known, ...]
    known_tracebacks: tuple[Known, ...]


@dataclass
class CaseResult:
    case: Case
    chunks: list[ChunkResult]
    seconds: float
    problems: list[str] = field(default_factory=lambda: list[str]())
    """Unexplained differences, tracebacks and stale table entries."""


def run_case(case: Case) -> CaseResult:
    start = time.perf_counter()
    chunks = split_chunks(case.input.read_bytes(), case.split)
    xdsl = run_xdsl(case, chunks)
    passflow = run_passflow(case, chunks)
    native = native_passes(case)
    entries = [entry for entry in KNOWN if entry.case == case.id]
    results: list[ChunkResult] = []
    for chunk, x, p in zip(chunks, xdsl, passflow, strict=True):
        verdict = compare(x, p, native)
        results.append(
            ChunkResult(
                chunk,
                x,
                p,
                verdict,
                _entry(entries, chunk, Problem.DIFFERENCE),
                _entry(entries, chunk, Problem.TRACEBACK),
            )
        )
    result = CaseResult(case, results, time.perf_counter() - start)
    result.problems = _problems(result, entries)
    return result


def _entry(entries: list[Known], chunk: Chunk, problem: Problem) -> tuple[Known, ...]:
    return tuple(
        e for e in entries if e.problem is problem and chunk.number in e.chunks
    )


def _problems(result: CaseResult, entries: list[Known]) -> list[str]:
    case = result.case
    problems: list[str] = []
    for item in result.chunks:
        where = f"{case.id} chunk {item.chunk.number} (line {item.chunk.line})"
        if not item.verdict.agrees and not item.known_differences:
            problems.append(
                f"unexplained difference: {where}, pipeline '{case.pipeline}'\n"
                + _indent(item.verdict.detail)
            )
        for entry in item.known_differences if item.verdict.agrees else ():
            problems.append(
                f"stale table entry: {where} now agrees; remove it from "
                f"tests/differential/known.py ({entry.reason})"
            )
        if item.passflow.traceback is not None and not item.known_tracebacks:
            problems.append(
                f"passflow-opt printed or raised a Python traceback: {where}, "
                f"pipeline '{case.pipeline}'\n"
                + _indent(_tail(item.passflow.traceback))
            )
        for entry in item.known_tracebacks if item.passflow.traceback is None else ():
            problems.append(
                f"stale table entry: {where} prints no traceback now; remove it "
                f"from tests/differential/known.py ({entry.reason})"
            )
    count = len(result.chunks)
    for entry in entries:
        beyond = [number for number in entry.chunks if not 1 <= number <= count]
        if beyond:
            problems.append(
                f"table entry for {case.id} names chunks {beyond}; the file has {count}"
            )
    return problems


def _indent(text: str) -> str:
    return "".join(f"    {line}\n" for line in text.splitlines())


def _tail(text: str, lines: int = 8) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


@dataclass
class Summary:
    """Counts over every case run in this session, for the terminal summary."""

    cases: list[CaseResult] = field(default_factory=lambda: list[CaseResult]())
    not_applicable: tuple[NotApplicable, ...] = ()

    def lines(self) -> list[str]:
        chunks = [item for result in self.cases for item in result.chunks]
        kinds = Counter(item.verdict.kind for item in chunks)
        differing = [item for item in chunks if not item.verdict.agrees]
        known = Counter(
            entry.cause for item in differing for entry in item.known_differences
        )
        explained = sum(1 for item in differing if item.known_differences)
        unexplained = len(differing) - explained
        normalised = Counter(
            ", ".join(item.verdict.normalisations)
            for item in chunks
            if item.verdict.kind is Kind.AGREE_NORMALISED
        )
        tracebacks = [item for item in chunks if item.passflow.traceback is not None]
        known_tracebacks = Counter(
            item.known_tracebacks[0].cause
            for item in tracebacks
            if item.known_tracebacks
        )
        xdsl_crashes = sum(1 for item in chunks if item.xdsl.traceback is not None)
        reasons = Counter(skipped.reason for skipped in self.not_applicable)
        seconds = sum(result.seconds for result in self.cases)
        out = [
            f"{len(self.cases)} RUN lines run ({len(chunks)} chunks) in "
            f"{seconds:.1f} s; {len(self.not_applicable)} RUN lines not applicable",
            _count("agree", kinds[Kind.AGREE]),
            _count("agree after a decision's normalisation", normalised.total()),
        ]
        out += [f"      {count:4d}  {name}" for name, count in normalised.most_common()]
        out += [
            _count("error: both fail with the same error", kinds[Kind.BOTH_ERROR]),
            _count("differ, explained by the table (known.py)", explained),
        ]
        out += [_cause_line(count, cause) for cause, count in known.most_common()]
        out += [
            _count("differ, UNEXPLAINED", unexplained),
            _count("passflow-opt tracebacks", len(tracebacks)),
            _count("  of which in the table", sum(known_tracebacks.values())),
        ]
        out += [
            _cause_line(count, cause) for cause, count in known_tracebacks.most_common()
        ]
        out += [
            _count("xdsl-opt crashes (xDSL's own)", xdsl_crashes),
            _count("not applicable (RUN lines)", len(self.not_applicable)),
        ]
        out += [
            f"      {count:4d}  {reason}" for reason, count in reasons.most_common()
        ]
        problems = [problem for result in self.cases for problem in result.problems]
        if problems:
            out.append(f"  problems ({len(problems)}):")
            out += [f"    {line}" for p in problems for line in p.splitlines()]
        return out


def _count(label: str, count: int) -> str:
    return f"  {label:<44} {count:5d}"


def _cause_line(count: int, cause: Cause) -> str:
    return f"      {count:4d}  [{cause.status.split(':')[0]}] {cause.reason}"
