"""Tests of `passflow.analyses.DominanceInfo` (MLIR's DominanceInfo semantics)."""

from __future__ import annotations

from collections import deque

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.dialects.func import FuncOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.irdl.dominance import DominanceInfo as SlowDominanceInfo

from passflow.analyses import DominanceInfo
from passflow.analysis import AnalysisManager, PreservedAnalyses
from passflow.ir import default_context, parse_module

# --- helpers -----------------------------------------------------------------


def _parse(text: str) -> ModuleOp:
    return parse_module(text, default_context(allow_unregistered=True))


def _func(module: ModuleOp) -> FuncOp:
    for op in module.walk():
        if isinstance(op, FuncOp):
            return op
    raise AssertionError("no func.func in the module")


def _blocks(op: Operation, region: int = 0) -> list[Block]:
    return list(op.regions[region].blocks)


def _tagged(root: Operation) -> dict[str, Operation]:
    found: dict[str, Operation] = {}
    for op in root.walk():
        tag = op.attributes.get("tag")
        if isinstance(tag, StringAttr):
            found[tag.data] = op
    return found


def _result(op: Operation) -> OpResult:
    return op.results[0]


def _matrix(info: DominanceInfo, blocks: list[Block]) -> list[list[bool]]:
    return [[info.dominates(a, b) for b in blocks] for a in blocks]


# --- block dominance ---------------------------------------------------------

DIAMOND = """
func.func @f(%c: i1) {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  cf.br ^bb3
^bb2:
  cf.br ^bb3
^bb3:
  func.return
}
"""


def test_diamond() -> None:
    func = _func(_parse(DIAMOND))
    info = DominanceInfo(func)
    entry, left, right, join = _blocks(func)
    blocks = [entry, left, right, join]
    t, f = True, False
    assert _matrix(info, blocks) == [
        [t, t, t, t],
        [f, t, f, f],
        [f, f, t, f],
        [f, f, f, t],
    ]
    assert [info.immediate_dominator(b) for b in blocks] == [None, entry, entry, entry]
    for b in blocks:
        assert not info.properly_dominates(b, b)
        assert info.is_reachable_from_entry(b)
    assert info.properly_dominates(entry, join)
    assert info.find_nearest_common_dominator(left, right) is entry
    assert info.find_nearest_common_dominator(left, left) is left
    root = info.get_root_node(func.body)
    assert root.block is entry and root.level == 0 and root.idom is None
    assert {id(child.block) for child in root.children} == {
        id(left),
        id(right),
        id(join),
    }
    assert all(child.idom is root for child in root.children)
    join_node = info.get_node(join)
    assert join_node is not None and join_node.idom is root and join_node.level == 1


LOOP = """
func.func @f(%c: i1) {
  cf.br ^bb1
^bb1:
  cf.cond_br %c, ^bb2, ^bb4
^bb2:
  cf.cond_br %c, ^bb3, ^bb1
^bb3:
  cf.br ^bb1
^bb4:
  func.return
}
"""


def test_loop_with_back_edges() -> None:
    func = _func(_parse(LOOP))
    info = DominanceInfo(func)
    entry, header, body, latch, exit_ = _blocks(func)
    assert info.immediate_dominator(header) is entry
    assert info.immediate_dominator(body) is header
    assert info.immediate_dominator(latch) is body
    assert info.immediate_dominator(exit_) is header
    assert info.dominates(header, latch)
    assert info.dominates(header, exit_)
    # The back edges do not make the loop body dominate its header.
    assert not info.dominates(body, header)
    assert not info.dominates(latch, header)
    assert not info.dominates(body, exit_)
    assert info.find_nearest_common_dominator(latch, exit_) is header


IRREDUCIBLE = """
func.func @f(%c: i1) {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  cf.cond_br %c, ^bb2, ^bb3
^bb2:
  cf.cond_br %c, ^bb1, ^bb3
^bb3:
  func.return
}
"""


def test_irreducible_cycle_entered_twice() -> None:
    func = _func(_parse(IRREDUCIBLE))
    info = DominanceInfo(func)
    entry, a, b, exit_ = _blocks(func)
    # Neither block of the two-entry cycle dominates the other.
    assert not info.dominates(a, b) and not info.dominates(b, a)
    assert info.immediate_dominator(a) is entry
    assert info.immediate_dominator(b) is entry
    assert info.immediate_dominator(exit_) is entry


