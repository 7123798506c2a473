"""An xDSL dialect file, loaded as it is by --load-dialect-plugin (plugins.mlir)."""

from xdsl.dialects.builtin import i32
from xdsl.ir import Dialect
from xdsl.irdl import IRDLOperation, irdl_op_definition, operand_def, result_def


@irdl_op_definition
class TwiceOp(IRDLOperation):
    name = "twice.twice"
    arg = operand_def(i32)
    res = result_def(i32)


Twice = Dialect("twice", [TwiceOp])
