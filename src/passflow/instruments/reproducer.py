"""Crash and failure reproducers: a file that replays a failing pipeline.

When a pass fails or raises, the reproducer holds the IR as it was before the run
(global mode) or before the failing pass (local mode), and, in MLIR's
`external_resources` section, the pipeline and flags to run on it. The format is
mlir-opt's, so a reproducer moves between `passflow-opt --run-reproducer` and
`mlir-opt --run-reproducer` unchanged (where both know the passes).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TextIO

from passflow import ir
from passflow.diagnostics import (
    UNKNOWN_LOCATION,
    Diagnostic,
    Location,
    PassflowError,
    Severity,
)
from passflow.instrumentation import PassInstrumentation
from passflow.ir import Operation
from passflow.output_file import OutputFileError, write_output
from passflow.pass_base import Pass, PassPipeline

__all__ = [
    "CrashReproducer",
    "ReplayWitness",
    "ReproducerSpec",
    "StreamFactory",
    "describe_pass_run",
    "format_reproducer",
    "read_reproducer",
    "write_reproducer",
]

StreamFactory = Callable[[], TextIO]
"""Opens the stream a reproducer is written to (the caller closes nothing)."""


def escape_string(text: str) -> str:
    """MLIR's `printEscapedString`: backslash doubled, other non-printables as `\\XX`."""
    out: list[str] = []
    for char in text:
        if char == "\\":
            out.append("\\\\")
        elif char.isprintable() and char != '"' and ord(char) < 0x7F:
            out.append(char)
        else:
            out.extend(f"\\{byte:02X}" for byte in char.encode())
    return "".join(out)


def format_reproducer(
    op_text: str,
    pipeline: str,
    *,
    disable_threading: bool,
    verify_each: bool,
    comment: str = "",
) -> str:
    """The file: `comment` as `//` lines, the IR, an empty line, then the
    `mlir_reproducer` resource."""
    flag = "true" if disable_threading else "false"
    verify = "true" if verify_each else "false"
    header = "".join(f"// {line}".rstrip() + "\n" for line in comment.splitlines())
    return (
        f"{header}{op_text.rstrip(chr(10))}\n\n"
        "{-#\n"
        "  external_resources: {\n"
        "    mlir_reproducer: {\n"
        f'      pipeline: "{escape_string(pipeline)}",\n'
        f"      disable_threading: {flag},\n"
        f"      verify_each: {verify}\n"
        "    }\n"
        "  }\n"
        "#-}\n"
    )


@dataclass(frozen=True)
class ReproducerSpec:
    """What `--run-reproducer` applies: the pipeline text and the two flags."""

    pipeline: str
    disable_threading: bool = False
    verify_each: bool = True


def read_reproducer(op: Operation) -> ReproducerSpec | None:
    """The `mlir_reproducer` resource of the file `op` was parsed from, if any."""
    entry = ir.external_resources(op).get("mlir_reproducer")
    if entry is None:
        return None
    pipeline = entry.get("pipeline")
    if not isinstance(pipeline, str):
        raise PassflowError("the 'mlir_reproducer' resource has no 'pipeline' string")
    return ReproducerSpec(
        pipeline,
        bool(entry.get("disable_threading", False)),
        bool(entry.get("verify_each", True)),
    )


def write_reproducer(target: str | StreamFactory, content: str) -> str | None:
    """Write `content`; None on success, else why the stream could not be made."""
    if isinstance(target, str):
        try:
            write_output(target, content)
        except OutputFileError as err:
            return (
                "failed to create output stream: Failed to create reproducer stream: "
                f"{err}"
            )
        return None
    try:
        stream = target()
    except OSError as err:
        return (
            "failed to create output stream: Failed to create reproducer stream: "
            f"cannot open output file '<stream>': {err.strerror}"
        )
    stream.write(content)
    return None


def describe_pass_run(pass_: Pass, op: Operation) -> str:
    """A pass on an op as MLIR's reproducer notes name it:
    `` `TestFailurePass` on 'func.func' operation: @foo ``."""
    name = ir.operation_name(op).name
    symbol = ir.symbol_name(op)
    suffix = f": @{symbol}" if symbol is not None else ""
    return f"`{pass_.display_name}` on '{name}' operation{suffix}"


@dataclass(eq=False)
class _Context:
    """One reproducer candidate: the IR to replay and the pipeline to run on it."""

    op_text: str
    pipeline: str


