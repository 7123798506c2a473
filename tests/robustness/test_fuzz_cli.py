"""passflow-opt in-process on mutated files (invalid UTF-8, NUL and BOM included),
generated pipelines and flags: `main` returns an exit status or raises
`SystemExit` (a usage error), never another exception, and it writes no Python
traceback; all within the time bound.

passflow reports a Python exception inside a pass as a crash of that pass, with
the traceback as a note (docs/decisions.md, "Pass manager"). With passflow's own
passes that is a defect like any other traceback, so the first test allows none.
xDSL's passes crash on IR they do not expect, which is xDSL's to fix: the second
test runs them and allows a traceback only inside such a report, naming an
xDSL pass (docs/robustness.md lists the crashes found).
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Generator
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from passflow import registry
from passflow.registry import PassInfo
from passflow.tools import opt

from .grammar import (
    IR_BYTES,
    NUMBERS,
    RUNNABLE,
    RUNNABLE_XDSL,
    SHORT_TEXT,
    STRAY,
    option_text,
    pipelines,
)
from .support import escape, fuzz_settings, gc_kept, shown, time_bound


def _pipelines(names: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        pipelines(names, clean=True, top="builtin.module"),
        pipelines(names, clean=True, top="builtin.module"),
        pipelines(names),
    )


PIPELINE = _pipelines(RUNNABLE)
XDSL_PIPELINE = _pipelines(RUNNABLE_XDSL + RUNNABLE)


@pytest.fixture(scope="module")
def workdir() -> Generator[Path]:
    with tempfile.TemporaryDirectory(prefix="passflow-fuzz-") as name:
        yield Path(name)


def _flag(name: str) -> st.SearchStrategy[list[str]]:
    return st.just([f"--{name}"]) | option_text(name, PIPELINE, clean=True).map(
        lambda text: [f"--{name}={text}"]
    )


def _pass_flags(names: list[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(names).flatmap(_flag), max_size=3).map(
        lambda flags: sum(flags, list[str]())
    )


SWITCHES = st.sampled_from(
    [
        ["--split-input-file"],
        ["--verify-diagnostics"],
        ["--verify-diagnostics=only-expected"],
        ["--allow-unregistered-dialect"],
        ["--mlir-print-op-generic"],
        ["--no-implicit-module"],
        ["--mlir-very-unsafe-disable-verifier-on-parsing"],
        ["--mlir-print-ir-after-all"],
        ["--mlir-print-ir-before-all"],
        ["--mlir-print-ir-after-change"],
        ["--mlir-print-ir-after-failure"],
        ["--mlir-print-ir-module-scope"],
        ["--mlir-print-assume-verified"],
        ["--dump-pass-pipeline"],
        ["--dump-pipeline-graph=dot"],
        ["--dump-pipeline-graph=json"],
        ["--mlir-timing"],
        ["--mlir-timing", "--mlir-timing-display=list"],
        ["--mlir-timing", "--mlir-output-format=json"],
        ["--mlir-pass-statistics"],
        ["--mlir-pass-statistics", "--mlir-pass-statistics-display=list"],
        ["--verify-each=false"],
        ["--verify-each=0"],
        ["--run-reproducer"],
        ["--emit-pass-error-on-failure"],
        ["--mlir-print-debug-counter"],
        ["--remark-policy=final"],
        ["--pass-pipeline-anchor=func.func"],
        ["--output-split-marker=// ====="],
        ["--split-input-file=// =="],
        # Files written beside the input ({dir}: the test's temporary directory).
        ["--timing-trace={dir}/trace.json"],
        ["--mlir-generate-reproducer={dir}/reproducer.mlir"],
        ["--mlir-pass-pipeline-crash-reproducer={dir}/crash.mlir"],
        [
            "--mlir-pass-pipeline-crash-reproducer={dir}/crash.mlir",
            "--mlir-pass-pipeline-local-reproducer",
        ],
        ["--log-actions-to={dir}/actions.log"],
        ["--log-actions-to=-", "--log-mlir-actions-filter={dir}/input.mlir:1"],
        ["--profile-actions-to={dir}/profile.json"],
        ["--mlir-print-ir-after-all", "--mlir-print-ir-tree-dir={dir}/tree"],
        ["--remark-format=yaml", "--remarks-output-file={dir}/remarks.yaml"],
        ["--remarks-filter=.*"],
    ]
)
VALUED = st.one_of(
    st.tuples(
        st.sampled_from(
            [
                "--mlir-debug-counter",
                "--log-mlir-actions-filter",
                "--remarks-filter",
                "--remarks-filter-passed",
                "--remarks-filter-missed",
                "--mlir-print-ir-after",
                "--mlir-print-ir-before",
                "--pass-pipeline-anchor",
                "--verify-each",
                "--split-input-file",
                "--verify-diagnostics",
                "--mlir-timing-display",
                "--remark-policy",
            ]
        ),
        st.one_of(
            SHORT_TEXT,
            STRAY,
            NUMBERS,
            st.sampled_from(
                [
                    "pass-execution-skip=1,pass-execution-count=2",
                    "pass-execution-count=-1",
                    "pass-execution-skip=x",
                    "a:1:2,b",
                    "[",
                    "(?P<",
                    "*",
                    "cse,canonicalize",
                    "a{99999999999}",
                    "a{2,1}",
                    "(" * 2000 + ")" * 2000,
                    "\\",
                ]
            ),
        ),
    ).map(lambda pair: [f"{pair[0]}={pair[1]}"]),
    st.sampled_from([["--bogus"], ["-"], ["--pass-pipeline"], ["-p"], ["-o"]]),
)


def _arguments(
    pipeline: st.SearchStrategy[str], names: list[str]
) -> st.SearchStrategy[list[str]]:
    """Flags after the input and `-o`: a pipeline (or pass flags), switches, and
    now and then a flag with an odd value."""
    return st.tuples(
        st.sampled_from([["--allow-unregistered-dialect"], []]),
        st.one_of(
            pipeline.map(lambda text: [f"--pass-pipeline={text}"]),
            pipeline.map(lambda text: ["-p", text]),
            _pass_flags(names),
        ),
        st.lists(SWITCHES, max_size=3).map(lambda flags: sum(flags, list[str]())),
        st.one_of(st.just(list[str]()), st.just(list[str]()), VALUED),
    ).map(lambda groups: [argument for group in groups for argument in group])


def run_opt(
    workdir: Path, capfd: pytest.CaptureFixture[str], source: bytes, flags: list[str]
) -> tuple[int, str, str, object]:
    """passflow-opt on `source` with `flags`: (status, stdout, stderr, the case)."""
    input_path = workdir / "input.mlir"
    output_path = workdir / "output.mlir"
    input_path.write_bytes(source)
    output_path.unlink(missing_ok=True)
    argv = [str(input_path), "--mlir-disable-threading", "-o", str(output_path)]
    flags = [flag.replace("{dir}", str(workdir)) for flag in flags]
    case = (source, [*argv[1:], *flags])
    capfd.readouterr()
    status: object = None
    with time_bound(case), gc_kept():
        try:
            status = opt.main([*argv, *flags])
        except SystemExit as exit_:
            status = exit_.code
        except BaseException as err:
            raise escape(case, err) from err
    out, err = capfd.readouterr()
    event(f"exit {status}")
    assert isinstance(status, int), shown(case)
    # An output file is written whole or not at all.
    assert not list(workdir.glob(".output.mlir.*")), shown(case)
    return status, out, err, case


@fuzz_settings(120, fixtures=True)
@given(IR_BYTES, _arguments(PIPELINE, RUNNABLE))
def test_opt_exits_with_a_status_and_never_a_traceback(
    workdir: Path, capfd: pytest.CaptureFixture[str], source: bytes, flags: list[str]
) -> None:
    _, out, err, case = run_opt(workdir, capfd, source, flags)
    for stream, text in (("stdout", out), ("stderr", err)):
        assert "Traceback" not in text, (
            f"a traceback on {stream} for {shown(case)}:\n{text}"
        )


_DIAGNOSTIC = re.compile(r"^\S[^\n]*?: (?:error|warning|remark): ", re.MULTILINE)
_CRASH = re.compile(r"pass '(?P<name>[^']*)' crashed on '[^']*' op: ")
_XDSL_NAMES = frozenset(
    info.pass_class.name
    for info in map(registry.lookup, RUNNABLE_XDSL)
    if isinstance(info, PassInfo)
)


def without_xdsl_crash_reports(err: str) -> tuple[str, list[str]]:
    """`err` without the diagnostics (notes included) that report a crash of
    an xDSL pass, and the names of those passes."""
    starts = [m.start() for m in _DIAGNOSTIC.finditer(err)]
    if not starts:
        return err, []
    kept = [err[: starts[0]]]
    crashed: list[str] = []
    for begin, end in zip(starts, [*starts[1:], len(err)], strict=True):
        block = err[begin:end]
        crash = _CRASH.search(block.split("\n", 1)[0])
        if crash is not None and crash["name"] in _XDSL_NAMES:
            crashed.append(crash["name"])
        else:
            kept.append(block)
    return "".join(kept), crashed


@fuzz_settings(60, fixtures=True)
@given(IR_BYTES, _arguments(XDSL_PIPELINE, RUNNABLE_XDSL))
def test_opt_with_xdsl_passes_reports_their_crashes_and_nothing_else(
    workdir: Path, capfd: pytest.CaptureFixture[str], source: bytes, flags: list[str]
) -> None:
    _, out, err, case = run_opt(workdir, capfd, source, flags)
    assert "Traceback" not in out, f"a traceback on stdout for {shown(case)}:\n{out}"
    rest, crashed = without_xdsl_crash_reports(err)
    for name in crashed:
        event(f"xDSL crash: {name}")
    assert "Traceback" not in rest, f"a traceback on stderr for {shown(case)}:\n{err}"
