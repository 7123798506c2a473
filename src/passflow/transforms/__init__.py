"""Built-in passes, named and optioned as in mlir-opt.

`register()` registers them all by name (`passflow.register_all_passes` calls it,
as mlir-opt calls `registerAllPasses()`; importing this package registers
nothing): `canonicalize`, `composite-fixed-point-pass`, `control-flow-sink`,
`cse`, `inline`, `loop-invariant-code-motion`, `mem2reg`, `print-ir`,
`print-op-stats`, `remove-dead-values`, `sccp`, `sroa`, `strip-debuginfo`,
`symbol-dce`, `symbol-privatize`, `topological-sort`, `transform-interpreter`
(xDSL's interpreter, its `transform.apply_registered_pass` run through passflow)
and `view-op-graph`. A pass's module,
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
    from passflow.transforms.mem2reg import Mem2Reg
    from passflow.transforms.print_ir import PrintIRPass
    from passflow.transforms.print_op_stats import PrintOpStats
    from passflow.transforms.remove_dead_values import RemoveDeadValues
    from passflow.transforms.sccp import SCCP
    from passflow.transforms.sroa import SROA
    from passflow.transforms.strip_debuginfo import StripDebugInfo
    from passflow.transforms.symbol_dce import SymbolDCE
    from passflow.transforms.symbol_privatize import SymbolPrivatize
    from passflow.transforms.topological_sort import TopologicalSort
    from passflow.transforms.transform_interpreter import TransformInterpreter
    from passflow.transforms.view_op_graph import ViewOpGraph

__all__ = [
    "CSE",
    "SCCP",
    "SROA",
    "Canonicalizer",
    "CompositeFixedPointPass",
    "ControlFlowSink",
    "Inliner",
    "LoopInvariantCodeMotion",
    "Mem2Reg",
    "PrintIRPass",
    "PrintOpStats",
    "RemoveDeadValues",
    "StripDebugInfo",
    "SymbolDCE",
    "SymbolPrivatize",
    "TopologicalSort",
    "TransformInterpreter",
    "ViewOpGraph",
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
    "mem2reg": ("passflow.transforms.mem2reg", "Mem2Reg"),
    "print-ir": ("passflow.transforms.print_ir", "PrintIRPass"),
    "print-op-stats": ("passflow.transforms.print_op_stats", "PrintOpStats"),
    "remove-dead-values": (
        "passflow.transforms.remove_dead_values",
        "RemoveDeadValues",
    ),
    "sccp": ("passflow.transforms.sccp", "SCCP"),
    "sroa": ("passflow.transforms.sroa", "SROA"),
    "strip-debuginfo": ("passflow.transforms.strip_debuginfo", "StripDebugInfo"),
    "symbol-dce": ("passflow.transforms.symbol_dce", "SymbolDCE"),
    "symbol-privatize": ("passflow.transforms.symbol_privatize", "SymbolPrivatize"),
    "topological-sort": ("passflow.transforms.topological_sort", "TopologicalSort"),
    "transform-interpreter": (
        "passflow.transforms.transform_interpreter",
        "TransformInterpreter",
    ),
    "view-op-graph": ("passflow.transforms.view_op_graph", "ViewOpGraph"),
}
"""Each pass's argument, module and class."""

_MODULE_OF = {name: module for module, name in _PASSES.values()}


def register() -> None:
    """Register every built-in pass by name, lazily: no pass module is imported."""
    for argument, (module, name) in _PASSES.items():
        register_lazy(argument, f"{module}:{name}")


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
