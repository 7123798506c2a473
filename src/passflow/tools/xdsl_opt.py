"""passflow-xdsl-opt: xdsl-opt's command line, with passflow's pass manager underneath.

xDSL projects test with `xdsl-opt %s -p licm,cse{...} | filecheck %s`: a bare
pass list in xDSL's option syntax, xDSL's printer and xDSL's error texts, which
`passflow-opt` (mlir-opt's command line) cannot take. This tool is xDSL's own
`xDSLOptMain`, so its flags, `--help`, input chunks, targets, output and the
`--verify-diagnostics` / `--parsing-diagnostics` texts are xdsl-opt's, byte for
byte; only the pipeline is passflow's: `-p` becomes a `PassManager` whose
passes are xDSL's (a name xdsl-opt knows means xDSL's pass, as the project's
tests expect) or, for the names only passflow knows, passflow's registered
passes. Between passes it does what xdsl-opt's pipeline callback does: the
timing line of `--time-passes`, xDSL's verifier, `--print-between-passes`.

Where passflow sees more than xdsl-opt (its MLIR verifier after xDSL's), the
failure is passflow's located diagnostic. An error xdsl-opt would end with a
traceback ends here with that traceback's last line (the exception and its
message), exit status 1.
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Sequence
from typing import ClassVar, NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.diagnostic import Diagnostic as XDSLDiagnostic
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException
from xdsl.xdsl_opt_main import xDSLOptMain

import passflow
from passflow import ir
from passflow.all_passes import register_all_passes
from passflow.diagnostics import UNKNOWN_LOCATION, Diagnostic, PassPipelineError
from passflow.instrumentation import PassInstrumentation
from passflow.ir import Operation
from passflow.manager import Nesting
from passflow.pass_base import Pass
from passflow.pass_manager import PassManager
from passflow.registry import lookup_pass
from passflow.xdsl_adapter import adapt
from passflow.xdsl_passes import XDSLPass, adapter_for

__all__ = ["PassflowDiagnostics", "PassflowXDSLOptMain", "main"]


class PassflowDiagnostics(DiagnosticException):
    """Errors passflow reported itself (a passflow pass failed, or passflow's
    verifier found what xDSL's did not), one per line; shown as xdsl-opt shows a
    verifier's exception."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        super().__init__("\n".join(_text(d) for d in diagnostics))
        self.diagnostics = list(diagnostics)


def _text(diagnostic: Diagnostic) -> str:
    """`diagnostic` as passflow prints it, without a position xDSL's parser
    did not give (`error: ...` rather than `<unknown>:0: error: ...`)."""
    if diagnostic.location != UNKNOWN_LOCATION:
        return str(diagnostic)
    lines = [f"{diagnostic.severity.value}: {diagnostic.message}"]
    lines.extend(_text(note) for note in diagnostic.notes)
    return "\n".join(lines)


def _raise_marked(failure: PassflowDiagnostics) -> NoReturn:
    """Raise `failure` with the module printed and the ops its diagnostics are
    about marked, as xDSL's `op.emit_error` presents an error."""
    marked = XDSLDiagnostic()
    for diagnostic in failure.diagnostics:
        if isinstance(diagnostic.operation, Operation):
            marked.add_message(diagnostic.operation, diagnostic.message)
    if not marked.op_messages:
        raise failure
    marked.raise_exception(next(iter(marked.op_messages)), failure)


class _BetweenPasses(PassInstrumentation):
    """xdsl-opt's pipeline callback, as hooks: after each pass its timing line,
    xDSL's verifier (then passflow's), and the IR unless it was the last pass.
    Only the passes on `root` count (a pass nested on functions counts as its
    adaptor). It keeps the first exception of the run, to be raised as xdsl-opt
    raises it."""

    def __init__(self, args: argparse.Namespace, root: Operation, last: Pass) -> None:
        self.args = args
        self.root = root
        self.last = last
        self.started = time.perf_counter()
        self.failure: Exception | None = None
        self.diagnostic: Diagnostic | None = None

    def run_before_pass(self, pass_: Pass, op: Operation) -> None:
        if op is self.root:
            self.started = time.perf_counter()

    def run_after_pass(self, pass_: Pass, op: Operation) -> None:
        if op is not self.root:
            return
        name = pass_.argument or str(pass_)
        if self.args.time_passes:
            duration = time.perf_counter() - self.started
            print(f"Pass {name} took {duration} seconds")
        if not self.args.disable_verify:
            try:
                op.verify()
            except DiagnosticException as err:
                self.failure = err
                pass_.signal_pass_failure()
                return
            self.diagnostic = ir.verify(op)
            if self.diagnostic is not None:
                pass_.signal_pass_failure()
                return
        if pass_ is not self.last and self.args.print_between_passes:
            print(f"IR after {name}:")
            Printer(stream=sys.stdout).print_op(op)
            print("\n\n\n")

    def run_after_pass_failed(self, pass_: Pass, op: Operation) -> None:
        if self.failure is None and isinstance(pass_, XDSLPass):
            self.failure = pass_.failure


class PassflowXDSLOptMain(xDSLOptMain):
    """xDSL's `xDSLOptMain` whose passes run in a passflow `PassManager`.

    A project's own `xDSLOptMain` subclass can derive from this class instead to
    keep its dialects, passes and targets and gain passflow's pass manager.
    """

    version_format: ClassVar[str] = (
        "xdsl-opt built from xdsl version {xdsl_version}"
        f" (passflow-xdsl-opt {passflow.__version__})"
    )

    def __init__(
        self,
        description: str = "xDSL modular optimizer driver, on passflow's pass manager",
        args: Sequence[str] | None = None,
    ) -> None:
        self.passes: list[Pass] = []
        super().__init__(description, args)

    def setup_pipeline(self) -> None:
        """The passes of `-p`, parsed as xdsl-opt parses them, each made into a
        passflow pass; unknown names fail together, with xdsl-opt's message."""
        specs = list(parse_pipeline(self.args.passes))
        unknown = [spec.name for spec in specs if self._factory(spec) is None]
        if unknown:
            raise ValueError(f"Unrecognized passes: {unknown}")
        for spec in specs:
            make = self._factory(spec)
            assert make is not None
            self.passes.append(make())

    def _factory(self, spec: ArgSpec) -> Callable[[], Pass] | None:
        """How to make the pass `spec` names: xdsl-opt's pass of that name (or
        one the subclass registers) through passflow's xDSL adapter, else
        passflow's registered pass."""
        name = spec.name
        xdsl_factory = self.available_passes.get(name)
        adapter = adapter_for(name) if xdsl_factory is not None else None
        if xdsl_factory is not None and adapter is None:
            project_class = xdsl_factory()  # a pass the subclass registers
            return lambda: adapt(project_class.from_pass_spec(spec))
        if xdsl_factory is not None and adapter is not None:
            xdsl_class = xdsl_factory()

            def make_xdsl() -> Pass:
                pass_ = adapter()
                pass_.xdsl_pass = xdsl_class.from_pass_spec(spec)
                return pass_

            return make_xdsl
        register_all_passes()
        info = lookup_pass(name)
        if info is None:
            return None
        options = str(spec)[len(name) :]
        return lambda: info.create(options[1:-1])

    def apply_passes(self, prog: ModuleOp) -> None:
        """Verify the parsed module (as xdsl-opt's callback does before the
        first pass), then run the passes in a passflow `PassManager`; a failure
        is raised as xdsl-opt would raise it."""
        if not self.args.disable_verify:
            prog.verify()
            problem = ir.verify(prog)
            if problem is not None:
                _raise_marked(PassflowDiagnostics([problem]))
        if not self.passes:
            return
        pm = PassManager(prog.name, self.ctx, nesting=Nesting.IMPLICIT)
        pm.enable_verifier(False)  # the hooks verify as xdsl-opt does
        pm.enable_emit_pass_error_on_failure()  # a silent failure says which pass
        for pass_ in self.passes:
            pm.add(pass_)
        hooks = _BetweenPasses(self.args, prog, pm.passes[-1])
        pm.add_instrumentation(hooks)
        try:
            pm.run(prog)
        except PassPipelineError as err:
            if hooks.failure is not None:
                raise hooks.failure from None
            shown = [hooks.diagnostic] if hooks.diagnostic is not None else []
            _raise_marked(PassflowDiagnostics(shown or err.diagnostics))


def main(argv: Sequence[str] | None = None) -> int:
    """`passflow-xdsl-opt`: the exit status of xdsl-opt's run of `argv`."""
    warnings.filterwarnings("default", category=DeprecationWarning)
    try:
        PassflowXDSLOptMain(args=argv).run()
    except PassflowDiagnostics as err:  # passflow's own: no exception name
        sys.stderr.write("\n".join([str(err), *getattr(err, "__notes__", [])]) + "\n")
        return 1
    except (Exception, ArgSpecParseError) as err:  # xdsl-opt's traceback's end
        sys.stderr.write("".join(traceback.format_exception_only(err)))
        return 1
    return 0