UNREACHABLE = """
func.func @f(%c: i1) {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  cf.br ^bb3
^bb2:
  cf.br ^bb3
^bb3:
  func.return
^bb4:
  cf.br ^bb3
^bb5:
  cf.br ^bb6
^bb6:
  cf.br ^bb5
}
"""


def test_unreachable_blocks_follow_llvm() -> None:
    func = _func(_parse(UNREACHABLE))
    info = DominanceInfo(func)
    entry, left, right, join, dead, cyc1, cyc2 = _blocks(func)
    reachable = [entry, left, right, join]
    unreachable = [dead, cyc1, cyc2]
    for b in reachable:
        assert info.is_reachable_from_entry(b)
        assert info.get_node(b) is not None
    for u in unreachable:
        assert not info.is_reachable_from_entry(u)
        assert info.get_node(u) is None
        assert info.immediate_dominator(u) is None
        assert info.dominates(u, u) and not info.properly_dominates(u, u)
        # Dominated by everything (no path from the entry reaches it) ...
        for b in reachable:
            assert info.properly_dominates(b, u)
        # ... and dominating no reachable block.
        for b in reachable:
            assert not info.dominates(u, b)
        assert info.find_nearest_common_dominator(u, entry) is None
    # Unreachable blocks dominate one another (LLVM: B unreachable => true).
    assert info.properly_dominates(cyc1, cyc2) and info.properly_dominates(cyc2, dead)
    # An unreachable predecessor does not stop the entry dominating `join`
    # (xDSL's set-intersection version gets this wrong).
    assert info.immediate_dominator(join) is entry
    assert info.dominates(entry, join)
    assert not SlowDominanceInfo(func.body).dominates(entry, join)


def test_single_block_and_deep_cfg() -> None:
    func = _func(_parse("func.func @f() {\n  func.return\n}"))
    info = DominanceInfo(func)
    (entry,) = _blocks(func)
    assert info.dominates(entry, entry) and not info.properly_dominates(entry, entry)
    assert info.immediate_dominator(entry) is None
    assert info.is_reachable_from_entry(entry)

    # A chain far deeper than Python's recursion limit.
    n = 3000
    lines = ["func.func @g() {", "  cf.br ^bb1"]
    for i in range(1, n):
        lines += [f"^bb{i}:", f"  cf.br ^bb{i + 1}" if i + 1 < n else "  func.return"]
    lines.append("}")
    chain = _func(_parse("\n".join(lines)))
    info = DominanceInfo(chain)
    blocks = _blocks(chain)
    assert info.immediate_dominator(blocks[-1]) is blocks[-2]
    assert info.dominates(blocks[1], blocks[-1])
    assert not info.dominates(blocks[-1], blocks[1])
    last = info.get_node(blocks[-1])
    assert last is not None and last.level == n - 1


# --- nested regions and ops --------------------------------------------------

NESTED = """
func.func @f(%c: i1, %n: index) -> i32 {
  %a = "test.op"() {tag = "a"} : () -> i32
  %r = scf.if %c -> (i32) {
    %b = "test.op"(%a) {tag = "b"} : (i32) -> i32
    scf.yield %b : i32
  } else {
    %b2 = "test.op"(%a) {tag = "b2"} : (i32) -> i32
    scf.yield %b2 : i32
  } {tag = "if"}
  %lo = arith.constant 0 : index
  %s = scf.for %i = %lo to %n step %n iter_args(%acc = %r) -> (i32) {
    %d = "test.op"(%acc) {tag = "d"} : (i32) -> i32
    %d2 = "test.op"(%d) {tag = "d2"} : (i32) -> i32
    scf.yield %d2 : i32
  } {tag = "for"}
  cf.br ^bb1
^bb1:
  %e = "test.op"(%s) {tag = "e"} : (i32) -> i32
  func.return %e : i32
}
"""


