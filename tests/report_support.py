"""The input and pipeline both report tests run: `@a` changes under
canonicalize, `@c` under cse, `@b` under nothing, and a pass fails; a pass that jumps."""

from xdsl.dialects.builtin import StringAttr

from passflow import OperationPass
from passflow.graph import JUMP_TARGET_ATTRIBUTE

INPUT = """\
func.func @a(%x: i32) -> i32 {
  %zero = arith.constant 0 : i32
  %r = arith.addi %x, %zero : i32
  func.return %r : i32
}
func.func @b(%x: i32) -> i32 {
  func.return %x : i32
}
func.func @c(%x: i32) -> i32 {
  %m1 = arith.muli %x, %x : i32
  %m2 = arith.muli %x, %x : i32
  %s = arith.addi %m1, %m2 : i32
  func.return %s : i32
}
"""
PIPELINE = (
    "builtin.module(func.func(canonicalize,cse,test-stats-pass),"
    "test-pass-failure{gen-diagnostics=true})"
)


class JumpOnce(OperationPass):
    """Asks once for the PipelineGraph stage `target` to run next (a jump)."""

    argument = "report-jump-once"
    op_name = "builtin.module"

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target

    def run_on_operation(self) -> None:
        module = self.get_operation()
        if "jumped" not in module.attributes:
            module.attributes["jumped"] = StringAttr("yes")
            module.attributes[JUMP_TARGET_ATTRIBUTE] = StringAttr(self.target)
