"""`inline`: output against mlir-opt 22.1.8, its options, its dynamic pipeline."""

from __future__ import annotations

import pytest
from transforms_support import Recorder, assert_same_ir, context, run_pipeline

from passflow import ir
from passflow.diagnostics import PassPipelineError
from passflow.pass_manager import PassManager
from passflow.pipeline_text import parse_pass_pipeline
from passflow.registry import lookup_pass
from passflow.transforms import Inliner
from passflow.transforms.call_graph import CallGraph

# An unused private function, a private one called twice, a public one, a
# multi-block callee, a recursive function and their caller.
CALLS = """
func.func private @unused(%a: i32) -> i32 {
  return %a : i32
}
func.func private @add1(%a: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %r = arith.addi %a, %c1 : i32
  return %r : i32
}
func.func @pub(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %r = arith.addi %a, %c0 : i32
  return %r : i32
}
func.func @multi(%c: i1, %a: i32) -> i32 {
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  return %a : i32
^bb2:
  %r = func.call @add1(%a) : (i32) -> i32
  return %r : i32
}
func.func @rec(%a: i32) -> i32 {
  %r = func.call @rec(%a) : (i32) -> i32
  return %r : i32
}
func.func @main(%a: i32, %c: i1) -> i32 {
  %x = func.call @add1(%a) : (i32) -> i32
  %y = func.call @pub(%x) : (i32) -> i32
  %z = func.call @multi(%c, %y) : (i1, i32) -> i32
  %w = func.call @rec(%z) : (i32) -> i32
  return %w : i32
}
"""

MLIR_NO_PIPELINE = """
module {
  func.func @pub(%arg0: i32) -> i32 {
    %c0_i32 = arith.constant 0 : i32
    %0 = arith.addi %arg0, %c0_i32 : i32
    return %0 : i32
  }
  func.func @multi(%arg0: i1, %arg1: i32) -> i32 {
    cf.cond_br %arg0, ^bb1, ^bb2
  ^bb1:  // pred: ^bb0
    return %arg1 : i32
  ^bb2:  // pred: ^bb0
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg1, %c1_i32 : i32
    return %0 : i32
  }
  func.func @rec(%arg0: i32) -> i32 {
    %0 = call @rec(%arg0) : (i32) -> i32
    return %0 : i32
  }
  func.func @main(%arg0: i32, %arg1: i1) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg0, %c1_i32 : i32
    %c0_i32 = arith.constant 0 : i32
    %1 = arith.addi %0, %c0_i32 : i32
    cf.cond_br %arg1, ^bb1, ^bb2
  ^bb1:  // pred: ^bb0
    cf.br ^bb3(%1 : i32)
  ^bb2:  // pred: ^bb0
    %c1_i32_0 = arith.constant 1 : i32
    %2 = arith.addi %1, %c1_i32_0 : i32
    cf.br ^bb3(%2 : i32)
  ^bb3(%3: i32):  // 2 preds: ^bb1, ^bb2
    %4 = call @rec(%3) : (i32) -> i32
    return %4 : i32
  }
}
"""

MLIR_ONE_ITERATION = """
module {
  func.func @pub(%arg0: i32) -> i32 {
    return %arg0 : i32
  }
  func.func @multi(%arg0: i1, %arg1: i32) -> i32 {
    cf.cond_br %arg0, ^bb1, ^bb2
  ^bb1:  // pred: ^bb0
    return %arg1 : i32
  ^bb2:  // pred: ^bb0
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg1, %c1_i32 : i32
    return %0 : i32
  }
  func.func @rec(%arg0: i32) -> i32 {
    %0 = call @rec(%arg0) : (i32) -> i32
    return %0 : i32
  }
  func.func @main(%arg0: i32, %arg1: i1) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg0, %c1_i32 : i32
    cf.cond_br %arg1, ^bb1, ^bb2
  ^bb1:  // pred: ^bb0
    cf.br ^bb3(%0 : i32)
  ^bb2:  // pred: ^bb0
    %c1_i32_0 = arith.constant 1 : i32
    %1 = arith.addi %0, %c1_i32_0 : i32
    cf.br ^bb3(%1 : i32)
  ^bb3(%2: i32):  // 2 preds: ^bb1, ^bb2
    %3 = call @rec(%2) : (i32) -> i32
    return %3 : i32
  }
}
"""

