"""Built-in passes, named and optioned as in mlir-opt.

Importing this package registers them all by name (the registry imports it before
the first lookup): `canonicalize`, `composite-fixed-point-pass`, `control-flow-sink`,
`cse`, `inline`, `loop-invariant-code-motion`, `print-ir`, `print-op-stats`,
`remove-dead-values`, `sccp`, `strip-debuginfo`, `symbol-dce`, `symbol-privatize`
and `topological-sort`. A pass's module,
with the xDSL dialects and patterns it needs, is imported only when a pipeline
names the pass or its class is taken from this package, so a run pays in start-up
time and memory for the passes it uses alone.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from passflow.registry import register_lazy

if TYPE_CHECKING:
    from passflow.transforms.canonicalize import Canonicalizer
    from passflow.transforms.composite_fixed_point import CompositeFixedPointPass
    from passflow.transforms.control_flow_sink import ControlFlowSink
    from passflow.transforms.cse import CSE
    from passflow.transforms.inline import Inliner
    from passflow.transforms.loop_invariant_code_motion import (
        LoopInvariantCodeMotion,
    )
    from passflow.transforms.print_ir import PrintIRPass
    from passflow.transforms.print_op_stats import PrintOpStats
    from passflow.transforms.remove_dead_values import RemoveDeadValues
    from passflow.transforms.sccp import SCCP
    from passflow.transforms.strip_debuginfo import StripDebugInfo
    from passflow.transforms.symbol_dce import SymbolDCE
    from passflow.transforms.symbol_privatize import SymbolPrivatize
    from passflow.transforms.topological_sort import TopologicalSort

__all__ = [
    "CSE",
    "SCCP",
    "Canonicalizer",
    "CompositeFixedPointPass",
    "ControlFlowSink",
    "Inliner",
    "LoopInvariantCodeMotion",
    "PrintIRPass",
    "PrintOpStats",
    "RemoveDeadValues",
    "StripDebugInfo",
    "SymbolDCE",
    "SymbolPrivatize",
    "TopologicalSort",
]

_PASSES: dict[str, tuple[str, str]] = {
    "canonicalize": ("passflow.transforms.canonicalize", "Canonicalizer"),
    "composite-fixed-point-pass": (
        "passflow.transforms.composite_fixed_point",
        "CompositeFixedPointPass",
    ),
    "control-flow-sink": ("passflow.transforms.control_flow_sink", "ControlFlowSink"),
    "cse": ("passflow.transforms.cse", "CSE"),
    "inline": ("passflow.transforms.inline", "Inliner"),
    "loop-invariant-code-motion": (
        "passflow.transforms.loop_invariant_code_motion",
        "LoopInvariantCodeMotion",
    ),
    "print-ir": ("passflow.transforms.print_ir", "PrintIRPass"),
    "print-op-stats": ("passflow.transforms.print_op_stats", "PrintOpStats"),
    "remove-dead-values": (
        "passflow.transforms.remove_dead_values",
        "RemoveDeadValues",
    ),
    "sccp": ("passflow.transforms.sccp", "SCCP"),
    "strip-debuginfo": ("passflow.transforms.strip_debuginfo", "StripDebugInfo"),
    "symbol-dce": ("passflow.transforms.symbol_dce", "SymbolDCE"),
    "symbol-privatize": ("passflow.transforms.symbol_privatize", "SymbolPrivatize"),
    "topological-sort": ("passflow.transforms.topological_sort", "TopologicalSort"),
}
"""Each pass's argument, module and class."""

_MODULE_OF = {name: module for module, name in _PASSES.values()}

for _argument, (_module, _name) in _PASSES.items():
    register_lazy(_argument, f"{_module}:{_name}")


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
