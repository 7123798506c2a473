"""A pass plugin in one file: `passflow-opt --load-pass-plugin=examples/plugin_count_adds.py`.

`register()` is called when the plugin loads; the pass is then usable by name
in a pipeline (`func.func(count-adds)`) or as `--count-adds`.
"""

from passflow import OperationPass, Statistic, register_pass


class CountAdds(OperationPass):
    argument = "count-adds"
    summary = "Count the arith.addi ops of each function"
    op_name = "func.func"

    adds = Statistic("adds", "Number of arith.addi ops")

    def run_on_operation(self) -> None:
        found = [op for op in self.get_operation().walk() if op.name == "arith.addi"]
        self.adds += len(found)
        self.mark_all_analyses_preserved()


def register() -> None:
    register_pass(CountAdds)