MLIR_NO_INLINING = """
module {
  func.func private @add1(%arg0: i32) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg0, %c1_i32 : i32
    return %0 : i32
  }
  func.func @pub(%arg0: i32) -> i32 {
    return %arg0 : i32
  }
  func.func @multi(%arg0: i1, %arg1: i32) -> i32 {
    cf.cond_br %arg0, ^bb1, ^bb2
  ^bb1:  // pred: ^bb0
    return %arg1 : i32
  ^bb2:  // pred: ^bb0
    %0 = call @add1(%arg1) : (i32) -> i32
    return %0 : i32
  }
  func.func @rec(%arg0: i32) -> i32 {
    %0 = call @rec(%arg0) : (i32) -> i32
    return %0 : i32
  }
  func.func @main(%arg0: i32, %arg1: i1) -> i32 {
    %0 = call @add1(%arg0) : (i32) -> i32
    %1 = call @pub(%0) : (i32) -> i32
    %2 = call @multi(%arg1, %1) : (i1, i32) -> i32
    %3 = call @rec(%2) : (i32) -> i32
    return %3 : i32
  }
}
"""

MLIR_THRESHOLD_60 = """
module {
  func.func private @add1(%arg0: i32) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg0, %c1_i32 : i32
    return %0 : i32
  }
  func.func @pub(%arg0: i32) -> i32 {
    return %arg0 : i32
  }
  func.func @multi(%arg0: i1, %arg1: i32) -> i32 {
    cf.cond_br %arg0, ^bb1, ^bb2
  ^bb1:  // pred: ^bb0
    return %arg1 : i32
  ^bb2:  // pred: ^bb0
    %0 = call @add1(%arg1) : (i32) -> i32
    return %0 : i32
  }
  func.func @rec(%arg0: i32) -> i32 {
    %0 = call @rec(%arg0) : (i32) -> i32
    return %0 : i32
  }
  func.func @main(%arg0: i32, %arg1: i1) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg0, %c1_i32 : i32
    %1 = call @multi(%arg1, %0) : (i1, i32) -> i32
    %2 = call @rec(%1) : (i32) -> i32
    return %2 : i32
  }
}
"""

MLIR_CSE_PIPELINE = """
module {
  func.func @pub(%arg0: i32) -> i32 {
    %c0_i32 = arith.constant 0 : i32
    %0 = arith.addi %arg0, %c0_i32 : i32
    return %0 : i32
  }
  func.func @multi(%arg0: i1, %arg1: i32) -> i32 {
    cf.cond_br %arg0, ^bb1, ^bb2
  ^bb1:  // pred: ^bb0
    return %arg1 : i32
  ^bb2:  // pred: ^bb0
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg1, %c1_i32 : i32
    return %0 : i32
  }
  func.func @rec(%arg0: i32) -> i32 {
    %0 = call @rec(%arg0) : (i32) -> i32
    return %0 : i32
  }
  func.func @main(%arg0: i32, %arg1: i1) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg0, %c1_i32 : i32
    %c0_i32 = arith.constant 0 : i32
    %1 = arith.addi %0, %c0_i32 : i32
    cf.cond_br %arg1, ^bb1, ^bb2
  ^bb1:  // pred: ^bb0
    cf.br ^bb3(%1 : i32)
  ^bb2:  // pred: ^bb0
    %2 = arith.addi %1, %c1_i32 : i32
    cf.br ^bb3(%2 : i32)
  ^bb3(%3: i32):  // 2 preds: ^bb1, ^bb2
    %4 = call @rec(%3) : (i32) -> i32
    return %4 : i32
  }
}
"""