@dataclass(eq=False)
class CrashReproducer(PassInstrumentation):
    """Writes a reproducer when a pass fails or crashes (MLIR's crash reproducer).

    Global mode snapshots the top-level op when the run starts and replays the whole
    pipeline; local mode snapshots before every pass and replays only the failing
    one (so it needs a serial run, and costs a module print per pass).
    """

    target: str | StreamFactory
    local: bool = False
    _emit: Callable[[Diagnostic], None] | None = None
    _top: Operation | None = None
    _disable_threading: bool = True
    _verify_each: bool = True
    _running: dict[tuple[int, int], tuple[Pass, Operation]] = field(
        default_factory=lambda: dict[tuple[int, int], tuple["Pass", Operation]]()
    )
    _stack: list[_Context] = field(default_factory=lambda: list[_Context]())
    _global: _Context | None = None
    _done: bool = False
    _crashes: list[str] = field(default_factory=lambda: list[str]())
    _pending: Diagnostic | None = None

    # --- driven by the pass manager -------------------------------------------

    def begin_run(
        self,
        top: Operation,
        pm: PassPipeline,
        emit: Callable[[Diagnostic], None],
        *,
        disable_threading: bool,
        verify_each: bool,
    ) -> None:
        """Start of `PassManager.run`, after finalization: take the global snapshot."""
        self._emit = emit
        self._top = top
        self._disable_threading = disable_threading
        self._verify_each = verify_each
        self._running.clear()
        self._stack.clear()
        self._done = False
        self._global = None
        self._crashes.clear()
        self._pending = None
        if not self.local:
            # MLIR's PassCrashRecovery: the op's name, then the top-level
            # passes joined by ", " (not `str(pm)`, whose anchor may be `any`).
            pipeline = ", ".join(str(p) for p in pm.passes)
            self._global = _Context(
                ir.print_op(top), f"{ir.operation_name(top).name}({pipeline})"
            )

    def end_run(self, failed: bool, *, interrupted: bool = False) -> None:
        """End of the run; a failure no hook saw (a crash) still gets its file,
        and so does an interrupted run, whose file says it was interrupted.

        The file is written when the failure happens (it holds the IR of that
        moment), but its diagnostic is emitted here, after every diagnostic of
        the run: the failing pass's own errors, and those of its siblings, come
        before the message that says where their reproducer is.
        """
        if interrupted and not self._done and self._top is not None:
            self._finalize(interrupted=True)
        elif failed and not self._done and self._top is not None:
            self._finalize()
        pending, self._pending = self._pending, None
        if pending is not None and self._emit is not None:
            self._emit(pending)
        self._running.clear()
        self._stack.clear()
        self._global = None

    def record_crash(self, report: str) -> None:
        """A pass raised: as in MLIR's crash recovery, the run reports only the
        reproducer's diagnostic, and the crash (with its Python traceback) is
        written at the top of the reproducer file as comments."""
        self._crashes.append(report)

    # --- hooks ------------------------------------------------------------------

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        if pass_.is_adaptor:
            return
        self._running[(id(pass_), id(op))] = (pass_, op)
        if self.local and self._top is not None:
            self._stack.append(
                _Context(ir.print_op(self._top), self._local_pipeline(pass_, op))
            )

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        if pass_.is_adaptor:
            return
        self._running.pop((id(pass_), id(op)), None)
        if self.local and self._stack:
            self._stack.pop()

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        if pass_.is_adaptor or self._done:
            return
        # MLIR: a failure is reported on the failing op (its instrumentation's
        # runAfterPassFailed); a crash on the op the run started on.
        self._finalize(None if self._crashes else op)

    # --- generation ---------------------------------------------------------------

    def _local_pipeline(self, pass_: Pass, op: Operation) -> str:
        assert self._top is not None
        names: list[str] = []
        current: Operation | None = op
        while current is not None and current is not self._top:
            names.append(ir.operation_name(current).name)
            current = current.parent_op()
        names.reverse()
        inner = "".join(f"{n}(" for n in names) + str(pass_) + ")" * len(names)
        return f"{ir.operation_name(self._top).name}({inner})"

    def _finalize(
        self, at: Operation | None = None, *, interrupted: bool = False
    ) -> None:
        self._done = True
        context = self._stack[-1] if self.local and self._stack else self._global
        if context is None:
            return
        running = [describe_pass_run(p, o) for p, o in self._running.values()]
        executing = (
            (running[-1] if running else "")
            if self.local
            else f"[{', '.join(running)}]"
        )
        comment = "\n".join(self._crashes)
        if interrupted:
            comment = _INTERRUPTED.format(executing=executing)
        content = format_reproducer(
            context.op_text,
            context.pipeline,
            disable_threading=self._disable_threading,
            verify_each=self._verify_each,
            comment=comment,
        )
        problem = write_reproducer(self.target, content)
        where = self.target if isinstance(self.target, str) else "<stream>"
        outcome = problem or f"reproducer generated at `{where}`"
        location = (
            ir.location(at or self._top) if self._top is not None else UNKNOWN_LOCATION
        )
        if interrupted:  # no failure to report: say only where the file is
            if self._emit is not None:
                self._emit(
                    Diagnostic(
                        Severity.NOTE,
                        f"interrupted while executing {executing}: {outcome}",
                        location,
                    )
                )
            return
        note = f"Pipeline failed while executing {executing}: {outcome}"
        diagnostic = Diagnostic(
            Severity.ERROR,
            "Failures have been detected while processing an MLIR pass pipeline",
            location,
        )
        diagnostic.attach_note(note)
        self._pending = diagnostic


@dataclass(eq=False)
class ReplayWitness(PassInstrumentation):
    """Watches a reproducer's replay (`--run-reproducer`) for the failure it
    was written for, so that the replay can say what it reproduced.

    mlir-opt replays a failing pass in silence when the pass emits nothing
    (exit status 1, no output); `report` is the line that says which pass
    failed on which op: an error when the run emitted none, else a note after
    the run's own errors.
    """

    failure: str | None = None
    """The first failing pass and its op, as the reproducer's note names them."""
    location: Location = UNKNOWN_LOCATION

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        if pass_.is_adaptor or self.failure is not None:
            return
        self.failure = describe_pass_run(pass_, op)
        self.location = ir.location(op)

    def report(self, emitted: Sequence[Diagnostic]) -> Diagnostic | None:
        """The replay's verdict after a failed run that emitted `emitted`, or
        None if no pass failed (the run failed before any pass ran)."""
        if self.failure is None:
            return None
        errors = any(d.severity is Severity.ERROR for d in emitted)
        return Diagnostic(
            Severity.NOTE if errors else Severity.ERROR,
            f"reproduced the failure: the pipeline failed while executing "
            f"{self.failure}",
            self.location,
        )


_INTERRUPTED = """\
This reproducer was written because the run was interrupted (Ctrl-C), not
because a pass failed: it was executing {executing}.
Replaying it runs the whole pipeline on the input the run started with; that
need not fail (exit status 0 if every pass succeeds)."""
