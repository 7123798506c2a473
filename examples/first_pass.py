"""A function pass that uses a cached analysis, nested under a module pipeline.

Run: .venv/bin/python examples/first_pass.py examples/functions.mlir
"""

from __future__ import annotations

import sys

from passflow import OperationPass, PassManager, PassPipelineError, ir


class OpCount:
    """An analysis: how many ops a function holds. Built once, then cached."""

    def __init__(self, op: ir.Operation) -> None:
        self.count = sum(1 for _ in op.walk()) - 1


class CountOps(OperationPass):
    """Reports the size of each function, computed through the analysis manager."""

    argument = "count-ops"
    op_name = "func.func"

    def run_on_operation(self) -> None:
        func = self.get_operation()
        count = self.get_analysis(OpCount).count
        print(f"@{ir.symbol_name(func)}: {count} ops")
        self.mark_all_analyses_preserved()


class RejectLargeFunctions(OperationPass):
    """Fails on functions over a size limit, reusing the cached OpCount."""

    argument = "reject-large"
    op_name = "func.func"

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def run_on_operation(self) -> None:
        cached = self.get_cached_analysis(OpCount)
        assert cached is not None, "CountOps preserved it, so it is still cached"
        if cached.count > self.limit:
            self.emit_op_error(
                self.get_operation(),
                f"has {cached.count} ops, over the limit of {self.limit}",
            )
            self.signal_pass_failure()
        self.mark_all_analyses_preserved()


def main(path: str) -> int:
    with open(path) as stream:
        module = ir.parse_module(stream.read(), name=path)
    pm = PassManager("builtin.module")
    functions = pm.nest("func.func")
    functions.add(CountOps())
    functions.add(RejectLargeFunctions(limit=6))
    print(f"pipeline: {pm}")
    try:
        pm.run(module)
    except PassPipelineError as err:
        print(err)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "examples/functions.mlir"))