SIMPLE = """
func.func private @add1(%a: i32) -> i32 {
  %c1 = arith.constant 1 : i32
  %r = arith.addi %a, %c1 : i32
  return %r : i32
}
func.func @pub(%a: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %r = arith.addi %a, %c0 : i32
  return %r : i32
}
func.func @main(%a: i32) -> i32 {
  %x = func.call @add1(%a) : (i32) -> i32
  %y = func.call @pub(%x) : (i32) -> i32
  %s = arith.muli %y, %y : i32
  %z = func.call @add1(%s) : (i32) -> i32
  return %z : i32
}
"""

MLIR_SIMPLE = """
module {
  func.func @pub(%arg0: i32) -> i32 {
    return %arg0 : i32
  }
  func.func @main(%arg0: i32) -> i32 {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg0, %c1_i32 : i32
    %1 = arith.muli %0, %0 : i32
    %2 = arith.addi %1, %c1_i32 : i32
    return %2 : i32
  }
}
"""


def test_inlines_and_simplifies_like_mlir_opt() -> None:
    assert_same_ir(run_pipeline(SIMPLE, "builtin.module(inline)"), MLIR_SIMPLE)


def test_single_and_multi_block_callees_without_a_pipeline() -> None:
    result = run_pipeline(CALLS, "builtin.module(inline{default-pipeline=})")
    assert_same_ir(result, MLIR_NO_PIPELINE)


def test_runs_canonicalize_as_a_dynamic_pipeline_on_each_function() -> None:
    recorder = Recorder()
    run_pipeline(CALLS, "builtin.module(inline)", None, [recorder])
    canonicalized = [
        name for pass_, _, name in recorder.passes if pass_ == "Canonicalizer"
    ]
    # mlir-opt's order: callees first; a function that inlined something is
    # simplified again; the unused private function too, before it is erased.
    assert canonicalized == [
        "unused",
        "add1",
        "pub",
        "multi",
        "multi",
        "rec",
        "main",
        "main",
    ]
    assert ("Canonicalizer", "func.func", "main") in recorder.passes
    assert set(recorder.pipeline_parents) == {"Inliner"}


def test_computes_the_call_graph_through_the_analysis_manager() -> None:
    recorder = Recorder()
    run_pipeline(CALLS, "builtin.module(inline)", None, [recorder])
    # Computed once, on the module, and it is passflow's CallGraph itself, not
    # merely an analysis bearing its name.
    assert recorder.analysis_classes.count((CallGraph, "builtin.module", None)) == 1
    assert ("CallGraph", "builtin.module", None) in recorder.analyses


def test_max_iterations_bounds_the_rounds_per_function() -> None:
    recorder = Recorder()
    result = run_pipeline(
        CALLS, "builtin.module(inline{max-iterations=1})", None, [recorder]
    )
    assert_same_ir(result, MLIR_ONE_ITERATION)
    assert [name for _, _, name in recorder.passes[1:]] == [
        "unused",
        "add1",
        "pub",
        "multi",
        "rec",
        "main",
    ]


def test_inlining_threshold_zero_inlines_nothing() -> None:
    result = run_pipeline(CALLS, "builtin.module(inline{inlining-threshold=0})")
    assert_same_ir(result, MLIR_NO_INLINING)


def test_inlining_threshold_compares_callee_and_caller_sizes() -> None:
    result = run_pipeline(CALLS, "builtin.module(inline{inlining-threshold=60})")
    assert_same_ir(result, MLIR_THRESHOLD_60)


def test_op_pipelines_replace_the_default_pipeline_for_their_op() -> None:
    recorder = Recorder()
    pipeline = "builtin.module(inline{op-pipelines=func.func(cse)})"
    result = run_pipeline(CALLS, pipeline, None, [recorder])
    assert_same_ir(result, MLIR_CSE_PIPELINE)
    ran = {pass_ for pass_, _, _ in recorder.passes}
    assert ran == {"Inliner", "CSE"}


def test_fails_on_an_op_that_is_not_a_symbol_table() -> None:
    with pytest.raises(PassPipelineError) as caught:
        run_pipeline(SIMPLE, "builtin.module(func.func(inline))")
    assert (
        "'func.func' op  was scheduled to run under the inliner, but does not "
        "define a symbol table" in str(caught.value)
    )


