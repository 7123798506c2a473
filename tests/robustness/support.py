"""What the robustness suite shares: its Hypothesis settings, the time bound,
the seeds and the generators of text.

Settings. Two Hypothesis profiles are registered (not loaded, so the other test
modules keep Hypothesis's defaults): `passflow-robustness`, the default, runs each
test's own modest number of examples, derandomized so that every CI run tries the
same inputs; `passflow-robustness-long`, chosen by `PASSFLOW_FUZZ=long` (what
`make fuzz` sets), runs `LONG_SCALE` times as many (`PASSFLOW_FUZZ_SCALE=N`
overrides the factor) from a fresh random seed each run, adds xDSL's filecheck
tests to the seeds, and prints how to replay a failure. Both give every example
a deadline of `DEADLINE`.

Time bound. An input must end in a result or in passflow's own error within a
bound; two mechanisms enforce it, so neither a slow input nor a hang passes:

- Hypothesis's `deadline`: an example that finishes but took longer than
  `DEADLINE` fails (Hypothesis runs it again to be sure, then shrinks it). This
  catches the quadratic-but-finishing inputs.
- `time_bound()`: an alarm (`SIGALRM`) that interrupts an example still running
  after `HANG_SECONDS` with `Hang`, a `BaseException`, so no `except Exception`
  in passflow or xDSL can swallow it, also in passflow-opt's deep-stack thread.
  The test turns it into a failure naming the input. This catches hangs, which
  a deadline alone never reports (it is checked only once the example returns).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
import threading
from collections.abc import Generator
from datetime import timedelta
from pathlib import Path
from types import FrameType

from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parents[2]

# --- settings --------------------------------------------------------------------

DEADLINE = timedelta(seconds=5)
"""Hypothesis's per-example deadline: generous (examples take milliseconds),
so only a blow-up, never a busy CI machine, exceeds it."""

HANG_SECONDS = 30.0
"""After this long an example is interrupted as a hang."""

LONG = os.environ.get("PASSFLOW_FUZZ", "") == "long"
LONG_SCALE = int(os.environ.get("PASSFLOW_FUZZ_SCALE", "20"))

_SUPPRESSED = [HealthCheck.too_slow, HealthCheck.data_too_large]

settings.register_profile(
    "passflow-robustness",
    derandomize=True,
    database=None,
    deadline=DEADLINE,
    print_blob=False,
    suppress_health_check=_SUPPRESSED,
)
settings.register_profile(
    "passflow-robustness-long",
    derandomize=False,
    database=None,
    deadline=DEADLINE,
    print_blob=True,
    suppress_health_check=_SUPPRESSED,
)
PROFILE = settings.get_profile(
    "passflow-robustness-long" if LONG else "passflow-robustness"
)


def fuzz_settings(
    examples: int, *, fixtures: bool = False, long_factor: float = 1.0
) -> settings:
    """The active profile with `examples` examples (times the long scale, and
    `long_factor` on top of it, in the long run).

    `fixtures` allows function-scoped fixtures (`capfd`), which the test then
    resets itself for each example."""
    suppressed = list(PROFILE.suppress_health_check)
    if fixtures:
        suppressed.append(HealthCheck.function_scoped_fixture)
    return settings(
        PROFILE,
        max_examples=round(examples * LONG_SCALE * long_factor) if LONG else examples,
        suppress_health_check=suppressed,
    )


# --- the time bound --------------------------------------------------------------


class Hang(BaseException):
    """An example ran past `HANG_SECONDS` (a BaseException: see the module doc)."""


def _raise_hang_everywhere(signum: int, frame: FrameType | None) -> None:
    # passflow-opt runs in a "passflow-deep-stack" thread that the waiting main
    # thread cannot interrupt: raise there too, so it stops rather than running on.
    for thread in threading.enumerate():
        if thread.ident is not None and thread.name.startswith("passflow-deep-stack"):
            ctypes.pythonapi.PyThreadState_SetAsyncExc(
                ctypes.c_ulong(thread.ident), ctypes.py_object(Hang)
            )
    raise Hang


@contextlib.contextmanager
def time_bound(what: object) -> Generator[None]:
    """Run the body with the hang alarm armed; a hang fails naming `what`."""
    usable = (
        hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:  # no alarm here: the deadline still bounds finished examples
        yield
        return
    previous = signal.signal(signal.SIGALRM, _raise_hang_everywhere)
    signal.setitimer(signal.ITIMER_REAL, HANG_SECONDS)
    try:
        yield
    except Hang:
        raise AssertionError(
            f"no result within {HANG_SECONDS:.0f} s (a hang) on {shown(what)}"
        ) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def shown(what: object, limit: int = 2_000) -> str:
    """`repr(what)`, cut in the middle when long (Hypothesis prints the whole
    falsifying input anyway)."""
    text = repr(what)
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]} ... ({len(text) - limit} characters) ... {text[-half:]}"


def escape(what: object, err: BaseException) -> AssertionError:
    """The failure for an exception that is not passflow's own error type."""
    return AssertionError(
        f"{type(err).__name__} escaped (not a PassflowError) on {shown(what)}: "
        f"{shown(str(err))}"
    )


# --- seeds -------------------------------------------------------------------------


def _seed_files() -> list[Path]:
    files = sorted((ROOT / "tests" / "filecheck").rglob("*.mlir"))
    files += sorted((ROOT / "examples").glob("*.mlir"))
    return [path for path in files if "Output" not in path.parts]


def _xdsl_seed_files() -> list[Path]:
    """The filecheck tests the xDSL wheel installs (tests/differential's corpus):
    many more dialects, for the long run only."""
    import xdsl

    corpus = Path(xdsl.__file__).resolve().parent.parent / "tests" / "filecheck"
    return sorted(corpus.rglob("*.mlir")) if corpus.is_dir() else []


def _chunks(text: str) -> list[str]:
    """`text` split as `--split-input-file` splits it (at `// -----` lines)."""
    chunks: list[str] = [""]
    for line in text.splitlines(keepends=True):
        if line.strip() == "// -----":
            chunks.append("")
        else:
            chunks[-1] += line
    return [chunk for chunk in chunks if chunk.strip()]


def _read_chunks(files: list[Path], limit: int = 8_000) -> list[str]:
    chunks: list[str] = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        chunks += [chunk for chunk in _chunks(text) if len(chunk) <= limit]
    return chunks


SEED_FILES = _seed_files()
SEED_CHUNKS: list[str] = _read_chunks(SEED_FILES) + (
    _read_chunks(_xdsl_seed_files()) if LONG else []
)
"""The inputs mutations start from: every `.mlir` file of the lit suite and the
examples (without lit's outputs), split at `// -----` lines into test cases;
the long run adds xDSL's own filecheck tests."""


@contextlib.contextmanager
def gc_kept() -> Generator[None]:
    """passflow-opt's `main` turns the garbage collector off for its process;
    around an in-process call, put it back so the test session keeps collecting."""
    enabled = gc.isenabled()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
