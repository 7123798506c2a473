"""mlir-opt's printing flags as `PrintOptions`: locations and `#loc` aliases as
mlir-opt 22.1.8 prints them (compared with its output), elided elements, value
users, unique ids, and the Python knobs of `PassManager.enable_ir_printing`."""

from __future__ import annotations

import io

import pytest

from passflow import PassManager, ir
from passflow.instruments import IRPrinterConfig
from passflow.print_options import PrintOptions
from passflow.testing import TestModulePass
from passflow.tools.roundtrip import roundtrip_error

LOCATED = """\
#loc0 = loc("foo.mlir":3:4)
func.func @f(%arg0: i32 loc("x.c":1:2), %b: f32) -> i32 {
  %0 = arith.addi %arg0, %arg0 : i32 loc(#loc0)
  %1 = arith.muli %0, %0 : i32 loc("name"("a.c":5:6))
  %2 = arith.subi %1, %0 : i32 loc(callsite("f"("a.c":1:1) at "b.c":2:2))
  %3 = arith.addi %2, %2 : i32 loc(fused["a.c":1:1, "b.c":2:2])
  %4 = arith.addi %3, %3 : i32 loc(fused<"meta">["a.c":1:1])
  %5 = arith.addi %4, %4 : i32 loc(unknown)
  %6 = arith.addi %5, %5 : i32 loc("onlyname")
  cf.br ^bb1(%6 : i32)
^bb1(%c: i32 loc("z.c":7:7)):
  return %c : i32
}
"""

# mlir-opt a.mlir --mlir-print-debuginfo, but for the op names xDSL prints
# (`builtin.module`, `func.return`) and the value names passflow keeps.
MLIR_OPT_DEBUGINFO = """\
#loc2 = loc("x.c":1:2)
#loc3 = loc("a.mlir":2:41)
#loc11 = loc("z.c":7:7)
builtin.module {
  func.func @f(%arg0: i32 loc("x.c":1:2), %b: f32 loc("a.mlir":2:41)) -> i32 {
    %0 = arith.addi %arg0, %arg0 : i32 loc(#loc4)
    %1 = arith.muli %0, %0 : i32 loc(#loc13)
    %2 = arith.subi %1, %0 : i32 loc(#loc17)
    %3 = arith.addi %2, %2 : i32 loc(#loc15)
    %4 = arith.addi %3, %3 : i32 loc(#loc16)
    %5 = arith.addi %4, %4 : i32 loc(#loc8)
    %6 = arith.addi %5, %5 : i32 loc(#loc9)
    cf.br ^bb1(%6 : i32) loc(#loc10)
  ^bb1(%c: i32 loc("z.c":7:7)):
    func.return %c : i32 loc(#loc12)
  } loc(#loc1)
} loc(#loc)
#loc = loc("a.mlir":0:0)
#loc1 = loc("a.mlir":2:1)
#loc4 = loc("foo.mlir":3:4)
#loc5 = loc("a.c":5:6)
#loc6 = loc("a.c":1:1)
#loc7 = loc("b.c":2:2)
#loc8 = loc(unknown)
#loc9 = loc("onlyname")
#loc10 = loc("a.mlir":10:3)
#loc12 = loc("a.mlir":12:3)
#loc13 = loc("name"(#loc5))
#loc14 = loc("f"(#loc6))
#loc15 = loc(fused[#loc6, #loc7])
#loc16 = loc(fused<"meta">[#loc6])
#loc17 = loc(callsite(#loc14 at #loc7))"""


def parse(text: str, name: str = "a.mlir") -> ir.ModuleOp:
    return ir.parse_module(text, ir.default_context(), name)


def test_debuginfo_aliases_match_mlir_opt() -> None:
    module = parse(LOCATED)
    assert ir.print_op(module, options=PrintOptions(debug_info=True)) == (
        MLIR_OPT_DEBUGINFO
    )


def test_debuginfo_round_trips() -> None:
    options = PrintOptions(debug_info=True)
    printed = ir.print_op(parse(LOCATED), options=options)
    again = ir.print_op(parse(printed, "b.mlir"), options=options)
    assert again == printed


def test_local_scope_prints_every_location_inline() -> None:
    printed = ir.print_op(
        parse(LOCATED), options=PrintOptions(debug_info=True, local_scope=True)
    )
    assert "#loc" not in printed
    assert 'loc(callsite("f"("a.c":1:1) at "b.c":2:2))' in printed
    assert 'loc(fused<"meta">["a.c":1:1])' in printed
    assert printed.endswith('} loc("a.mlir":0:0)')


def test_pretty_debuginfo() -> None:
    printed = ir.print_op(
        parse(LOCATED), options=PrintOptions(debug_info=True, pretty_debug_info=True)
    )
    assert "%0 = arith.addi %arg0, %arg0 : i32 foo.mlir:3:4\n" in printed
    assert "i32 #loc14 at #loc7\n" in printed
    assert "#loc8 = [unknown]\n" in printed
    assert printed.startswith("#loc2 = x.c:1:2\n")


def test_elided_elements_but_not_splats() -> None:
    module = parse(
        "%a = arith.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
        "%b = arith.constant dense<7> : tensor<8xi32>\n"
        "%c = arith.constant dense<[1, 2]> : tensor<2xi32>\n"
    )
    printed = ir.print_op(module, options=PrintOptions(elements_limit=2))
    assert "%a = arith.constant dense_resource<__elided__> : tensor<3xi32>" in printed
    assert "dense<7> : tensor<8xi32>" in printed
    assert "dense<[1, 2]> : tensor<2xi32>" in printed


