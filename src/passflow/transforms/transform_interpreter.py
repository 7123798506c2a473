"""`transform-interpreter`: run a transform script's `__transform_main` with
xDSL's interpreter, its `transform.apply_registered_pass` through passflow.

xDSL's interpreter looks `apply_registered_pass` names up among xDSL's own
passes and applies them outside any pass manager. This pass registers, with
the override xDSL's `Interpreter.register_implementations` offers, an
implementation of that one op that looks the name up in passflow's registry
(passflow's passes, plugins, registered pipelines and graphs, and xDSL's
passes) and runs it as a dynamic pipeline of this pass (`Pass.run_pipeline`),
as MLIR's transform interpreter runs its pass manager. So instrumentation,
IR printing, timing, statistics and the verifier see every pass the script
applies. The op's `options` dictionary becomes the pass's option text
(`{"max-iterations" = 3 : i64}` is `max-iterations=3`), parsed as mlir-opt
parses `--pass-pipeline` options. Every other transform op is xDSL's.
"""

from __future__ import annotations

from passflow.options import Option
from passflow.pass_base import OperationPass

__all__ = ["TransformInterpreter"]


class TransformInterpreter(OperationPass):
    """Interpret the transform script's entry point on the module it is in,
    applying registered passes through passflow's pass manager."""

    name = "TransformInterpreter"
    argument = "transform-interpreter"
    summary = "Transform dialect interpreter"
    description = """\
Runs the named sequence `entry-point` of the transform dialect script nested in
the module on the module. `transform.apply_registered_pass` runs passflow's
registered passes and pipelines (xDSL's passes among them) as dynamic pipelines
of this pass, with the op's options.
"""
    op_name = "builtin.module"

    entry_point = Option(
        "__transform_main",
        argument="entry-point",
        help="Entry point of the pass pipeline",
    )
    allow_unsafe = Option(
        False,
        argument="allow-unsafe-passes",
        help="Let the script apply passes that start programs or read files",
    )

    def unsafe_effect(self) -> str | None:
        """The script is part of the input: it may apply a pass that starts a
        program or reads a file only with `allow-unsafe-passes`, which a
        pipeline from an untrusted source may not set."""
        if self.allow_unsafe:
            return "lets the transform script apply passes that start programs or read files"
        return None

    def run_on_operation(self) -> None:
        # Only when it runs: xDSL's interpreter brings its tiling, backend and
        # pass modules, which listing or parsing pipelines must not pay for.
        from passflow.transforms._interpreting import interpret

        interpret(self, self.entry_point, trusted=self.allow_unsafe)
