"""Reduce a failing pipeline run to its core, and bisect it to one pass.

`Reducer` shrinks the pipeline (passes dropped, options reset) and the IR
(top-level ops, then ops erased or simplified) while an interestingness test
still holds; `bisect` finds the first pass execution after which it holds.
`passflow-reduce` is the command line over both (`docs/reduce.md`).
"""

from passflow.reduce.bisect import Bisection, bisect
from passflow.reduce.interesting import (
    CommandStatus,
    Interestingness,
    NotInterestingError,
    PassCrash,
    RunSettings,
    SameDiagnostic,
    SilentFailure,
    VerifierFailure,
    default_test,
)
from passflow.reduce.ir_edits import IRCandidate
from passflow.reduce.outcome import Candidate, Execution, RunOutcome, run_candidate
from passflow.reduce.reducer import Reducer, Reduction, Size, parse_input

__all__ = [
    "Bisection",
    "Candidate",
    "CommandStatus",
    "Execution",
    "IRCandidate",
    "Interestingness",
    "NotInterestingError",
    "PassCrash",
    "Reducer",
    "Reduction",
    "RunOutcome",
    "RunSettings",
    "SameDiagnostic",
    "SilentFailure",
    "Size",
    "VerifierFailure",
    "bisect",
    "default_test",
    "parse_input",
    "run_candidate",
]
