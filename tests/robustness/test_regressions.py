"""Plain regression tests for the escapes found while building the robustness
suite (docs/robustness.md, "What it found") and issue 15's item 9: each failed
before its fix."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, cast

import pytest

from passflow import options as options_module
from passflow.deep_stack import call_with_deep_stack
from passflow.diagnostics import OptionError, PipelineParseError
from passflow.manager import Nesting, OpPassManager
from passflow.options import ListOption, Option, options_of, parse_options_string
from passflow.pipeline_text import (
    MAX_OPTION_NESTING,
    add_pass_flag,
    parse_pass_pipeline,
    parse_pipeline_elements,
)
from passflow.tools import opt

from .support import time_bound

# --- option strings are scanned in linear time (item 9) ---------------------------

_SCANNERS = (
    "_next_option",
    "_value_end",
    "_value_brace_end",
    "_closing_quote",
    "_extract_arg",
    "_split_list",
    "_find_char",
)


@pytest.fixture
def handed_text(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], int]]:
    """The number of characters handed to the option scanners, each distinct
    string counted once: a scanner that is given the remainder of the text again
    and again (`rest = rest[comma + 1:]`) makes it grow with the square of the
    length; index-based scanning over the one string keeps it linear."""
    seen: dict[int, str] = {}  # kept alive, so no id is reused

    def wrap(function: Callable[..., Any]) -> Callable[..., Any]:
        def counting(*args: Any) -> Any:
            for arg in args:
                if isinstance(arg, str):
                    seen.setdefault(id(arg), arg)
            return function(*args)

        return counting

    for name in _SCANNERS:
        monkeypatch.setattr(options_module, name, wrap(getattr(options_module, name)))
    yield lambda: sum(len(text) for text in seen.values())


class Lists:
    words = ListOption(str)
    flag = Option(False)


def test_a_long_list_is_scanned_in_linear_time(
    handed_text: Callable[[], int],
) -> None:
    items = [f"w{i}" for i in range(5_000)]
    text = "words=" + ",".join(items)
    values = parse_options_string(text, options_of(Lists))
    assert values["words"] == items
    # Quadratic slicing hands over ~n²/(2·item) = 30 M characters here.
    assert handed_text() <= 4 * len(text)


def test_many_options_are_scanned_in_linear_time(
    handed_text: Callable[[], int],
) -> None:
    text = " ".join(["flag=true"] * 2_000 + [f"words={{w{i},x}}" for i in range(2_000)])
    values = parse_options_string(text, options_of(Lists))
    assert values["flag"] is True
    assert len(cast(list[str], values["words"])) == 4_000
    assert handed_text() <= 4 * len(text)


def test_quoted_and_braced_items_are_scanned_in_linear_time(
    handed_text: Callable[[], int],
) -> None:
    text = "words=" + ",".join(f"'a,{i}',{{b,{i}}},\"c {i}\"" for i in range(1_000))
    words = cast(list[str], parse_options_string(text, options_of(Lists))["words"])
    assert words[:3] == ["a,0", "b,0", "c 0"]
    assert len(words) == 3_000
    assert handed_text() <= 4 * len(text)


def test_a_repeated_list_option_appends_in_place() -> None:
    """`x=a x=b ...`: each occurrence extends the list the parser holds rather
    than building a new one (`previous + value`), which was quadratic."""
    built: list[list[str]] = []
    option = options_of(Lists)["words"]
    original = option.combine

    def recording(previous: list[str] | None, value: list[str]) -> list[str]:
        result = original(previous, value)
        built.append(result)
        return result

    option.combine = recording  # type: ignore[method-assign]
    try:
        values = parse_options_string("words=a words=b,c words=d", options_of(Lists))
    finally:
        del option.combine
    assert values["words"] == ["a", "b", "c", "d"]
    assert all(result is built[0] for result in built)


def test_a_megabyte_list_option_in_a_pipeline() -> None:
    items = ",".join(f"p{i}" for i in range(150_000))  # about 1 MB
    pm = parse_pass_pipeline(
        f"builtin.module(canonicalize{{disable-patterns={items}}})"
    )
    assert "p149999" in str(pm)


class Floats:
    real = Option(1.5)
    reals = ListOption(float)


@pytest.mark.parametrize(
    "text",
    ["1" * 200_000 + "x", "0x" + "1" * 200_000 + "g", "1." + "1" * 200_000 + "e"],
)
def test_a_long_run_of_digits_that_is_no_float_fails_fast(text: str) -> None:
    """Before the fix the float pattern (`[0-9]+\\.?[0-9]*`) could split a run of
    digits between its two repetitions in every way: 16,000 digits and an `x`
    took 27 s to refuse, and the 200,000 here about an hour. A hang fails
    under the time bound."""
    with time_bound(text), pytest.raises(OptionError, match="floating point"):
        parse_options_string(f"real={text}", options_of(Floats))
    with time_bound(text), pytest.raises(OptionError, match="floating point"):
        parse_options_string(f"reals=1,{text}", options_of(Floats))


def test_long_floats_still_parse() -> None:
    digits = "1" * 100_000
    text = f"reals={digits}.5e-99990,0x{digits}p1,.5"
    values = parse_options_string(text, options_of(Floats))
    assert values["reals"] == [float(f"{digits}.5e-99990"), math.inf, 0.5]


# --- pipelines nested in options, and depth in the library ------------------------


def nested_in_options(depth: int, innermost: str = "cse") -> str:
    """`depth` pipelines, each in the `op-pipelines` option of an inliner of
    the one around it."""
    text = innermost
    for _ in range(depth - 1):
        text = f"inline{{op-pipelines=builtin.module({text})}}"
    return f"builtin.module({text})"


def test_pipelines_nest_in_options_up_to_the_bound() -> None:
    pm = parse_pass_pipeline(nested_in_options(MAX_OPTION_NESTING))
    assert str(pm).count("inline{") == MAX_OPTION_NESTING - 1


@pytest.mark.parametrize("depth", [MAX_OPTION_NESTING + 1, 800])
def test_deeper_nesting_in_options_is_one_short_error(depth: int) -> None:
    """Before the fix 800 levels took 5 s (each level scans all the levels
    inside it) and 100 levels raised RecursionError; an error at the bottom
    repeated every level's text in its "failed to add" chain (megabytes)."""
    with pytest.raises(PipelineParseError) as info:
        parse_pass_pipeline(nested_in_options(depth, "cse{bogus=1}"))
    message = str(info.value)
    assert message == (
        f"pipelines nested in pass options more than {MAX_OPTION_NESTING} levels deep"
    )


