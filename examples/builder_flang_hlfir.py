"""llvm/llvm-project#212194, with PipelineBuilder: Enzyme attaches to flang's
HLFIR-to-FIR pipeline while the HLFIR intrinsic operations still exist, with no
HLFIROptEarly/HLFIROptLast hooks in flang.

The pull request: flang's FIR optimizer extension points (FIROptEarly,
FIRInliner, FIROptLast) all run after HLFIR is lowered to FIR, so `hlfir.sum`,
`hlfir.matmul` and the like are gone by then, and automatic differentiation with
Enzyme-MLIR has nowhere to attach. It adds two callbacks to
`createHLFIRToFIRPassPipeline`: HLFIROptEarly at its start, before any HLFIR
simplification or inlining, and HLFIROptLast just before the intrinsics are
lowered; its tests check the printed pipeline at every optimization level.

Here `hlfir_to_fir(level)` is that pipeline as flang builds it, without the two
callbacks. Enzyme's extension places a probe at both places by what flang's
passes are: before the first HLFIR pass of any kind (a class anchor: every one of
flang's passes here derives from `HLFIRPass`), and before the pass that lowers
the intrinsics, at O0 and at O2 alike. The passes are stand-ins that rewrite
real IR, with flang's names: the operations are `hlfir.*` and `fir.*` in generic
form (unregistered dialects). Each probe records the HLFIR operations it sees.

Run: .venv/bin/python examples/builder_flang_hlfir.py
"""

from __future__ import annotations

from xdsl.dialects.builtin import ArrayAttr, StringAttr, UnregisteredOp
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from passflow import OperationPass, ir
from passflow.builder import PipelineBuilder
from passflow.options import Option

FORTRAN = """\
func.func @loss(%x: !fir.box<!fir.array<?xf64>>, %w: !fir.box<!fir.array<?x?xf64>>) -> f64 {
  %p = "hlfir.matmul"(%w, %x) : (!fir.box<!fir.array<?x?xf64>>, !fir.box<!fir.array<?xf64>>) -> !hlfir.expr<?xf64>
  %s = "hlfir.sum"(%p) : (!hlfir.expr<?xf64>) -> f64
  "hlfir.assign"(%s, %x) : (f64, !fir.box<!fir.array<?xf64>>) -> ()
  func.return %s : f64
}
"""


def _name(op: Operation) -> str:
    """An op's name, an unregistered one's included (`hlfir.sum`)."""
    return ir.operation_name(op).name


def _renamed(op: Operation, name: str, **attributes: str) -> None:
    """Replace `op` by a generic op called `name`, same operands and results."""
    new = UnregisteredOp.with_name(name).create(
        operands=list(op.operands),
        result_types=[r.type for r in op.results],
        attributes={k: StringAttr(v) for k, v in attributes.items()},
    )
    Rewriter.replace_op(op, new)


class HLFIRPass(OperationPass):
    """A pass of flang's HLFIR-to-FIR pipeline (the stand-ins derive from it)."""

    op_name = "func.func"

    def rewrite(self, op: Operation) -> None: ...

    def run_on_operation(self) -> None:
        for op in list(self.get_operation().walk()):
            self.rewrite(op)


class SimplifyHLFIRIntrinsics(HLFIRPass):
    """At O1 and up: a sum becomes an elemental loop nest, still HLFIR."""

    argument = "simplify-hlfir-intrinsics"

    def rewrite(self, op: Operation) -> None:
        if _name(op) == "hlfir.sum":
            _renamed(op, "hlfir.elemental", reduction="sum")


class InlineHLFIRAssign(HLFIRPass):
    argument = "inline-hlfir-assign"


class LowerHLFIRIntrinsics(HLFIRPass):
    """The intrinsics become runtime calls: after this, no `hlfir.sum`."""

    argument = "lower-hlfir-intrinsics"

    def rewrite(self, op: Operation) -> None:
        runtime = {"hlfir.sum": "_FortranASum", "hlfir.matmul": "_FortranAMatmul"}
        if _name(op) in runtime:
            _renamed(op, "fir.call", callee=runtime[_name(op)])


class ConvertHLFIRToFIR(HLFIRPass):
    """What HLFIR is left becomes FIR."""

    argument = "convert-hlfir-to-fir"

    def rewrite(self, op: Operation) -> None:
        if _name(op).startswith("hlfir."):
            _renamed(op, "fir." + _name(op).removeprefix("hlfir."))


def hlfir_to_fir(level: int) -> PipelineBuilder:
    """flang's createHLFIRToFIRPassPipeline, without extension points."""
    builder = PipelineBuilder(framework="flang")
    functions = builder.nest("func.func")
    if level > 0:
        functions.add(SimplifyHLFIRIntrinsics())
        functions.add(InlineHLFIRAssign())
        functions.add("canonicalize")
    functions.add(LowerHLFIRIntrinsics())
    functions.add(ConvertHLFIRToFIR())
    return builder


# --- Enzyme's side: knows flang's passes, not its code -------------------------


class EnzymeProbe(OperationPass):
    """Where Enzyme-MLIR would differentiate: records the HLFIR ops present."""

    argument = "enzyme-hlfir-probe"
    op_name = "func.func"
    at = Option("", help="the extension point it stands at")

    def run_on_operation(self) -> None:
        function = self.get_operation()
        seen = sorted({_name(op) for op in function.walk()} - {"func.func"})
        seen = [name for name in seen if name.startswith("hlfir.")]
        function.attributes[f"enzyme.{self.at}"] = ArrayAttr(
            [StringAttr(name) for name in seen]
        )
        self.mark_all_analyses_preserved()


def attach_enzyme(builder: PipelineBuilder) -> None:
    """HLFIROptEarly and HLFIROptLast, as placements in the pipeline flang has."""
    early, last = EnzymeProbe(), EnzymeProbe()
    early.initialize_options("at=early")
    last.initialize_options("at=last")
    with builder.extension("enzyme"):
        builder.insert_before(early, HLFIRPass)  # before the first HLFIR pass
        builder.insert_before(last, "lower-hlfir-intrinsics")


def main() -> None:
    for level in (0, 2):
        builder = hlfir_to_fir(level)
        attach_enzyme(builder)
        pm = builder.build()
        print(f"== -O{level}\n{pm}")
        module = ir.parse_module(
            FORTRAN, ir.default_context(allow_unregistered=True), name="loss.mlir"
        )
        pm.run(module)
        print(ir.print_op(module), "\n")


if __name__ == "__main__":
    main()
