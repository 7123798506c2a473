"""A splat dense attribute over `ir.MAX_SPLAT_ELEMENTS` elements is a located
parse error before anything is allocated: xDSL stores every element of a
splat, so `dense<1> : tensor<10000x10000xi32>` (64 bytes of text) took 102 s
and 3.1 GB. Elements the text writes out are not limited.

These tests also watch the xDSL parser hooks the limit relies on
(`parse_dense_int_or_fp_elements_attr`, `_parse_dense_literal_type`): if
xDSL stopped calling them, the refusals below would not happen."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, i32
from xdsl.utils.exceptions import ParseError

from passflow import ir
from passflow.diagnostics import IRParseError
from passflow.tools import opt

HUGE = '"test.op"() {v = dense<1> : tensor<10000x10000xi32>} : () -> ()\n'

NOTE = (
    "passflow's IR (xDSL's) stores every element of a splat, where MLIR stores "
    "one value; set passflow.ir.MAX_SPLAT_ELEMENTS to parse it anyway"
)


def expected_error(
    name: str, line: int, column: int, source: str, count: int, limit: int
) -> str:
    pointer = f"{source}\n{' ' * (column - 1)}^\n"
    where = f"{name}:{line}:{column}"
    return (
        f"{where}: error: dense attribute with {count} elements is over "
        f"passflow's limit of {limit}\n{pointer}"
        f"{where}: note: {NOTE}\n"  # at the location just shown: no source line
    )


# In a child interpreter whose address space is capped: the 512 MiB stack
# passflow-opt runs in and the interpreter fit, a list of 10^8 elements (800 MB)
# does not, so a parser that starts to make the elements fails at once.
CHILD = textwrap.dedent(
    """\
    import resource, sys
    cap = (1 << 30) + (256 << 20)
    resource.setrlimit(resource.RLIMIT_AS, (cap, resource.RLIM_INFINITY))
    resource.setrlimit(resource.RLIMIT_CPU, (60, resource.RLIM_INFINITY))
    from passflow.tools import opt
    sys.exit(opt.main(["huge.mlir", "-o", "out.mlir"]))
    """
)


@pytest.mark.skipif(sys.platform != "linux", reason="address-space limits as Linux's")
def test_a_huge_splat_is_refused_before_it_is_allocated(tmp_path: Path) -> None:
    (tmp_path / "huge.mlir").write_text(HUGE)
    done = subprocess.run(
        [sys.executable, "-c", CHILD],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == expected_error(
        "huge.mlir", 1, 29, HUGE.rstrip(), 10**8, 4_194_304
    )
    assert not (tmp_path / "out.mlir").exists()


def test_opt_refuses_a_splat_over_the_limit_with_status_1(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ir, "MAX_SPLAT_ELEMENTS", 1000, raising=False)
    source = tmp_path / "in.mlir"
    line = "  %c = arith.constant dense<1.5> : tensor<100x100xf32>"
    source.write_text(
        "func.func @f() -> tensor<100x100xf32> {\n"
        f"{line}\n"
        "  func.return %c : tensor<100x100xf32>\n"
        "}\n"
    )
    status = opt.main([str(source), "-o", str(tmp_path / "out.mlir")])
    assert status == 1
    assert capsys.readouterr().err == expected_error(
        str(source), 2, 36, line, 10_000, 1000
    )


def parse_attribute(text: str) -> str:
    """`text`, an attribute, parsed on a test op and printed back."""
    module = ir.parse_module(f'"test.op"() {{v = {text}}} : () -> ()')
    (op,) = ir.direct_children(module)
    return ir.print_op(op)


def test_only_splats_are_limited_and_those_up_to_the_limit_print_as_before(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ir, "MAX_SPLAT_ELEMENTS", 16, raising=False)
    at_limit = {
        "dense<1> : tensor<4x4xi32>": "dense<1> : tensor<4x4xi32>",
        "dense<-2.5> : vector<16xf64>": "dense<-2.500000e+00> : vector<16xf64>",
        "dense<true> : tensor<2x8xi1>": "dense<true> : tensor<2x8xi1>",
        'dense<"0x07000000"> : tensor<16xi32>': "dense<7> : tensor<16xi32>",
        # Elements written out cost what their text does: never limited.
        "dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9], [10, 11, 12], [13, 14, 15], "
        "[16, 17, 18]]> : tensor<6x3xi8>": "dense<[[1, 2, 3], [4, 5, 6], [7, 8, 9], "
        "[10, 11, 12], [13, 14, 15], [16, 17, 18]]> : tensor<6x3xi8>",
        'dense<"0x' + "01" * 17 + '"> : tensor<17xi8>': "dense<1> : tensor<17xi8>",
    }
    for text, printed in at_limit.items():
        assert parse_attribute(text) == f'"test.op"() {{v = {printed}}} : () -> ()'
    for text in ["dense<1> : tensor<17xi32>", 'dense<"0x07000000"> : tensor<17xi32>']:
        with pytest.raises(IRParseError) as info:
            parse_attribute(text)
        assert info.value.diagnostic.message == (
            "dense attribute with 17 elements is over passflow's limit of 16"
        )
        assert [note.message for note in info.value.diagnostic.notes] == [NOTE]
    # The empty literal keeps xDSL's own error.
    with pytest.raises(IRParseError, match="Expected at least one element"):
        parse_attribute("dense<> : tensor<17xi32>")


def test_a_splat_whose_type_came_first_is_limited_too(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Declarative formats parse a dense attribute of a known type from `<...>`.
    monkeypatch.setattr(ir, "MAX_SPLAT_ELEMENTS", 16, raising=False)
    ctx = ir.default_context()
    fits = ir._LocatingParser(ctx, "<1>", "x")  # pyright: ignore[reportPrivateUsage]
    attr = DenseIntOrFPElementsAttr.parse_with_type(fits, TensorType(i32, [16]))
    assert isinstance(attr, DenseIntOrFPElementsAttr)
    over = ir._LocatingParser(ctx, "<1>", "x")  # pyright: ignore[reportPrivateUsage]
    with pytest.raises(ParseError, match="dense attribute with 17 elements"):
        DenseIntOrFPElementsAttr.parse_with_type(over, TensorType(i32, [17]))
