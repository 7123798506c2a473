"""The interpreting half of `transform-interpreter`: xDSL's interpreter with
passflow's `transform.apply_registered_pass` (see `transform_interpreter`)."""

from __future__ import annotations

import contextlib
from typing import cast

from xdsl.dialects import builtin, transform
from xdsl.interpreter import Interpreter, InterpreterFunctions, PythonValues, impl
from xdsl.interpreter import register_impls as xdsl_register_impls
from xdsl.interpreters.printf import PrintfFunctions
from xdsl.interpreters.transform import OperationHandle, TransformFunctions
from xdsl.ir import Attribute, Operation
from xdsl.transforms import get_all_passes
from xdsl.utils.exceptions import InterpretationError, PassFailedException
from xdsl.utils.hints import isa

from passflow import ir
from passflow.diagnostics import Diagnostic, PassflowError, Severity
from passflow.pass_base import Pass
from passflow.pipeline_text import parse_pass_pipeline
from passflow.trust import UnsafePassError, untrusted

__all__ = ["interpret", "option_text"]

_SOURCE = "a transform script"


def interpret(owner: Pass, entry_point: str, *, trusted: bool) -> None:
    """Run the named sequence `entry_point` on `owner`'s module, failing `owner`
    (with a located error) when the script or a pass it applies fails.

    The script is part of the input, so unless `trusted` the passes it names
    are built and run as a pipeline from an untrusted source (`passflow.trust`):
    one that would start a program or read a file is refused.
    """
    module = owner.get_operation()
    assert isinstance(module, builtin.ModuleOp)
    try:
        schedule = _entry(module, entry_point)
        interpreter = Interpreter(module)
        interpreter.register_implementations(
            TransformFunctions(owner.get_context(), get_all_passes())
        )
        interpreter.register_implementations(
            _ApplyThroughPassflow(owner, trusted), override=True
        )
        interpreter.register_implementations(PrintfFunctions())
        interpreter.call_op(schedule, (OperationHandle(module),))
    except _Failed:
        owner.signal_pass_failure()
    except (InterpretationError, PassFailedException) as err:
        owner.emit_error(module, str(err))
        owner.signal_pass_failure()


class _Failed(Exception):
    """A pass the script applied failed (its diagnostics are out already)."""


@xdsl_register_impls
class _ApplyThroughPassflow(InterpreterFunctions):
    """`transform.apply_registered_pass`, run by the interpreting pass."""

    def __init__(self, owner: Pass, trusted: bool) -> None:
        self.owner = owner
        self.trusted = trusted

    @impl(transform.ApplyRegisteredPassOp)
    def run_apply_registered_pass_op(
        self,
        interpreter: Interpreter,
        op: transform.ApplyRegisteredPassOp,
        args: PythonValues,
    ) -> PythonValues:
        (targets,) = args
        assert isa(targets, OperationHandle)
        owner = self.owner
        try:
            options = option_text(op.options)
        except ValueError as err:
            owner.emit_diagnostic(Diagnostic(Severity.ERROR, str(err), ir.location(op)))
            raise _Failed from err
        element = op.pass_name.data + (f"{{{options}}}" if options else "")
        for target in targets.ops:
            with contextlib.nullcontext() if self.trusted else untrusted(_SOURCE):
                self.apply(op, element, target)
        return (targets,)

    def apply(
        self, op: transform.ApplyRegisteredPassOp, element: str, target: Operation
    ) -> None:
        owner = self.owner
        try:
            pipeline = parse_pass_pipeline(f"{target.name}({element})")
        except PassflowError as err:
            error = Diagnostic(
                Severity.ERROR,
                f"transform.apply_registered_pass '{element}': {err}",
                ir.location(op),
            )
            error.attach_note(
                "fix: if you trust this script, run "
                "transform-interpreter{allow-unsafe-passes=true}"
                if isinstance(err, UnsafePassError)
                else "fix: name a pass or pipeline passflow-opt --list-passes shows, "
                "with options it declares"
            )
            owner.emit_diagnostic(error)
            raise _Failed from err
        if not owner.run_pipeline(pipeline, target):
            raise _Failed


def _entry(module: builtin.ModuleOp, name: str) -> transform.NamedSequenceOp:
    for op in module.walk():
        if isinstance(op, transform.NamedSequenceOp) and op.sym_name.data == name:
            return op
    raise PassFailedException(
        f"could not find a nested named sequence with name: {name}"
    )


def option_text(options: builtin.DictionaryAttr) -> str:
    """The op's options as pass option text: `name=value` pairs, sorted as the
    dictionary is; a list is comma-separated, a bool `true`/`false`. Raises
    `ValueError` for a value an option cannot take."""
    return " ".join(
        f"{name}={_value(name, value)}" for name, value in options.data.items()
    )


def _value(name: str, value: object) -> str:
    if isinstance(value, builtin.StringAttr):
        text = value.data
        return f'"{text}"' if any(c in text for c in " ,{}") else text
    if isinstance(value, builtin.IntegerAttr):
        integer = cast(builtin.IntegerAttr[builtin.IntegerType], value)
        number = integer.value.data
        if integer.type == builtin.i1:
            return "true" if number else "false"
        return str(number)
    if isinstance(value, builtin.FloatAttr):
        return repr(value.value.data)
    if isinstance(value, builtin.UnitAttr):
        return "true"
    if isinstance(value, builtin.ArrayAttr):
        elements = cast(builtin.ArrayAttr[Attribute], value).data
        return ",".join(_value(name, element) for element in elements)
    raise ValueError(
        f"option '{name}' of transform.apply_registered_pass is {value}, which no "
        "pass option takes; give a string, an integer, a float, a bool or an array"
    )
