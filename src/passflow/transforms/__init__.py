"""Built-in passes, named and optioned as in mlir-opt.

Importing this package registers them all (the registry imports it before the
first lookup): `canonicalize`, `cse`, `inline`, `loop-invariant-code-motion`,
`print-ir`, `print-op-stats`, `symbol-dce` and `symbol-privatize`.
"""

from passflow.transforms.canonicalize import Canonicalizer
from passflow.transforms.cse import CSE
from passflow.transforms.inline import Inliner
from passflow.transforms.loop_invariant_code_motion import LoopInvariantCodeMotion
from passflow.transforms.print_ir import PrintIRPass
from passflow.transforms.print_op_stats import PrintOpStats
from passflow.transforms.symbol_dce import SymbolDCE
from passflow.transforms.symbol_privatize import SymbolPrivatize

__all__ = [
    "CSE",
    "Canonicalizer",
    "Inliner",
    "LoopInvariantCodeMotion",
    "PrintIRPass",
    "PrintOpStats",
    "SymbolDCE",
    "SymbolPrivatize",
]
