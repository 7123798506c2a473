"""Both tools, in this process: xDSL's `xDSLOptMain` and `passflow.tools.opt.main`.

A subprocess per chunk would cost a Python start-up and xDSL's import (about a
second) each time; in-process, a chunk costs what its passes cost.

Each chunk of a case is run on its own by both tools, so a failing chunk is paired
with its own error and never hides the chunks after it (xdsl-opt without
`--verify-diagnostics` stops at the first error; the comparison is per chunk).
"""

from __future__ import annotations

import contextlib
import gc
import io
import re
import sys
import traceback
import warnings
from collections.abc import Generator
from dataclasses import dataclass

from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.diagnostic import Diagnostic as XDSLDiagnostic
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from passflow.tools import opt

from .corpus import Case, Chunk

__all__ = [
    "NATIVE",
    "Outcome",
    "one_line",
    "passflow_argv",
    "passflow_pipeline",
    "run_passflow",
    "run_passflow_text",
    "run_xdsl",
]

NATIVE: dict[str, str] = {
    "canonicalize": "canonicalize",
    "cse": "cse",
    "licm": "loop-invariant-code-motion",
}
"""xDSL pass names that passflow runs with its own implementation, and the name
passflow-opt knows it by. Every other xDSL name runs through passflow's xDSL
adapter (`passflow.xdsl_passes`), which must give xDSL's output exactly. `dce` is
one of those: MLIR has no `dce` pass (dead code is erased by canonicalize), so
passflow has no native counterpart. passflow's `inline`, `symbol-dce` and
`symbol-privatize` have no xDSL counterpart, so this corpus never runs them."""


@dataclass(frozen=True)
class Outcome:
    """What one tool made of one chunk."""

    output: str | None
    """stdout when the chunk succeeded (the printed IR, after whatever passes
    printed); None when it failed."""
    error: str | None
    """The first error line, as printed (None on success)."""
    details: str = ""
    """Everything the tool said about the failure (stderr, exception notes)."""
    traceback: str | None = None
    """A Python traceback the tool printed or raised, if any."""
    annotations: tuple[str, ...] = ()
    """xdsl-opt only: the messages xDSL attached to ops in the printed IR that
    follows the error (`Operation.emit_error`), in that order."""

    @property
    def ok(self) -> bool:
        return self.output is not None


@contextlib.contextmanager
def _captured(stdin: str = "") -> Generator[tuple[io.StringIO, io.StringIO]]:
    out, err = io.StringIO(), io.StringIO()
    saved_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        with (
            contextlib.redirect_stdout(out),
            contextlib.redirect_stderr(err),
            warnings.catch_warnings(),
        ):
            # xDSL's deprecation warnings (and `test-deprecation`'s, on purpose)
            # come from xDSL in both tools; they are not what is compared.
            warnings.simplefilter("ignore")
            yield out, err
    finally:
        sys.stdin = saved_stdin


# --- xDSL ---------------------------------------------------------------------


