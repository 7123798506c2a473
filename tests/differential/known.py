"""The reviewed table of known differences and tracebacks.

Every chunk where the tools disagree, or where passflow-opt prints a Python
traceback, must either be explained by a normalisation (`compare.py`) or be
listed here with its cause. Nothing is skipped: listed chunks still run, are
counted under their cause, and an entry that no longer matches (the chunk now
agrees, or no longer prints a traceback) fails the suite, so an entry is removed
in the same change that fixes its cause.

An entry names a RUN line (`path:line`, the path relative to xDSL's
`tests/filecheck/`), the 1-based `// -----` chunks of its input, whether it is a
difference or a traceback, and its cause. A cause says whether the difference
is deliberate (and where `docs/decisions.md` says so) or a defect (and who is
fixing it).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["CAUSES", "KNOWN", "Cause", "Known", "Problem"]


class Problem(Enum):
    DIFFERENCE = "difference"
    TRACEBACK = "traceback"


@dataclass(frozen=True)
class Cause:
    reason: str
    """What differs and why, in a line."""
    status: str
    """`deliberate`, `defect being fixed: ...` or `defect, not assigned: ...`."""
    section: str
    """Where it is decided or tracked: a `docs/decisions.md` section, an issue."""


TEST_OP = Cause(
    "`test.op` is an unregistered op in passflow, as in MLIR's `test` dialect "
    "(MLIR's own tests depend on it); xDSL registers a trait-less `test.op`. "
    "`apply-pdl` builds an unregistered op with attributes, as MLIR's PDL does, "
    "where xDSL's `test.op` takes properties, and xDSL's `scf.if` parser adds no "
    "implicit `scf.yield` after it (xdsl-opt fails the same way after any "
    "unregistered op; mlir-opt adds one)",
    "deliberate; the scf.if parsing is xDSL's defect",
    "docs/decisions.md, 'Test passes, test dialect, xDSL passes'",
)
CSE_DOMINANCE = Cause(
    "passflow's cse is MLIR's: in a region with SSA dominance it reuses an equal "
    "op from a dominating block; xDSL's cse treats every region as a graph "
    "region (its own test, `@down_propagate`, says MLIR does this)",
    "deliberate",
    "docs/decisions.md, 'Built-in passes' (cse across dominating blocks)",
)
REGION_DCE = Cause(
    "passflow's canonicalize simplifies regions as MLIR's does (runRegionDCE): "
    "it erases unused block arguments and the ops that only fed them; xDSL's "
    "canonicalize keeps them",
    "deliberate",
    "docs/decisions.md, 'Built-in passes' (canonicalize region simplification)",
)
RISCV_CONSTANTS = Cause(
    "canonicalize hoists an unallocated `rv32.li 0` to the region's entry (MLIR's "
    "constant placement), where xDSL's LoadImmediate0 pattern rewrites it into a "
    "read of the hard-wired zero register and a `riscv.mv`: same meaning, other "
    "place; allocated registers never move",
    "deliberate",
    "docs/decisions.md, 'Built-in passes' (constants and values in registers)",
)
INVALID_OUTPUT = Cause(
    "the xDSL pass's output is not valid MLIR and passflow's verifier (MLIR's) "
    "rejects it, where xdsl-opt prints it: `lower-csl-stencil` leaves uses of "
    "`%accumulator`, a `memref.alloc` of one `csl.func`, in its sibling callbacks "
    "(`operand #0 does not dominate this use`)",
    "deliberate; the pass's defect is xDSL's",
    "docs/decisions.md, 'IR and verification' (the verifier is MLIR's)",
)
TRANSFORM_INTERPRETER = Cause(
    "passflow's `transform-interpreter` (registered over xDSL's, to run "
    "`transform.apply_registered_pass` through passflow's pass manager) says "
    "`could not find a nested named sequence with name: X` where xDSL's message "
    "starts with the Python repr of the module (`ModuleOp( builtin.module { } )`)",
    "deliberate",
    "docs/decisions.md, 'Built-in passes' (transform-interpreter)",
)
CAUSES = (
    TEST_OP,
    CSE_DOMINANCE,
    REGION_DCE,
    RISCV_CONSTANTS,
    INVALID_OUTPUT,
    TRANSFORM_INTERPRETER,
)


@dataclass(frozen=True)
class Known:
    case: str
    """The RUN line: `path:line`."""
    chunks: tuple[int, ...]
    problem: Problem
    cause: Cause

    @property
    def reason(self) -> str:
        return self.cause.reason


D = Problem.DIFFERENCE

KNOWN: tuple[Known, ...] = (
    # --- differences ------------------------------------------------------------
    Known("backend/riscv/canonicalize.mlir:1", (1,), D, RISCV_CONSTANTS),
    Known("dialects/riscv_cf/canonicalize.mlir:1", (1,), D, REGION_DCE),
    Known("transforms/cse.mlir:1", (1,), D, CSE_DOMINANCE),
    Known("dialects/scf/canonicalize.mlir:1", (1,), D, TEST_OP),
    Known("transforms/apply-pdl/apply_pdl_property_rewrite.mlir:1", (1,), D, TEST_OP),
    Known("transforms/eqsat-add-costs/eqsat-add-costs.mlir:1", (4,), D, TEST_OP),
    Known("transforms/function-constant-pinning.mlir:1", (1,), D, TEST_OP),
    Known("transforms/lower-csl-stencil.mlir:1", (1, 2, 3, 4), D, INVALID_OUTPUT),
    Known("transforms/transform-interpreter.mlir:1", (2,), D, TRANSFORM_INTERPRETER),
    Known("transforms/transform-interpreter.mlir:2", (2,), D, TRANSFORM_INTERPRETER),
)