def test_ops_in_one_block() -> None:
    func = _func(_parse(NESTED))
    ops = _tagged(func)
    info = DominanceInfo(func)
    a, if_op, for_op = ops["a"], ops["if"], ops["for"]
    assert info.dominates(a, a) and not info.properly_dominates(a, a)
    assert info.properly_dominates(a, if_op) and info.dominates(a, for_op)
    assert not info.dominates(for_op, a) and not info.properly_dominates(if_op, a)
    d, d2 = ops["d"], ops["d2"]
    assert info.properly_dominates(d, d2) and not info.dominates(d2, d)
    # Across blocks of the function body.
    assert info.properly_dominates(a, ops["e"])
    assert not info.dominates(ops["e"], a)


def test_ops_in_nested_regions() -> None:
    func = _func(_parse(NESTED))
    ops = _tagged(func)
    info = DominanceInfo(func)
    a, b, b2, if_op, for_op, d, e = (
        ops[k] for k in ("a", "b", "b2", "if", "for", "d", "e")
    )
    # An op dominates ops nested in later ops of its block, not earlier ones.
    assert info.properly_dominates(a, b) and info.properly_dominates(a, d)
    assert not info.dominates(for_op, b)
    # An op dominates what is nested in it (MLIR: enclosingOpOk defaults to true)
    # unless asked not to.
    assert info.properly_dominates(if_op, b)
    assert info.dominates(if_op, b)
    assert not info.properly_dominates(if_op, b, enclosing_op_ok=False)
    # b is walked up to nothing in the scf.if's then-region: no relation.
    assert not info.dominates(b, if_op)
    assert not info.dominates(b, e)
    assert not info.dominates(b, b2) and not info.dominates(b2, b)
    # Ops in the later function block are dominated by nested ops' ancestors only.
    assert info.properly_dominates(for_op, e)
    assert not info.dominates(d, e)

    entry, tail = _blocks(func)
    then_block = _blocks(if_op)[0]
    body = _blocks(for_op)[0]
    # A block properly dominates blocks nested in it, and blocks nested in blocks
    # it dominates; a nested block dominates nothing outside its region.
    assert info.properly_dominates(entry, then_block)
    assert info.properly_dominates(entry, body)
    assert not info.dominates(tail, then_block)
    assert not info.dominates(then_block, entry)
    assert not info.dominates(then_block, body)
    assert info.find_nearest_common_dominator(then_block, tail) is entry
    assert info.find_nearest_common_dominator(then_block, body) is entry


def test_value_dominance() -> None:
    func = _func(_parse(NESTED))
    ops = _tagged(func)
    info = DominanceInfo(func)
    a, b, for_op, d, d2, e = (ops[k] for k in ("a", "b", "for", "d", "d2", "e"))
    c_arg = func.args[0]
    iv: BlockArgument = _blocks(for_op)[0].args[0]
    acc: BlockArgument = _blocks(for_op)[0].args[1]
    # Function arguments dominate everything in the function, nested or not.
    for op in (a, b, d, e):
        assert info.properly_dominates(c_arg, op)
    # A loop's block arguments dominate its body, not ops after the loop.
    assert info.properly_dominates(iv, d) and info.properly_dominates(acc, d2)
    assert not info.dominates(iv, e)
    assert not info.dominates(acc, for_op)
    # Op results: used after, not before, their op; never inside it.
    a_val, d_val, for_val = _result(a), _result(d), _result(for_op)
    assert info.properly_dominates(a_val, b)
    assert info.dominates(d_val, d) and not info.properly_dominates(d_val, d)
    assert info.properly_dominates(d_val, d2) and not info.dominates(d_val, ops["e"])
    assert info.properly_dominates(for_val, e)
    assert not info.dominates(for_val, d)  # d is nested in the defining op
    assert not info.dominates(_result(d2), d)
    # A value defined in a nested region does not reach the parent region.
    assert not info.dominates(_result(b), e)


BLOCK_ARGS = """
func.func @f(%c: i1) {
  %x = "test.op"() {tag = "x"} : () -> i32
  cf.cond_br %c, ^bb1(%x : i32), ^bb2
^bb1(%p: i32):
  "test.op"(%p) {tag = "in1"} : (i32) -> ()
  cf.br ^bb3
^bb2:
  "test.op"() {tag = "in2"} : () -> ()
  cf.br ^bb3
^bb3:
  "test.op"() {tag = "in3"} : () -> ()
  func.return
}
"""


