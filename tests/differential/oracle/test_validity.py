"""mlir-opt accepts passflow-opt's output of every input mlir-opt accepts, for every
pass of `passes.PASSES` (docs/conformance.md, "The validity oracle").

Inputs: passflow's lit corpus, xDSL's filecheck corpus (a sample; all of it under
`make fuzz`) and generated programs. Each output is judged by mlir-opt 22.1.8 with
`--allow-unregistered-dialect`; an output it rejects is a failure unless
`known.KNOWN_INVALID` lists it.
"""

from __future__ import annotations

import pytest

from passflow import registry
from passflow.all_passes import BUILTIN_PLUGINS, register_all_passes

from .inputs import (
    LONG,
    Input,
    accepted,
    corpus,
    passflow_output,
    programs,
    xdsl_sample,
)
from .known import KNOWN_INVALID
from .passes import EXCLUDED, EXCLUDED_PASSES, PASSES, OraclePass
from .reference import rejections


def _inputs(label: str) -> tuple[Input, ...]:
    if label == "generated":
        return accepted(programs())
    return accepted(corpus("lit") if label == "lit" else xdsl_sample())


def invalid_outputs(pass_: OraclePass, inputs: tuple[Input, ...]) -> dict[str, str]:
    """The inputs whose output mlir-opt rejects, with its error (and the output).

    An input passflow-opt itself fails on is no invalid output (mlir-opt fails on
    it too for the passes here, or it is an error test); a crash is."""
    outputs: list[tuple[Input, str]] = []
    found: dict[str, str] = {}
    for item in inputs:
        outcome = passflow_output(pass_.element, item.text)
        if outcome.traceback is not None:
            found[item.origin] = f"passflow-opt crashed:\n{outcome.traceback}"
        elif outcome.output is not None:
            outputs.append((item, outcome.output))
    errors = rejections([output for _, output in outputs])
    for (item, output), error in zip(outputs, errors, strict=True):
        if error is not None:
            found[item.origin] = f"{error}\n--- output:\n{output}"
    return found


@pytest.mark.parametrize("label", ["lit", "xdsl", "generated"])
@pytest.mark.parametrize("pass_", PASSES, ids=[p.name for p in PASSES])
def test_mlir_opt_accepts_the_output(label: str, pass_: OraclePass) -> None:
    inputs = _inputs(label)
    assert inputs, f"no input of the {label} corpus is accepted by mlir-opt"
    found = invalid_outputs(pass_, inputs)
    known = {
        refusal.origin
        for refusal in KNOWN_INVALID
        if refusal.pass_name == pass_.name and refusal.origin.startswith(label + ":")
    }
    new = {origin: error for origin, error in found.items() if origin not in known}
    stale = sorted(origin for origin in known if origin not in found)
    if label == "xdsl" and not LONG:
        ran = {item.origin for item in inputs}
        stale = [origin for origin in stale if origin in ran]
    assert not new, "\n\n".join(
        f"mlir-opt rejects passflow-opt's {pass_.element} output of {origin}: {error}"
        for origin, error in new.items()
    )
    assert not stale, (
        f"stale entries of tests/differential/oracle/known.py (now valid): {stale}"
    )


def test_every_registered_pass_is_judged() -> None:
    register_all_passes()
    judged = {p.name for p in PASSES}
    for info in registry.registered_passes():
        if info.source not in BUILTIN_PLUGINS:
            continue  # a plugin another test of this process loaded
        package = ".".join(info.pass_class.__module__.split(".")[:2])
        excluded = package in EXCLUDED or info.argument in EXCLUDED_PASSES
        assert info.argument in judged or excluded, (
            f"'{info.argument}' ({package}) is neither in tests/differential/oracle/passes.py's "
            "PASSES nor excluded there with a reason"
        )


def test_the_oracle_rejects_invalid_ir() -> None:
    # The judge itself: a redefinition and a use before definition are errors.
    assert rejections(
        [
            "func.func @f() {\n  %a = arith.constant 1 : i32\n"
            "  %a = arith.constant 2 : i32\n  return\n}\n",
            "func.func @g() -> i32 {\n  return %b : i32\n}\n",
            "func.func @h() {\n  return\n}\n",
        ]
    )[:2] != [None, None]
