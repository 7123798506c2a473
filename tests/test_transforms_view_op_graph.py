"""`view-op-graph`: the DOT text against mlir-opt 22.1.8's, and MLIR's value names."""

from __future__ import annotations

import pytest
from transforms_support import context, run_passes

from passflow import ir
from passflow.registry import lookup_pass
from passflow.transforms import ViewOpGraph
from passflow.transforms.asm_names import value_names
from passflow.transforms.view_op_graph import GraphStyle, op_graph

# A function with an op holding a region and two results, an attribute too
# large to print, a second block and a control-flow edge to draw.
GRAPH_INPUT = """
func.func @f(%c: i1, %a: i32) -> i32 {
  %x = arith.addi %a, %a : i32
  %r:2 = "t.pair"(%x) ({
    %k = arith.constant 7 : i32
    "t.yield"(%k) : (i32) -> ()
  }) {big = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17]} : (i32) -> (i32, i32)
  cf.br ^bb1(%r#1 : i32)
^bb1(%q: i32):
  return %q : i32
}
"""

# mlir-opt 22.1.8 --view-op-graph=print-control-flow-edges=true on GRAPH_INPUT.
MLIR_GRAPH = r"""
digraph G {
  compound = true;
  subgraph cluster_1 {
    v2 [label = " ", shape = plain];
    label = "builtin.module : ()\l";
    subgraph cluster_3 {
      v4 [label = " ", shape = plain];
      label = "";
      subgraph cluster_5 {
        v6 [label = " ", shape = plain];
        label = "func.func : ()\lfunction_type: (i1, i32) -\> i32\lsym_name: \"f\"\l";
        subgraph cluster_7 {
          v8 [label = " ", shape = plain];
          label = "";
          v9 [label = "<res_arg0> %arg0 i1", shape = Mrecord];
          v10 [label = "<res_arg1> %arg1 i32", shape = Mrecord];
          v11 [fillcolor = "0.000000 0.3 0.95", label = "{{<arg_arg1> %arg1|<arg_arg1> %arg1}|arith.addi\l\loverflowFlags: #arith.overflow\<none...\l|{<res_0> %0 i32}}", shape = Mrecord, style = filled];
          subgraph cluster_12 {
            v13 [label = " ", shape = plain];
            label = "t.pair : (i32, i32)\lbig: [...]\l";
            subgraph cluster_14 {
              v15 [label = " ", shape = plain];
              label = "";
              v16 [fillcolor = "0.125000 0.3 0.95", label = "{arith.constant\l\lvalue: 7 : i32\l|{<res_c7_i32> %c7_i32 i32}}", shape = Mrecord, style = filled];
              v17 [fillcolor = "0.250000 0.3 0.95", label = "{{<arg_c7_i32> %c7_i32}|t.yield\l}", shape = Mrecord, style = filled];
            }
          }
          v18 [fillcolor = "0.500000 0.3 0.95", label = "{{<arg_1_1> %1#1}|cf.br\l}", shape = Mrecord, style = filled];
        }
        subgraph cluster_19 {
          v20 [label = " ", shape = plain];
          label = "";
          v21 [label = "<res_2> %2 i32", shape = Mrecord];
          v22 [fillcolor = "0.625000 0.3 0.95", label = "{{<arg_2> %2}|func.return\l}", shape = Mrecord, style = filled];
        }
      }
    }
  }
  v16 -> v17[style = dashed];
  v11 -> v13[lhead = cluster_12, style = dashed];
  v13 -> v18[ltail = cluster_12, style = dashed];
  v10:res_arg1:s -> v11:arg_arg1:n[style = solid];
  v10:res_arg1:s -> v11:arg_arg1:n[style = solid];
  v16:res_c7_i32:s -> v17:arg_c7_i32:n[style = solid];
  v11:res_0:s -> v13[lhead = cluster_12, style = solid];
  v13 -> v18:arg_1_1:n[ltail = cluster_12, style = solid];
  v21:res_2:s -> v22:arg_2:n[style = solid];
}
"""


def test_declaration_matches_mlir_opt() -> None:
    info = lookup_pass("view-op-graph")
    assert info is not None and info.pass_class is ViewOpGraph
    assert str(ViewOpGraph()) == (
        "view-op-graph{max-label-len=20 print-attrs=true "
        "print-control-flow-edges=false print-data-flow-edges=true "
        "print-result-types=true}"
    )


def test_graph_is_mlir_opts() -> None:
    module = ir.parse_module(GRAPH_INPUT, context())
    style = GraphStyle(print_control_flow_edges=True)
    assert op_graph(module, style) == MLIR_GRAPH.lstrip("\n")


def test_pass_writes_the_graph_to_stderr_and_keeps_the_ir(
    capsys: pytest.CaptureFixture[str],
) -> None:
    module = run_passes(GRAPH_INPUT, ViewOpGraph(), nest=None)
    err = capsys.readouterr().err
    data_flow_only = [line for line in MLIR_GRAPH.splitlines() if "dashed" not in line]
    assert err == "\n".join(data_flow_only).lstrip("\n") + "\n"
    assert ir.print_op(module) == ir.print_op(ir.parse_module(GRAPH_INPUT, context()))


def test_options_drop_what_they_name() -> None:
    module = ir.parse_module(GRAPH_INPUT, context())
    text = op_graph(
        module,
        GraphStyle(
            print_attrs=False, print_result_types=False, print_data_flow_edges=False
        ),
    )
    assert 'label = "func.func";' in text
    assert '"{arith.constant\\l|{<res_c7_i32> %c7_i32}}"' in text
    assert "->" not in text
    truncated = op_graph(module, GraphStyle(max_label_len=4))
    assert "overflowFlags: #ari...\\l" in truncated


def test_value_names_follow_mlirs_printer() -> None:
    module = ir.parse_module(
        """
%0 = "t.x"() : () -> i32
%one = arith.constant 1 : i32
func.func @f(%a: i32) -> i32 {
  %1 = "t.y"() : () -> i32
  %c = arith.constant 1 : i32
  %t = arith.constant true
  "t.r"() ({
  ^bb0(%b: i32):
    %2 = "t.y"() : () -> i32
  }, {
    %3 = "t.y"() : () -> i32
  }) : () -> ()
  return %1 : i32
}
""",
        context(),
    )
    names = value_names(module)
    printed = sorted(names.values())
    # Numbers go on across functions and nested regions; sibling regions reuse
    # them; entry block arguments are %argN; suggested names are made unique.
    assert printed == sorted(
        ["0", "c1_i32", "arg0", "1", "c1_i32_0", "true", "arg1", "2", "2"]
    )


ELIDED = """\
func.func @f() -> tensor<20xi32> {
  %c = arith.constant dense<[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]> : tensor<20xi32>
  return %c : tensor<20xi32>
}
"""


@pytest.mark.parametrize(
    ("limit", "label"),
    [
        (20, "value: [...] : tensor\\<20xi32\\>\\l"),
        (5, "value: [...] : tenso...\\l"),
        (12, "value: [...] : tensor\\<20xi3...\\l"),
    ],
)
def test_an_elided_attribute_truncates_its_type_alone(limit: int, label: str) -> None:
    # mlir-opt 22.1.8 --view-op-graph=max-label-len=N on the same input: the
    # elements are `[...]`, and the type is truncated, then escaped.
    module = ir.parse_module(ELIDED, context())
    assert label in op_graph(module, GraphStyle(max_label_len=limit))
