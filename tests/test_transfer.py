"""The IR codec between processes: what a decoded op keeps of the original."""

from __future__ import annotations

import pickle
from typing import cast

from passflow import ir
from passflow.executors.transfer import (
    Decoder,
    EncodedOp,
    Encoder,
    shared_candidates,
)
from passflow.xdsl_internals import set_name_hint_verbatim

TEXT = """\
func.func @f(%a: i32) -> i32 {
  %x = arith.addi %a, %a : i32
  cf.br ^next(%x : i32)
^next(%y: i32):
  func.return %y : i32
}
"""


def _function(ctx: ir.Context, name: str = "in.mlir") -> ir.Operation:
    return ir.direct_children(ir.parse_module(TEXT, ctx, name))[0]


def _round_trip(
    op: ir.Operation, ctx: ir.Context, shared: list[object], grow: bool = False
) -> ir.Operation:
    encoder = Encoder(shared, grow_shared=grow)
    message = encoder.dumps(encoder.op(op))
    received = pickle.loads(pickle.dumps(encoder.shared)) if grow else shared
    decoder = Decoder(ctx, received)
    return decoder.op(cast(EncodedOp, decoder.loads(message)))


def test_decoded_ops_print_the_same_names(ctx: ir.Context) -> None:
    function = _function(ctx)
    entry, following = function.regions[0].blocks
    add = entry.first_op
    assert add is not None
    # Names xDSL's `name_hint` setter would cut short (`x_1` becomes `x`).
    set_name_hint_verbatim(add.results[0], "x_1")
    set_name_hint_verbatim(following, "next_2")
    copy = _round_trip(function, ctx, [])
    assert ir.print_op(copy) == ir.print_op(function)
    assert "%x_1 = " in ir.print_op(copy) and "^next_2(" in ir.print_op(copy)


def test_decoded_ops_are_located_where_the_originals_were_parsed(
    ctx: ir.Context,
) -> None:
    function = _function(ctx)
    shared = shared_candidates([function])
    assert [type(obj) for obj in shared] == [ir.ParsedFile]
    copy = _round_trip(function, ctx, shared)
    expected = [str(ir.location(op)) for op in function.walk()]
    assert [str(ir.location(op)) for op in copy.walk()] == expected
    assert expected[:2] == ["in.mlir:1:1", "in.mlir:2:8"]


def test_a_file_sent_once_locates_the_ops_of_another_process(ctx: ir.Context) -> None:
    function = _function(ctx)
    copy = _round_trip(function, ctx, [], grow=True)
    position = ir.parse_position(copy)
    assert position is not None and position[0].name == "in.mlir"
    assert [str(ir.location(op)) for op in copy.walk()] == [
        str(ir.location(op)) for op in function.walk()
    ]


def test_state_other_code_keeps_on_an_op_travels(ctx: ir.Context) -> None:
    function = _function(ctx)
    vars(function)["_tag"] = ("kept", 1)
    copy = _round_trip(function, ctx, [])
    assert vars(copy)["_tag"] == ("kept", 1)