def test_value_users() -> None:
    module = parse(
        "func.func @g(%a: i32) -> i32 {\n"
        "  %x = arith.addi %a, %a : i32\n"
        "  %y = arith.addi %x, %a : i32\n"
        "  %u = arith.addi %y, %y : i32\n"
        "  return %y : i32\n"
        "}\n"
    )
    printed = ir.print_op(module, options=PrintOptions(value_users=True))
    assert "    // %a is used by %y, %x\n" in printed
    assert "%x = arith.addi %a, %a : i32 // user: %y\n" in printed
    # mlir-opt numbers @g 0 and the return 1, as here.
    assert "%y = arith.addi %x, %a : i32 // users: %1, %u\n" in printed
    assert "%u = arith.addi %y, %y : i32 // unused\n" in printed
    assert "func.return %y : i32 // id: %1\n" in printed


def test_unique_ssa_ids_never_restart_in_a_function() -> None:
    text = (
        'func.func @f() {\n  %0 = "test.op"() : () -> i32\n  return\n}\n'
        'func.func @g() {\n  %0 = "test.op"() : () -> i32\n  return\n}\n'
    )
    module = ir.parse_module(text, ir.default_context(allow_unregistered=True))
    assert ir.print_op(module).count("%0 = ") == 2
    unique = ir.print_op(module, options=PrintOptions(unique_ssa_ids=True))
    assert unique.count("%0 = ") == 1
    assert "%1 = " in unique


def test_enable_ir_printing_knobs_drive_the_dumps() -> None:
    module = parse(
        "func.func @f() -> tensor<3xi32> {\n"
        "  %a = arith.constant dense<[1, 2, 3]> : tensor<3xi32>\n"
        "  return %a : tensor<3xi32>\n"
        "}\n"
    )
    stream = io.StringIO()
    pm = PassManager()
    pm.add(TestModulePass())
    pm.enable_ir_printing(
        IRPrinterConfig(after_all=True, stream=stream),
        large_elements_limit=2,
        enable_debug_info=True,
        print_generic_op_form=True,
    )
    pm.run(module)
    dump = stream.getvalue()
    assert '"arith.constant"() <{value = dense_resource<__elided__>' in dump
    assert 'loc("a.mlir":2:8)' in dump
    # mlir-opt's layout: the aliases after the top-level op, then two blank lines.
    assert dump.endswith(
        '}) : () -> () loc(#loc)\n#loc = loc("a.mlir":0:0)\n'
        '#loc1 = loc("a.mlir":1:1)\n#loc2 = loc("a.mlir":2:8)\n'
        '#loc3 = loc("a.mlir":3:3)\n\n\n'
    )


def test_enable_ir_printing_defaults_change_nothing() -> None:
    config = IRPrinterConfig(after_all=True)
    assert config.with_print_knobs() is config
    assert config.with_print_knobs(large_resource_limit=4).print_options == (
        PrintOptions(resource_limit=4)
    )


def test_verify_roundtrip_reports_a_difference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module = parse("func.func @f() {\n  return\n}\n")
    prints = iter(["first", "second"])

    def parse_again(*args: object, **kwargs: object) -> ir.ModuleOp:
        return module

    def print_twice(*args: object, **kwargs: object) -> str:
        return next(prints)

    monkeypatch.setattr(ir, "parse_module", parse_again)
    monkeypatch.setattr(ir, "print_op", print_twice)
    problem = roundtrip_error(module, ir.default_context(), "a.mlir")
    monkeypatch.undo()
    assert problem is not None
    assert problem.message == (
        "'builtin.module' op textual roundTrip testing roundtripped module "
        "differs from reference:\n<<<<<<Reference\nfirst\n=====\nsecond\n"
        ">>>>>roundtripped\n"
    )
    assert problem.operation is module


def test_verify_roundtrip_accepts_what_prints_back() -> None:
    module = parse(LOCATED)
    assert roundtrip_error(module, ir.default_context(), "a.mlir") is None


RESOURCES = """\
func.func @f() -> tensor<4xi32> {
  %c = arith.constant dense_resource<blob1> : tensor<4xi32>
  return %c : tensor<4xi32>
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x08000000010000000200000003000000"
    }
  }
#-}
"""


@pytest.mark.parametrize(
    ("limit", "section"),
    [
        (
            None,
            "{-#\n  dialect_resources: {\n    builtin: {\n      blob1: "
            '"0x08000000010000000200000003000000"\n    }\n  }\n#-}\n',
        ),
        (4, "{-#\n\n#-}\n"),
    ],
)
def test_a_top_level_dump_ends_with_the_resource_section(
    limit: int | None, section: str
) -> None:
    # mlir-opt 22.1.8 --mlir-print-ir-after-all (and
    # --mlir-elide-resource-strings-if-larger=4): the module, a blank line, the
    # section, then the two blank lines that end every dump.
    module = parse(RESOURCES)
    stream = io.StringIO()
    pm = PassManager()
    pm.add(TestModulePass())
    pm.enable_ir_printing(
        IRPrinterConfig(after_all=True, stream=stream), large_resource_limit=limit
    )
    pm.run(module)
    assert stream.getvalue().endswith("  }\n}\n\n" + section + "\n\n")