def test_block_argument_dominance() -> None:
    func = _func(_parse(BLOCK_ARGS))
    ops = _tagged(func)
    info = DominanceInfo(func)
    p: SSAValue = _blocks(func)[1].args[0]
    # A block argument properly dominates every op of its block, the first included.
    assert info.properly_dominates(p, ops["in1"])
    assert info.dominates(p, ops["in1"])
    assert not info.dominates(p, ops["in2"])
    assert not info.dominates(p, ops["in3"])
    assert not info.dominates(p, ops["x"])
    x_val = _result(ops["x"])
    for tag in ("in1", "in2", "in3"):
        assert info.properly_dominates(x_val, ops[tag])


# --- graph regions -----------------------------------------------------------

GRAPH = """
"test.op"(%late) {tag = "early"} : (i32) -> ()
%late = "test.op"() {tag = "late"} : () -> i32
"unreg.graph"() ({
  "test.op"(%v) {tag = "u1"} : (i32) -> ()
  %v = "test.op"() {tag = "u2"} : () -> i32
}) : () -> ()
"pdl.pattern"() <{benefit = 1 : i16}> ({
  %t = "pdl.type"() {tag = "p1"} : () -> !pdl.type
  "pdl.rewrite"() <{operandSegmentSizes = array<i32: 0, 0>}> ({
    "test.op"() {tag = "p2"} : () -> ()
  }) : () -> ()
}) : () -> ()
"""


def test_graph_regions() -> None:
    module = _parse(GRAPH)
    ops = _tagged(module)
    info = DominanceInfo(module)
    assert not info.has_ssa_dominance(module.body)
    early, late = ops["early"], ops["late"]
    # In a graph region every op properly dominates every op of its block.
    assert info.properly_dominates(late, early)
    assert info.properly_dominates(early, late)
    assert info.properly_dominates(early, early)
    assert info.properly_dominates(_result(late), early)
    assert info.properly_dominates(module.body.block, module.body.block)
    # Unregistered ops' single-block regions are graph regions too (MLIR's rule).
    u1, u2 = ops["u1"], ops["u2"]
    assert u1.parent is not None and not info.has_ssa_dominance(u1.parent)
    assert info.properly_dominates(_result(u2), u1)
    # Registered ops without a terminator still have SSA dominance.
    p1, p2 = ops["p1"], ops["p2"]
    assert p1.parent is not None and info.has_ssa_dominance(p1.parent)
    assert p2.parent is not None and info.has_ssa_dominance(p2.parent)
    assert not info.properly_dominates(p1, p1)
    # Function bodies are SSA regions.
    func = _func(_parse(DIAMOND))
    assert info.has_ssa_dominance(func.body)


# --- random CFGs against two references ----------------------------------------


def _cfg_text(succs: list[list[int]]) -> str:
    lines = ["func.func @f(%x: i32) {"]
    for i, targets in enumerate(succs):
        if i:
            lines.append(f"^bb{i}:")
        if not targets:
            lines.append("  func.return")
        elif len(targets) == 1:
            lines.append(f"  cf.br ^bb{targets[0]}")
        elif len(targets) == 2:
            lines.append(f"  %c{i} = arith.constant true")
            lines.append(f"  cf.cond_br %c{i}, ^bb{targets[0]}, ^bb{targets[1]}")
        else:
            cases = ", ".join(f"{k}: ^bb{t}" for k, t in enumerate(targets[1:]))
            lines.append(f"  cf.switch %x : i32, [default: ^bb{targets[0]}, {cases}]")
    lines.append("}")
    return "\n".join(lines)


def _reachable(succs: list[list[int]], removed: int | None = None) -> set[int]:
    if removed == 0:
        return set()
    seen = {0}
    work = deque([0])
    while work:
        for t in succs[work.popleft()]:
            if t != removed and t not in seen:
                seen.add(t)
                work.append(t)
    return seen


