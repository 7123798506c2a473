"""MLIR's `test-remark` pass (`mlir/test/lib/Pass/TestRemarksPass.cpp`).

It emits every kind of remark on every op it walks, in the order and with the
categories and arguments of MLIR's pass, so that mlir-opt's remark lit tests
(filters, the `final` policy, YAML output, linked remarks) read the same here.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from passflow.ir import Operation
from passflow.pass_base import OperationPass
from passflow.remarks import RemarkKind, RemarkOpts, add, reason, suggest

__all__ = ["TestRemarkPass"]

_REASON = "because we are testing the remark pipeline"
_SUGGESTION = "try using the remark pipeline feature"


class TestRemarkPass(OperationPass):
    """On each op but modules: a missed remark, a passed one that the `final`
    policy drops (the next one replaces it), a passed, a failed and an analysis
    remark, then a passed remark linked to an analysis remark still in flight."""

    __test__ = False  # not a pytest test class
    argument = "test-remark"
    summary = "Tests the remark pipeline feature"

    def run_on_operation(self) -> None:
        # MLIR's walk is post-order: nested ops before the op holding them.
        for op in self.get_operation().walk(region_first=True):
            if not isinstance(op, ModuleOp):
                self._remark_on(op)

    def _remark_on(self, op: Operation) -> None:
        remarks = self.remarks
        opts = RemarkOpts.name("test-remark")
        remarks.missed(
            op,
            opts.category("a-category-1-missed"),
            add("This is a test missed remark"),
            reason(_REASON),
            suggest(_SUGGESTION),
        )
        remarks.passed(
            op,
            opts.category("category-1-passed"),
            add("This is a test passed remark (should be dropped)"),
            reason(_REASON),
            suggest(_SUGGESTION),
        )
        remarks.passed(
            op,
            opts.category("category-1-passed"),
            add("This is a test passed remark"),
            reason(_REASON),
            suggest(_SUGGESTION),
        )
        remarks.failed(
            op,
            opts.category("category-2-failed"),
            add("This is a test failed remark"),
            reason(_REASON),
            suggest(_SUGGESTION),
        )
        remarks.analysis(
            op,
            opts.category("category-2-analysis"),
            add("This is a test analysis remark"),
        )
        # The analysis remark is reported when its block ends, after the passed
        # remark that links to it (as MLIR's, at the end of its scope).
        link = opts.category("category-link")
        with remarks.in_flight(RemarkKind.ANALYSIS, op, link) as analysis:
            analysis.append(add("Analysis that enables optimization"))
            remarks.passed(
                op, link.related_to(analysis), add("Optimization enabled by analysis")
            )