def test_declaration_matches_mlir_opt() -> None:
    info = lookup_pass("inline")
    assert info is not None and info.pass_class is Inliner
    assert (Inliner.name, Inliner.summary) == ("Inliner", "Inline function calls")
    assert str(Inliner()) == (
        "inline{default-pipeline=canonicalize inlining-threshold=4294967295 "
        "max-iterations=4 }"
    )
    configured = info.create("op-pipelines=func.func(cse) max-iterations=2")
    assert str(configured) == (
        "inline{default-pipeline=canonicalize inlining-threshold=4294967295 "
        "max-iterations=2 op-pipelines={func.func(cse)}}"
    )


def test_a_default_pipeline_that_does_not_parse_fails_the_pass() -> None:
    with pytest.raises(PassPipelineError) as caught:
        run_pipeline(SIMPLE, "builtin.module(inline{default-pipeline=no-such-pass})")
    assert "'no-such-pass' does not refer to a registered pass" in str(caught.value)


# `no_inline` on a call keeps that call; on a callee, every call to it. The
# callee stays: a call that was not inlined still uses it.
NO_INLINE = """
func.func private @callee_ni(%a: i32) -> i32 attributes {no_inline} {
  %c1 = arith.constant 1 : i32
  %r = arith.addi %a, %c1 : i32
  return %r : i32
}
func.func private @callee(%a: i32) -> i32 {
  %c2 = arith.constant 2 : i32
  %r = arith.muli %a, %c2 : i32
  return %r : i32
}
func.func private @once(%a: i32) -> i32 {
  %c3 = arith.constant 3 : i32
  %r = arith.subi %a, %c3 : i32
  return %r : i32
}
func.func @main(%a: i32) -> i32 {
  %x = func.call @callee_ni(%a) : (i32) -> i32
  %y = func.call @callee(%x) {no_inline} : (i32) -> i32
  %z = func.call @callee(%y) : (i32) -> i32
  %w = func.call @once(%z) {no_inline} : (i32) -> i32
  return %w : i32
}
"""

MLIR_NO_INLINE_ATTRIBUTE = """
module {
  func.func private @callee_ni(%arg0: i32) -> i32 attributes {no_inline} {
    %c1_i32 = arith.constant 1 : i32
    %0 = arith.addi %arg0, %c1_i32 : i32
    return %0 : i32
  }
  func.func private @callee(%arg0: i32) -> i32 {
    %c2_i32 = arith.constant 2 : i32
    %0 = arith.muli %arg0, %c2_i32 : i32
    return %0 : i32
  }
  func.func private @once(%arg0: i32) -> i32 {
    %c3_i32 = arith.constant 3 : i32
    %0 = arith.subi %arg0, %c3_i32 : i32
    return %0 : i32
  }
  func.func @main(%arg0: i32) -> i32 {
    %c2_i32 = arith.constant 2 : i32
    %0 = call @callee_ni(%arg0) : (i32) -> i32
    %1 = call @callee(%0) {no_inline} : (i32) -> i32
    %2 = arith.muli %1, %c2_i32 : i32
    %3 = call @once(%2) {no_inline} : (i32) -> i32
    return %3 : i32
  }
}
"""


def test_no_inline_on_the_call_or_the_callee_is_honoured() -> None:
    result = run_pipeline(NO_INLINE, "builtin.module(inline)")
    assert_same_ir(result, MLIR_NO_INLINE_ATTRIBUTE)


# A `nested` callable of a table nothing outside the IR sees goes once its
# last call is inlined, as a private one does; in a module the pass runs on
# from inside another (visible from above), it stays.
NESTED_CALLEES = """
func.func nested @callee(%a: i32) -> i32 {
  %r = arith.addi %a, %a : i32
  return %r : i32
}
func.func nested @unused(%a: i32) -> i32 {
  return %a : i32
}
module @inner {
  func.func nested @g(%a: i32) -> i32 {
    return %a : i32
  }
  func.func @h(%a: i32) -> i32 {
    %r = func.call @g(%a) : (i32) -> i32
    return %r : i32
  }
}
func.func @main(%a: i32) -> i32 {
  %x = func.call @callee(%a) : (i32) -> i32
  return %x : i32
}
"""

