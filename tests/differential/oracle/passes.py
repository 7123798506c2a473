"""The passes the oracle runs, and why each registered pass it does not run is left out.

Every pass passflow registers as its own (`passflow.transforms`) is run on every
input mlir-opt accepts, and mlir-opt must accept the output (`test_validity`); the
optimisations among them also run the generated programs before and after
(`test_execution`). `test_every_registered_pass_is_judged` keeps this table complete.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EXCLUDED", "EXCLUDED_PASSES", "PASSES", "OraclePass", "argv"]


@dataclass(frozen=True)
class OraclePass:
    name: str
    """The registered name."""
    element: str
    """The pipeline element passflow-opt runs (the name, with options if needed)."""
    optimisation: bool = True
    """Compared by running programs before and after (`test_execution`)."""


PASSES: tuple[OraclePass, ...] = (
    OraclePass("canonicalize", "canonicalize"),
    OraclePass("cse", "cse"),
    OraclePass("sccp", "sccp"),
    OraclePass("inline", "inline"),
    OraclePass("symbol-dce", "symbol-dce"),
    # `@main` stays public, or the ExecutionEngine could not find it.
    OraclePass("symbol-privatize", "symbol-privatize{exclude=main}"),
    OraclePass("loop-invariant-code-motion", "loop-invariant-code-motion"),
    OraclePass("control-flow-sink", "control-flow-sink"),
    OraclePass("mem2reg", "mem2reg"),
    OraclePass("sroa", "sroa"),
    OraclePass("remove-dead-values", "remove-dead-values"),
    OraclePass("topological-sort", "topological-sort"),
    OraclePass(
        "composite-fixed-point-pass",
        "composite-fixed-point-pass{pipeline=canonicalize,cse,sccp}",
    ),
    OraclePass("strip-debuginfo", "strip-debuginfo", optimisation=False),
    OraclePass("print-op-stats", "print-op-stats", optimisation=False),
    OraclePass("print-ir", "print-ir", optimisation=False),
    OraclePass("view-op-graph", "view-op-graph", optimisation=False),
)

EXCLUDED: dict[str, str] = {
    "passflow.testing": (
        "MLIR's test-* passes: mlir-opt's wheel is built without them, and their "
        "output holds ops of passflow's test dialect that only mean something to "
        "passflow (tests/test_test_passes.py compares them with mlir-opt's outputs)"
    ),
    "passflow.xdsl_passes": (
        "xDSL's passes: their output must equal xdsl-opt's, which "
        "tests/differential checks on xDSL's whole corpus; most lower to dialects "
        "mlir-opt does not have (riscv, x86, snitch, varith, ptr_xdsl, ...)"
    ),
}
"""Registered passes the oracle does not run, by the package that defines them."""

EXCLUDED_PASSES: dict[str, str] = {
    "transform-interpreter": (
        "it runs the transform script the input carries; the inputs the oracle "
        "judges carry none (the pass then fails with a located error), and a "
        "script's `transform.apply_registered_pass` runs passes the oracle judges "
        "one by one"
    ),
}
"""Registered passes the oracle does not run, by their argument."""


def argv(element: str) -> list[str]:
    """passflow-opt's command line running the pipeline element `element` on an
    input read from stdin (in-process)."""
    return [
        "-",
        f"--pass-pipeline=builtin.module({element})",
        "--allow-unregistered-dialect",
        # Children run in this process: no forked workers inside pytest.
        "--mlir-disable-threading",
    ]
