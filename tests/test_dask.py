"""passflow-opt on Dask: whole and sliced runs print what a serial run prints,
and the local cluster passflow starts for a run is its own.

One local Dask cluster serves the module (`dask_client`, in conftest); the
runs use it through `DaskExecutor(client)`, as `--executor=dask
--scheduler=...` does, without connecting a new client per run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import pathlib
import textwrap
from collections.abc import Iterator

import pytest
from distributed import Client

from passflow.execution import ChildExecutor
from passflow.executors import DaskExecutor, make_executor
from passflow.sliced import Fallback, SlicedOutcome
from passflow.tools import opt, pass_manager_options

HERE = pathlib.Path(__file__).parent
LIT_CORPUS = sorted((HERE / "filecheck").rglob("*.mlir"))

Outcome = SlicedOutcome | Fallback

CALLS = textwrap.dedent("""\
    func.func @gen() -> i32 {
      %0 = arith.constant 1 : i32
      %1 = arith.addi %0, %0 : i32
      func.return %1 : i32
    }
    func.func @use() -> i32 {
      %0 = func.call @gen() : () -> i32
      %1 = arith.constant 0 : i32
      %2 = arith.addi %0, %1 : i32
      func.return %2 : i32
    }
    func.func @again() -> i32 {
      %0 = func.call @use() : () -> i32
      func.return %0 : i32
    }
""")


@dataclasses.dataclass
class DaskRuns:
    """What the Dask runs of a test did: the outcomes of their sliced runs and
    the executors they ran on."""

    outcomes: list[Outcome] = dataclasses.field(default_factory=lambda: [])
    executors: list[DaskExecutor] = dataclasses.field(default_factory=lambda: [])

    def sliced(self) -> int:
        return sum(isinstance(o, SlicedOutcome) for o in self.outcomes)

    def children_shipped(self) -> bool:
        """Whether whole runs sent children to the workers."""
        return any(e.profile.worker_busy > 0 for e in self.executors)


@pytest.fixture
def on_dask(dask_client: object, monkeypatch: pytest.MonkeyPatch) -> Iterator[DaskRuns]:
    """`--executor=dask` runs on the module's cluster, recorded."""
    assert isinstance(dask_client, Client)
    runs = DaskRuns()

    def executor(
        kind: str, jobs: int | None = None, scheduler: str | None = None
    ) -> ChildExecutor | None:
        if kind != "dask":
            return make_executor(kind, jobs, scheduler)
        made = DaskExecutor(dask_client)
        runs.executors.append(made)
        return made

    def recording(*args: object, **kwargs: object) -> Outcome:
        outcome = real(*args, **kwargs)  # type: ignore[arg-type]
        runs.outcomes.append(outcome)
        return outcome

    real = opt.run_sliced
    monkeypatch.setattr(pass_manager_options, "make_executor", executor)
    monkeypatch.setattr(opt, "run_sliced", recording)
    yield runs


def whole_runs_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """passflow-opt runs every chunk whole (through the executor), as it does
    with a flag that a sliced run cannot reproduce."""

    def never(*_args: object) -> None:
        return None

    monkeypatch.setattr(opt, "sliced_jobs", never)


def run_tool(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = opt.main(argv)
    return status, out.getvalue(), err.getvalue()


def compare(path: pathlib.Path, pipeline: str, *flags: str) -> tuple[int, str, str]:
    """Run `path` serially and on Dask; assert both print the same."""
    common = [
        str(path),
        f"--pass-pipeline={pipeline}",
        "--allow-unregistered-dialect",
        "--split-input-file",
        *flags,
    ]
    serial = run_tool([*common, "--mlir-disable-threading"])
    dask = run_tool([*common, "--executor=dask"])
    assert dask == serial, path
    return serial


PIPELINE = "builtin.module(func.func(canonicalize,cse))"


@pytest.mark.parametrize(
    "flag", ["--mlir-pass-statistics", "--dump-pass-pipeline", "--verify-each"]
)
def test_a_whole_run_on_dask_finds_the_callee_of_a_call(
    flag: str, on_dask: DaskRuns, tmp_path: pathlib.Path
) -> None:
    # The commands: the first two flags keep the run whole; each
    # function is a task of its own, and the call's verifier needs its callee.
    path = tmp_path / "calls.mlir"
    path.write_text(CALLS)
    status, out, err = compare(path, PIPELINE, flag)
    assert status == 0 and "could not be found" not in err
    assert out.count("func.call @") == 2
    whole = flag != "--verify-each"
    assert on_dask.sliced() == (0 if whole else 1)
    assert on_dask.children_shipped() == whole


@pytest.mark.parametrize("whole", [True, False], ids=["whole", "sliced"])
def test_the_lit_corpus_prints_the_same_on_dask(
    whole: bool, on_dask: DaskRuns, monkeypatch: pytest.MonkeyPatch
) -> None:
    if whole:
        whole_runs_only(monkeypatch)
    for path in LIT_CORPUS:
        compare(path, PIPELINE)
    if whole:
        assert on_dask.outcomes == [] and on_dask.children_shipped()
    else:
        assert on_dask.sliced() >= 40  # most chunks of the corpus slice