MLIR_NESTED_CALLEES = """
module {
  module @inner {
    func.func @h(%arg0: i32) -> i32 {
      return %arg0 : i32
    }
  }
  func.func @main(%arg0: i32) -> i32 {
    %0 = arith.addi %arg0, %arg0 : i32
    return %0 : i32
  }
}
"""

MLIR_NESTED_CALLEES_INNER = """
module {
  func.func nested @callee(%arg0: i32) -> i32 {
    %0 = arith.addi %arg0, %arg0 : i32
    return %0 : i32
  }
  func.func nested @unused(%arg0: i32) -> i32 {
    return %arg0 : i32
  }
  module @inner {
    func.func nested @g(%arg0: i32) -> i32 {
      return %arg0 : i32
    }
    func.func @h(%arg0: i32) -> i32 {
      return %arg0 : i32
    }
  }
  func.func @main(%arg0: i32) -> i32 {
    %0 = call @callee(%arg0) : (i32) -> i32
    return %0 : i32
  }
}
"""


def test_nested_callees_are_discardable_where_all_uses_are_visible() -> None:
    result = run_pipeline(NESTED_CALLEES, "builtin.module(inline)")
    assert_same_ir(result, MLIR_NESTED_CALLEES)
    inner = run_pipeline(NESTED_CALLEES, "builtin.module(builtin.module(inline))")
    assert_same_ir(inner, MLIR_NESTED_CALLEES_INNER)


# No inliner interface for an unregistered op: a call in one of its regions
# stays (xDSL's verifier rejects this input, mlir-opt's does not).
IN_UNREGISTERED = """
func.func private @h() -> i32 {
  %c = arith.constant 2 : i32
  return %c : i32
}
func.func @g() {
  "foo.two"() ({
    %y = func.call @h() : () -> i32
    "foo.use"(%y) : (i32) -> ()
  }, {
    "foo.end"() : () -> ()
  }) : () -> ()
  %z = func.call @h() : () -> i32
  "foo.use"(%z) : (i32) -> ()
  return
}
"""

MLIR_IN_UNREGISTERED = """
module {
  func.func private @h() -> i32 {
    %c2_i32 = arith.constant 2 : i32
    return %c2_i32 : i32
  }
  func.func @g() {
    "foo.two"() ({
      %0 = func.call @h() : () -> i32
      "foo.use"(%0) : (i32) -> ()
    }, {
      "foo.end"() : () -> ()
    }) : () -> ()
    %c2_i32 = arith.constant 2 : i32
    "foo.use"(%c2_i32) : (i32) -> ()
    return
  }
}
"""


def test_a_call_in_a_region_of_an_unregistered_op_is_not_inlined() -> None:
    ctx = context()
    module = ir.parse_module(IN_UNREGISTERED, ctx)
    pm = PassManager(context=ctx)
    pm.assign(parse_pass_pipeline("builtin.module(inline{default-pipeline=})"))
    pm.enable_verifier(False)
    pm.run(module)
    assert_same_ir(module, MLIR_IN_UNREGISTERED)


# llvm.call into llvm.func: a multi-block and a single-block callee are inlined;
# no_inline, a disallowed passthrough attribute, a variadic callee and a
# declaration keep their calls (mlir-opt 22.1.8, without the simplification
# pipeline, which xDSL's llvm.func cannot anchor: it is not IsolatedFromAbove).
LLVM_CALLEES = """
llvm.func @callee_with_multiple_blocks(%cond: i1) -> (i32) {
  llvm.cond_br %cond, ^bb1, ^bb2
^bb1:
  %0 = llvm.mlir.constant(0 : i32) : i32
  llvm.br ^bb3(%0: i32)
^bb2:
  %1 = llvm.mlir.constant(1 : i32) : i32
  llvm.br ^bb3(%1: i32)
^bb3(%arg: i32):
  llvm.return %arg : i32
}
llvm.func @single(%a: i32) -> i32 {
  %0 = llvm.add %a, %a : i32
  llvm.return %0 : i32
}
llvm.func @no_inline() attributes { no_inline } {
  llvm.return
}
llvm.func @strictfp() attributes { passthrough = ["strictfp"] } {
  llvm.return
}
llvm.func @variadic(...) {
  llvm.return
}
llvm.func @declaration()
"""