def test_the_bound_holds_for_pass_flags_and_in_a_deep_stack() -> None:
    inner = nested_in_options(MAX_OPTION_NESTING)
    pm = OpPassManager("builtin.module", Nesting.IMPLICIT)
    too_deep = f"more than {MAX_OPTION_NESTING} levels deep"
    with pytest.raises(PipelineParseError, match=too_deep):
        add_pass_flag(pm, "inline", f"op-pipelines={inner}")
    with pytest.raises(PipelineParseError, match=too_deep):
        call_with_deep_stack(
            lambda: parse_pass_pipeline(nested_in_options(MAX_OPTION_NESTING + 1))
        )
    # The count is back at zero afterwards.
    assert str(parse_pass_pipeline(nested_in_options(MAX_OPTION_NESTING)))


def test_deep_parentheses_are_an_error_not_a_recursion_error() -> None:
    """Before the fix, without passflow-opt's deep stack, 5,000 nested
    pipelines raised RecursionError out of `parse_pass_pipeline`."""
    depth = 5_000
    assert depth * 3 > sys.getrecursionlimit()
    text = "builtin.module(" + "any(" * depth + ")" * (depth + 1)
    with pytest.raises(PipelineParseError, match="recursion limit was reached"):
        parse_pass_pipeline(text)


def test_deep_parentheses_split_into_elements_without_recursion() -> None:
    depth = 5_000
    (element,) = parse_pipeline_elements("a(" * depth + ")" * depth)
    levels = 0
    while element.inner is not None:
        (element,) = element.inner
        levels += 1
    assert levels == depth
    assert element.name == ""  # `a()` holds one element with an empty name


# --- escapes found by hand beside the suite -----------------------------------------


def test_a_remark_filter_with_a_huge_repetition_is_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "in.mlir"
    source.write_text("func.func @f() {\n  func.return\n}\n")
    out = tmp_path / "out.mlir"
    for flag in ("--remarks-filter", "--remarks-filter-missed"):
        status = opt.main([str(source), f"{flag}=a{{99999999999}}", "-o", str(out)])
        assert status == 0
        assert "Traceback" not in capsys.readouterr().err
        assert "func.func @f()" in out.read_text()


def test_inline_treats_a_named_sequence_as_callable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # xDSL gives transform.named_sequence the callable trait of func.func, whose
    # region accessor asserts a func.func.
    source = tmp_path / "in.mlir"
    source.write_text(
        "module attributes {transform.with_named_sequence} {\n"
        '  transform.named_sequence @main(%arg0: !transform.op<"builtin.module">) {\n'
        "    transform.yield\n"
        "  }\n"
        "}\n"
    )
    out = tmp_path / "out.mlir"
    assert opt.main([str(source), "-p", "builtin.module(inline)", "-o", str(out)]) == 0
    assert capsys.readouterr().err == ""
    assert "transform.named_sequence @main" in out.read_text()
