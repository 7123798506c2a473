"""The three requests as extensions to pipelines their authors don't own
(examples/builder_iree_global_opt.py, builder_flang_hlfir.py,
builder_triton_stages.py), each run on real IR."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def run_example(name: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr == ""
    return done.stdout


def test_iree_a_plugin_pass_in_global_optimization_without_a_hook() -> None:
    out = run_example("builder_iree_global_opt.py")
    base, extended = (
        line.strip()
        for line in out.splitlines()
        if line.startswith("  builtin.module(")
    )
    assert "my-plugin-custom-fusion" not in base
    assert (
        base.replace(
            "iree-dispatch-creation-form-dispatch-regions",
            "my-plugin-custom-fusion,iree-dispatch-creation-form-dispatch-regions",
        )
        == extended
    )
    assert "came    my-plugin-custom-fusion: #7" in out
    assert (
        'ok: BeforeFirst("iree-dispatch-creation-form-dispatch-regions") [declared by '
        "pass class CustomFusion]: before #8" in out
    )
    # On the IR: after Global Optimization's CSE (one addition left), before
    # dispatch regions were formed.
    assert 'plugin.saw = "after iree-util-hoist-into-globals: 1 arith.addi"' in out


def test_flang_enzyme_sees_hlfir_at_both_places_at_every_level() -> None:
    out = run_example("builder_flang_hlfir.py")
    o0, o2 = out.split("== -O2\n")
    assert (
        "builtin.module(func.func(enzyme-hlfir-probe{at=early},enzyme-hlfir-probe"
        "{at=last},lower-hlfir-intrinsics,convert-hlfir-to-fir))" in o0
    )
    assert "func.func(enzyme-hlfir-probe{at=early},simplify-hlfir-intrinsics," in o2
    assert "canonicalize{" in o2 and "enzyme-hlfir-probe{at=last},lower-hlfir" in o2
    early = 'enzyme.early = ["hlfir.assign", "hlfir.matmul", "hlfir.sum"]'
    assert early in o0 and early in o2
    assert 'enzyme.last = ["hlfir.assign", "hlfir.matmul", "hlfir.sum"]' in o0
    assert 'enzyme.last = ["hlfir.assign", "hlfir.elemental", "hlfir.matmul"]' in o2
    body = [line for line in out.splitlines() if line.startswith("    ")]
    assert body and not any('"hlfir.' in line for line in body)  # all lowered


def test_triton_a_downstream_edits_a_backend_stage_per_kernel() -> None:
    out = run_example("builder_triton_stages.py")
    add, debug = out.split("== debug_kernel")
    assert "came    downstream-count-arith: #5" in add
    assert "went    loop-invariant-code-motion" not in add
    assert "went    loop-invariant-code-motion: was #7" in debug
    assert "downstream.arith_ops = 4 : i64" in add and "downstream.arith_ops" in debug

    def hoisted(text: str) -> bool:
        return text.index("arith.muli") < text.index("scf.for")

    assert hoisted(add) and not hoisted(debug)