LLVM_CALLS = (
    LLVM_CALLEES
    + """
llvm.func @caller(%cond: i1) -> (i32) {
  %0 = llvm.call @callee_with_multiple_blocks(%cond) : (i1) -> (i32)
  %1 = llvm.call @single(%0) : (i32) -> (i32)
  llvm.call @no_inline() : () -> ()
  llvm.call @strictfp() : () -> ()
  llvm.call @variadic() vararg(!llvm.func<void (...)>) : () -> ()
  llvm.call @declaration() : () -> ()
  llvm.return %1 : i32
}
"""
)

MLIR_LLVM_CALLS = (
    LLVM_CALLEES
    + """
llvm.func @caller(%arg0: i1) -> i32 {
  llvm.cond_br %arg0, ^bb1, ^bb2
^bb1:
  %0 = llvm.mlir.constant(0 : i32) : i32
  llvm.br ^bb3(%0 : i32)
^bb2:
  %1 = llvm.mlir.constant(1 : i32) : i32
  llvm.br ^bb3(%1 : i32)
^bb3(%2: i32):
  llvm.br ^bb4(%2 : i32)
^bb4(%3: i32):
  %4 = llvm.add %3, %3 : i32
  llvm.call @no_inline() : () -> ()
  llvm.call @strictfp() : () -> ()
  llvm.call @variadic() vararg(!llvm.func<void (...)>) : () -> ()
  llvm.call @declaration() : () -> ()
  llvm.return %4 : i32
}
"""
)


def test_inlines_llvm_calls_by_the_llvm_dialects_rules() -> None:
    module = run_pipeline(LLVM_CALLS, "builtin.module(inline{default-pipeline=})")
    assert_same_ir(module, MLIR_LLVM_CALLS)


def test_a_discardable_llvm_callee_is_moved_in_place_and_erased() -> None:
    text = """
llvm.func @caller() {
  llvm.call @callee() : () -> ()
  llvm.return
}
llvm.func @callee() attributes {sym_visibility = "private"} {
  llvm.return
}
"""
    module = run_pipeline(text, "builtin.module(inline{default-pipeline=})")
    assert_same_ir(module, "llvm.func @caller() {\n  llvm.return\n}")


# A multi-block callee is not spliced into a region that may hold one block only:
# both regions of `scf.while` (xDSL's single-block region definitions), as
# `scf.for` and `scf.if` (`SingleBlockImplicitTerminator`); mlir-opt leaves these
# calls alone (issue 40). The function body takes it.
WHILE_CALLS = """\
func.func private @multi(%a: i32) -> i32 {
  %c = arith.constant 0 : i32
  %b = arith.cmpi slt, %a, %c : i32
  cf.cond_br %b, ^bb1, ^bb2
^bb1:
  return %c : i32
^bb2:
  return %a : i32
}
func.func @in_while(%x: i32) -> i32 {
  %r = scf.while (%v = %x) : (i32) -> i32 {
    %m = func.call @multi(%v) : (i32) -> i32
    %f = arith.cmpi slt, %m, %x : i32
    scf.condition(%f) %m : i32
  } do {
  ^bb0(%w: i32):
    %n = func.call @multi(%w) : (i32) -> i32
    scf.yield %n : i32
  }
  return %r : i32
}
func.func @in_body(%x: i32) -> i32 {
  %n = func.call @multi(%x) : (i32) -> i32
  return %n : i32
}
"""


def test_multi_block_callee_stays_out_of_single_block_regions() -> None:
    result = run_pipeline(WHILE_CALLS, "builtin.module(inline{default-pipeline=})")
    calls = {
        ir.symbol_name(func): [op.name for op in func.walk() if op.name == "func.call"]
        for func in result.ops
    }
    assert calls == {
        "multi": [],
        "in_while": ["func.call", "func.call"],
        "in_body": [],
    }