def one_line(message: str) -> str:
    """A multi-line message on one line (MLIR's diagnostics are one line)."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def _annotations(err: BaseException) -> tuple[str, ...]:
    """The messages xDSL attached to ops when it raised `err`
    (`Operation.emit_error`): xdsl-opt prints them under the op, in the printed
    IR that follows the exception's message. xDSL keeps them only in the
    `Diagnostic` whose `raise_exception` raised `err`, a frame of its traceback."""
    code = XDSLDiagnostic.raise_exception.__code__
    messages: list[str] = []
    tb = err.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code is code:
            found = tb.tb_frame.f_locals.get("self")
            if isinstance(found, XDSLDiagnostic):
                messages = [
                    one_line(text)
                    for texts in found.op_messages.values()
                    for text in texts
                ]
        tb = tb.tb_next
    return tuple(messages)


def _xdsl_error(err: BaseException) -> Outcome:
    """A chunk xdsl-opt failed on. A `ParseError` gives its message; any other
    exception `Type: message`. A `DiagnosticException` (verifier, pass failure)
    is how xdsl-opt reports an error; anything else is a crash of xDSL itself,
    and its traceback is kept."""
    notes: list[str] = getattr(err, "__notes__", [])
    if isinstance(err, ParseError):
        return Outcome(None, one_line(err.msg), str(err))
    message = str(err)
    crash = None
    if not isinstance(err, DiagnosticException):
        crash = "".join(traceback.format_exception(err))
    return Outcome(
        None,
        f"{type(err).__name__}: {one_line(message)}",
        "\n".join([message, *notes]),
        crash,
        _annotations(err),
    )


def run_xdsl(case: Case, chunks: list[Chunk]) -> list[Outcome]:
    """xdsl-opt on each chunk: `xDSLOptMain` built from the RUN line's flags, then
    its own per-chunk steps (`parse_chunk`, `apply_passes`,
    `output_resulting_program`), as `xDSLOptMain.run` does for every chunk."""
    with _captured():
        try:
            tool = xDSLOptMain(args=list(case.xdsl_argv))
        except (Exception, SystemExit, ArgSpecParseError) as err:
            # argparse exits; a malformed pipeline raises a BaseException
            failed = _xdsl_error(err)
            return [failed for _ in chunks]
    outcomes: list[Outcome] = []
    for chunk in chunks:
        with _captured() as (out, _):
            try:
                module = tool.parse_chunk(io.BytesIO(chunk.text.encode()), "mlir")
                if module is not None:
                    tool.apply_passes(module)
                    out.write(tool.output_resulting_program(module))
            except Exception as err:
                outcomes.append(_xdsl_error(err))
                continue
        outcomes.append(Outcome(out.getvalue(), None))
    return outcomes


# --- passflow -----------------------------------------------------------------


def _translate(spec: ArgSpec) -> str:
    name = NATIVE.get(spec.name)
    if name is None:
        return str(spec)
    if spec.parameters:  # no case does this; say so rather than guess a mapping
        raise ValueError(f"options of xDSL's '{spec.name}' have no passflow mapping")
    return name


def passflow_pipeline(xdsl_pipeline: str) -> str:
    """xDSL's `a,b{opt=v}` as MLIR's anchored `builtin.module(a,b{opt=v})`, with
    xDSL names passflow implements natively renamed (`NATIVE`). A pipeline xDSL
    cannot parse is passed on as written, for passflow-opt to reject."""
    try:
        specs = list(parse_pipeline(xdsl_pipeline))
    except (Exception, ArgSpecParseError):
        return f"builtin.module({xdsl_pipeline})"
    return f"builtin.module({','.join(_translate(spec) for spec in specs)})"


def passflow_argv(case: Case) -> list[str]:
    """passflow-opt's command line for one chunk (read from stdin)."""
    argv = [
        "-",
        f"--pass-pipeline={passflow_pipeline(case.pipeline)}",
        # Children run in this process: no forked workers inside pytest. Output
        # and diagnostics are the same with every executor (tests/test_execution).
        "--mlir-disable-threading",
    ]
    if case.allow_unregistered:
        argv.append("--allow-unregistered-dialect")
    if case.generic:
        argv.append("--mlir-print-op-generic")
    if case.no_implicit_module:
        argv.append("--no-implicit-module")
    return argv


_ERROR = re.compile(r"error: (.*)$")


def run_passflow(case: Case, chunks: list[Chunk]) -> list[Outcome]:
    """passflow-opt (`passflow.tools.opt.main`) on each chunk."""
    argv = passflow_argv(case)
    return [run_passflow_text(argv, chunk.text) for chunk in chunks]


def run_passflow_text(argv: list[str], text: str) -> Outcome:
    """passflow-opt (`passflow.tools.opt.main`) with `argv` on `text` as stdin."""
    collecting = gc.isenabled()
    crash: str | None = None
    with _captured(text) as (out, err):
        try:
            status = opt.main(argv)
        except SystemExit as exit_:
            status = exit_.code if isinstance(exit_.code, int) else 1
        except Exception as raised:  # out of main: always a defect
            status = 1
            crash = "".join(traceback.format_exception(raised))
        finally:
            if collecting:  # main turns the collector off for its process
                gc.enable()
    stderr = err.getvalue()
    if crash is None and "Traceback (most recent call last)" in stderr:
        crash = stderr
    if status == 0:
        return Outcome(out.getvalue(), None, stderr, crash)
    first = next(
        (m.group(1) for line in stderr.splitlines() if (m := _ERROR.search(line))),
        None,
    )
    if first is None:
        lines = stderr.strip().splitlines() or [f"exit status {status}, no message"]
        first = lines[0]
    if crash is not None and stderr == "":
        first = crash.strip().splitlines()[-1]
    return Outcome(None, first, stderr or (crash or ""), crash)