@st.composite
def _cfgs(draw: st.DrawFn) -> list[list[int]]:
    n = draw(st.integers(1, 9))
    connected = draw(st.booleans())
    succs: list[list[int]] = [[] for _ in range(n)]
    if connected:  # a spanning tree from the entry makes every block reachable
        for i in range(1, n):
            succs[draw(st.integers(0, i - 1))].append(i)
    for i in range(n):
        extra = draw(st.lists(st.integers(1, max(n - 1, 1)), max_size=3))
        succs[i].extend(t for t in extra if n > 1)
    return succs


@settings(max_examples=300, deadline=None)
@given(_cfgs())
def test_random_cfgs(succs: list[list[int]]) -> None:
    func = _func(_parse(_cfg_text(succs)))
    blocks = _blocks(func)
    n = len(blocks)
    assert n == len(succs)
    info = DominanceInfo(func)
    reach = _reachable(succs)
    # Oracle: a dominates b iff every path from the entry to b passes through a
    # (vacuously true for unreachable b: LLVM's and MLIR's rule).
    oracle = [
        [a == b or b not in _reachable(succs, removed=a) for b in range(n)]
        for a in range(n)
    ]
    assert _matrix(info, blocks) == oracle
    for b in range(n):
        assert info.is_reachable_from_entry(blocks[b]) == (b in reach)
        idom = info.immediate_dominator(blocks[b])
        if b == 0 or b not in reach:
            assert idom is None
            continue
        strict = [a for a in range(n) if a != b and oracle[a][b]]
        # The immediate dominator is the strict dominator every other one dominates.
        (expected,) = [a for a in strict if all(oracle[s][a] for s in strict)]
        assert idom is blocks[expected]
    # xDSL's slow version is right on reachable blocks as long as no unreachable
    # block branches into them (it intersects over every predecessor).
    if not any(t in reach for i in range(n) if i not in reach for t in succs[i]):
        slow = SlowDominanceInfo(func.body)
        for a in reach:
            for b in reach:
                assert info.dominates(blocks[a], blocks[b]) == slow.dominates(
                    blocks[a], blocks[b]
                )


# --- analysis manager integration ------------------------------------------------


def test_cached_by_analysis_manager_and_lazy() -> None:
    module = _parse(NESTED)
    func = _func(module)
    am = AnalysisManager.for_root(func)
    info = am.get_analysis(DominanceInfo)
    assert am.get_analysis(DominanceInfo) is info
    assert am.get_cached_analysis(DominanceInfo) is info
    assert info.operation is func
    # Nothing is computed before a query; a query builds only its region's tree.
    assert not info.is_computed(func.body)
    entry, tail = _blocks(func)
    assert info.dominates(entry, tail)
    assert info.is_computed(func.body)
    for_region: Region = _tagged(func)["for"].regions[0]
    assert not info.is_computed(for_region)
    root = info.get_root_node(func.body)
    assert info.get_root_node(func.body) is root  # the tree is not rebuilt
    # Invalidation by a pass that preserves nothing drops the analysis.
    am.invalidate(PreservedAnalyses())
    assert am.get_cached_analysis(DominanceInfo) is None
    assert am.get_analysis(DominanceInfo) is not info


def test_invalidate_region_after_cfg_edit() -> None:
    func = _func(_parse(DIAMOND))
    info = DominanceInfo(func)
    entry, left, right, join = _blocks(func)
    assert info.immediate_dominator(join) is entry
    # Make `right` branch to `left` instead of `join`: now `left` dominates `join`.
    terminator = right.last_op
    assert terminator is not None
    terminator.successors = [left]
    assert info.immediate_dominator(join) is entry  # stale until invalidated
    info.invalidate(func.body)
    assert not info.is_computed(func.body)
    assert info.immediate_dominator(join) is left
    assert info.dominates(left, join)
    info.invalidate()
    assert not info.is_computed(func.body)


def test_mismatched_kinds_are_rejected() -> None:
    func = _func(_parse(DIAMOND))
    info = DominanceInfo(func)
    entry = _blocks(func)[0]
    op = entry.first_op
    assert op is not None
    with pytest.raises(TypeError):
        info.dominates(entry, op)  # type: ignore[call-overload]
    with pytest.raises(TypeError):
        info.properly_dominates(op, entry)  # type: ignore[call-overload]
