"""Pass options: declaration, MLIR's option-string parsing and printing, llvm::cl errors.

The classes below mirror the options of real MLIR passes, and every expected string
was printed by mlir-opt 22.1.8 for
`--pass-pipeline='builtin.module(<pass>{<text>})' --dump-pass-pipeline`
(func.func-nested for affine-loop-tile), with `mlir-opt:` read as `passflow-opt:`.
"""

from __future__ import annotations

import enum
import math
import operator
from typing import Any, cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from passflow.diagnostics import OptionError, PipelineParseError, RegistrationError
from passflow.manager import OpPassManager
from passflow.options import (
    INT,
    LONG,
    UNSIGNED,
    UNSIGNED_LONG,
    ListOption,
    Option,
    OptionBase,
    PipelineOptions,
    apply_options,
    apply_options_string,
    copy_option_values,
    explicit_options,
    format_options,
    option_values,
    options_of,
    parse_options_string,
)
from passflow.pass_base import OperationPass
from passflow.pipeline_text import PIPELINE, PipelineOption, parse_pass_pipeline
from passflow.registry import lookup_pass

# --- mirrors of mlir-opt passes ---------------------------------------------------


class RegionSimplify(enum.Enum):
    DISABLED = "disabled"
    NORMAL = "normal"
    AGGRESSIVE = "aggressive"


class Canonicalize:
    argument = "canonicalize"
    top_down = Option(True, help="Seed the worklist in general top-down order")
    region_simplify = Option(
        RegionSimplify.NORMAL, help="Perform control flow optimizations"
    )
    max_iterations = Option(10, help="Max. iterations between applying patterns")
    max_num_rewrites = Option(
        -1, help="Max. number of pattern rewrites within an iteration"
    )
    test_convergence = Option(False, help="Test only: Fail pass on non-convergence")
    disable_patterns = ListOption(
        str, help="Labels of patterns that should be filtered out"
    )
    enable_patterns = ListOption(str, help="Labels of patterns that should be used")


class Inline:
    argument = "inline"
    default_pipeline = Option("canonicalize", help="The optimizer pipeline")
    op_pipelines = ListOption(PIPELINE, help="Callable operation specific pipelines")
    max_iterations = Option(4, type=UNSIGNED, help="Maximum number of iterations")
    inlining_threshold = Option(4294967295, type=UNSIGNED, help="Inlining threshold")


class SymbolPrivatize:
    argument = "symbol-privatize"
    exclude = ListOption(str, help="Symbols that should not be marked private")


class PrintOpStats:
    argument = "print-op-stats"
    json = Option(False, help="print the stats as JSON")


class CSE:
    argument = "cse"


class CompositeFixedPointPass:
    argument = "composite-fixed-point-pass"
    name = Option("CompositeFixedPointPass", help="Composite pass display name")
    pipeline = Option("", help="Composite pass inner pipeline")
    max_iterations = Option(10, type=INT, help="Maximum number of iterations")


class AffineLoopTile:
    argument = "affine-loop-tile"
    cache_size = Option(512, type=UNSIGNED_LONG, help="Set size of cache to tile for")


class AffineLoopFusion:
    argument = "affine-loop-fusion"
    compute_tolerance = Option(
        0.3, help="Fractional increase in additional computation"
    )


class RocdlAttachTarget:
    argument = "rocdl-attach-target"
    opt_level = Option(2, type=UNSIGNED, argument="O", help="Optimization level.")


class LinalgBlockPackMatmul:
    argument = "linalg-block-pack-matmul"
    block_factors = ListOption(int, help="Block factors (mb, nb, kb) for relayout")


class Nested:
    argument = "nested"
    inner = PipelineOption(default="", help="Pipeline to run")
    fallback = PipelineOption(default="any(cse)", help="Pipeline with a default")


PASSES: dict[str, type] = {
    cls.argument: cls
    for cls in (
        Canonicalize,
        Inline,
        SymbolPrivatize,
        PrintOpStats,
        CSE,
        CompositeFixedPointPass,
        AffineLoopTile,
        AffineLoopFusion,
        RocdlAttachTarget,
        LinalgBlockPackMatmul,
        Nested,
    )
}


def printed(instance: object) -> str:
    """The pass as `--dump-pass-pipeline` prints it."""
    options = format_options(
        option_values(instance),
        options_of(type(instance)),
        explicit=explicit_options(instance),
    )
    argument: str = type(instance).__dict__["argument"]
    return argument + options


def with_options(argument: str, text: str) -> Any:
    instance = PASSES[argument]()
    apply_options_string(instance, text)
    return instance


# --- printing ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argument", "expected"),
    [
        (
            "canonicalize",
            "canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal "
            "test-convergence=false top-down=true}",
        ),
        (
            "inline",
            "inline{default-pipeline=canonicalize inlining-threshold=4294967295 max-iterations=4 }",
        ),
        ("symbol-privatize", "symbol-privatize{}"),
        ("print-op-stats", "print-op-stats{json=false}"),
        ("cse", "cse"),
        (
            "composite-fixed-point-pass",
            "composite-fixed-point-pass{max-iterations=10 name=CompositeFixedPointPass pipeline=}",
        ),
        ("affine-loop-fusion", "affine-loop-fusion{compute-tolerance=3.000000e-01}"),
        ("rocdl-attach-target", "rocdl-attach-target{O=2}"),
    ],
)
def test_defaults_print_like_mlir(argument: str, expected: str) -> None:
    assert printed(PASSES[argument]()) == expected


CANONICALIZE_TAIL = "region-simplify=normal test-convergence=false top-down=true}"


@pytest.mark.parametrize(
    ("argument", "text", "expected"),
    [
        # Scalars: last occurrence wins; bare bool keys and `key=` mean true.
        (
            "canonicalize",
            "max-iterations=3 max-iterations=5",
            "canonicalize{  max-iterations=5 max-num-rewrites=-1 " + CANONICALIZE_TAIL,
        ),
        (
            "canonicalize",
            "top-down",
            "canonicalize{  max-iterations=10 max-num-rewrites=-1 " + CANONICALIZE_TAIL,
        ),
        (
            "canonicalize",
            "top-down= test-convergence=1",
            "canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal "
            "test-convergence=true top-down=true}",
        ),
        (
            "canonicalize",
            "top-down=FALSE",
            "canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=normal "
            "test-convergence=false top-down=false}",
        ),
        (
            "canonicalize",
            "region-simplify=normal region-simplify=aggressive",
            "canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=aggressive "
            "test-convergence=false top-down=true}",
        ),
        (
            "canonicalize",
            "region-simplify='disabled'",
            "canonicalize{  max-iterations=10 max-num-rewrites=-1 region-simplify=disabled "
            "test-convergence=false top-down=true}",
        ),
        # Integers: llvm's radix prefixes.
        (
            "canonicalize",
            "max-iterations=0x10 max-num-rewrites=-010",
            "canonicalize{  max-iterations=16 max-num-rewrites=-8 " + CANONICALIZE_TAIL,
        ),
        (
            "canonicalize",
            "max-iterations=0b101 max-num-rewrites=0o17",
            "canonicalize{  max-iterations=5 max-num-rewrites=15 " + CANONICALIZE_TAIL,
        ),
        (
            "canonicalize",
            "max-iterations=0B101 max-num-rewrites=0X1f",
            "canonicalize{  max-iterations=5 max-num-rewrites=31 " + CANONICALIZE_TAIL,
        ),
        (
            "canonicalize",
            "max-iterations=9223372036854775807 max-num-rewrites=-9223372036854775808",
            "canonicalize{  max-iterations=9223372036854775807 "
            "max-num-rewrites=-9223372036854775808 " + CANONICALIZE_TAIL,
        ),
        (
            "canonicalize",
            "max-iterations=00 max-num-rewrites=-0",
            "canonicalize{  max-iterations=0 max-num-rewrites=0 " + CANONICALIZE_TAIL,
        ),
        # Keys are cleaned like values; extra spaces are skipped.
        (
            "canonicalize",
            "'max-iterations'=3   {top-down}=false  ",
            "canonicalize{  max-iterations=3 max-num-rewrites=-1 region-simplify=normal "
            "test-convergence=false top-down=false}",
        ),
        # Lists: the first occurrence replaces the default, later ones append.
        (
            "canonicalize",
            "disable-patterns={a,b} disable-patterns=d",
            "canonicalize{disable-patterns={a,b,d}  max-iterations=10 max-num-rewrites=-1 "
            + CANONICALIZE_TAIL,
        ),
        # A list set from text prints even when equal to its (empty) default.
        ("symbol-privatize", "exclude=", "symbol-privatize{exclude={}}"),
        ("symbol-privatize", "exclude={}", "symbol-privatize{exclude={}}"),
        ("symbol-privatize", 'exclude=""', "symbol-privatize{exclude={}}"),
        (
            "symbol-privatize",
            "exclude=a,b exclude=c",
            "symbol-privatize{exclude={a,b,c}}",
        ),
        ("symbol-privatize", "exclude={,}", "symbol-privatize{exclude={,}}"),
        ("symbol-privatize", 'exclude="",""', "symbol-privatize{exclude={,}}"),
        # Elements print like strings: braced when a space comes first.
        ("symbol-privatize", 'exclude="a b",c', "symbol-privatize{exclude={{a b},c}}"),
        ("symbol-privatize", "exclude={a b},c", "symbol-privatize{exclude={{a b},c}}"),
        # Commas inside brackets or quotes do not split elements.
        ("symbol-privatize", "exclude=(a,b),c", "symbol-privatize{exclude={(a,b),c}}"),
        ("symbol-privatize", "exclude=[a,b],c", "symbol-privatize{exclude={[a,b],c}}"),
        ("symbol-privatize", "exclude='a,b'", "symbol-privatize{exclude={a,b}}"),
        ("symbol-privatize", "exclude='a,b',c", "symbol-privatize{exclude={a,b,c}}"),
        ("symbol-privatize", 'exclude="a,b",c', "symbol-privatize{exclude={a,b,c}}"),
        ("symbol-privatize", "exclude={a,b},{c}", "symbol-privatize{exclude={a,b,c}}"),
        ("symbol-privatize", "exclude={a, b}", "symbol-privatize{exclude={a,b}}"),
        ("symbol-privatize", "exclude={ a , b }", "symbol-privatize{exclude={a,b}}"),
        ("symbol-privatize", "exclude={a,{b}}", "symbol-privatize{exclude={a,b}}"),
        ("symbol-privatize", "exclude={a}b", "symbol-privatize{exclude={{a}b}}"),
        # Unmatched brackets and quotes leave the rest as one element.
        ("symbol-privatize", "exclude=a,(b", "symbol-privatize{exclude={a,(b}}"),
        ("symbol-privatize", 'exclude=a,"b', 'symbol-privatize{exclude={a,"b}}'),
        # Quotes strip only when they wrap the whole value.
        ("symbol-privatize", "exclude='a'b", "symbol-privatize{exclude={'a'b}}"),
        ("symbol-privatize", "exclude=a'b c'd", "symbol-privatize{exclude={a'b c'd}}"),
        ("symbol-privatize", "exclude=='a'", "symbol-privatize{exclude={='a'}}"),
        # Only spaces separate options; other whitespace stays in the value.
        ("symbol-privatize", "exclude=a\tb", "symbol-privatize{exclude={a\tb}}"),
        # Empty keys are skipped.
        ("symbol-privatize", " =a exclude=b", "symbol-privatize{exclude={b}}"),
        ("symbol-privatize", "=a", "symbol-privatize{}"),
        ("symbol-privatize", "{exclude}=a", "symbol-privatize{exclude={a}}"),
        # Strings: braced when a space comes before any `{`, `'` or `"`.
        (
            "inline",
            'default-pipeline="cse canonicalize"',
            "inline{default-pipeline={cse canonicalize} inlining-threshold=4294967295 max-iterations=4 }",
        ),
        (
            "inline",
            "default-pipeline={cse canonicalize}",
            "inline{default-pipeline={cse canonicalize} inlining-threshold=4294967295 max-iterations=4 }",
        ),
        (
            "inline",
            "default-pipeline=",
            "inline{default-pipeline= inlining-threshold=4294967295 max-iterations=4 }",
        ),
        (
            "inline",
            "default-pipeline='a{b c}'",
            "inline{default-pipeline=a{b c} inlining-threshold=4294967295 max-iterations=4 }",
        ),
        (
            "inline",
            "default-pipeline='a\"b c'",
            'inline{default-pipeline=a"b c inlining-threshold=4294967295 max-iterations=4 }',
        ),
        (
            "inline",
            'default-pipeline="{x}"',
            "inline{default-pipeline={x} inlining-threshold=4294967295 max-iterations=4 }",
        ),
        (
            "inline",
            "default-pipeline='\"'",
            'inline{default-pipeline=" inlining-threshold=4294967295 max-iterations=4 }',
        ),
        (
            "inline",
            "default-pipeline={'a b'}",
            "inline{default-pipeline='a b' inlining-threshold=4294967295 max-iterations=4 }",
        ),
        ("print-op-stats", "json", "print-op-stats{json=true}"),
        ("cse", "", "cse"),
        ("cse", " ", "cse"),
        (
            "affine-loop-tile",
            "cache-size=18446744073709551615",
            "affine-loop-tile{cache-size=18446744073709551615}",
        ),
    ],
)
def test_parse_then_print_like_mlir(argument: str, text: str, expected: str) -> None:
    assert printed(with_options(argument, text)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "0.000000e+00"),
        ("1e3", "1.000000e+03"),
        ("0x1p3", "8.000000e+00"),
        ("0x.8p1", "1.000000e+00"),
        ("inf", "INF"),
        ("-Infinity", "-INF"),
        ("INFINITY", "INF"),
        ("nan", "nan"),
        ("nAn", "nan"),
        ("nan(123)", "nan"),
        ("nan()", "nan"),
        ("nan(a_b)", "nan"),
        ("1.5e+2", "1.500000e+02"),
        (".5", "5.000000e-01"),
        ("-.5", "-5.000000e-01"),
        ("+.5e-1", "5.000000e-02"),
        ("5.", "5.000000e+00"),
        ("1e400", "INF"),
        ("1e-400", "0.000000e+00"),
        ('" 1.5"', "1.500000e+00"),
        ("-0.0", "-0.000000e+00"),
        ("123456789012345678", "1.234568e+17"),
        ("0.3", "3.000000e-01"),
    ],
)
def test_floats_parse_like_strtod_and_print_like_raw_ostream(
    text: str, expected: str
) -> None:
    instance = with_options("affine-loop-fusion", f"compute-tolerance={text}")
    assert printed(instance) == f"affine-loop-fusion{{compute-tolerance={expected}}}"


def test_hex_float_overflow_is_infinite() -> None:
    values = parse_options_string(
        "compute-tolerance=-0x1p99999", options_of(AffineLoopFusion)
    )
    assert values == {"compute_tolerance": -math.inf}


# --- errors -----------------------------------------------------------------------


def cl_error(option: str, message: str) -> str:
    return f"passflow-opt: for the {option} option: {message}"


@pytest.mark.parametrize(
    ("argument", "text", "message"),
    [
        ("cse", "foo=3", "<Pass-Options-Parser>: no such option foo"),
        (
            "canonicalize",
            "top-down = false",
            "<Pass-Options-Parser>: no such option false",
        ),
        (
            "symbol-privatize",
            "exclude= a , b ",
            "<Pass-Options-Parser>: no such option a",
        ),
        ("symbol-privatize", "exclude=a, b", "<Pass-Options-Parser>: no such option b"),
        (
            "symbol-privatize",
            "exclude=(a b),c",
            "<Pass-Options-Parser>: no such option b),c",
        ),
        (
            "symbol-privatize",
            'exc"lude=a b"',
            '<Pass-Options-Parser>: no such option exc"lude',
        ),
        (
            "canonicalize",
            "max-iterations=abc",
            cl_error("--max-iterations", "'abc' value invalid for long argument!"),
        ),
        (
            "canonicalize",
            "max-iterations",
            cl_error("--max-iterations", "requires a value!"),
        ),
        (
            "canonicalize",
            "max-iterations=",
            cl_error("--max-iterations", "'' value invalid for long argument!"),
        ),
        (
            "canonicalize",
            "max-iterations=3\ttop-down=false",
            cl_error(
                "--max-iterations",
                "'3\ttop-down=false' value invalid for long argument!",
            ),
        ),
        (
            "canonicalize",
            "top-down=maybe",
            cl_error(
                "--top-down",
                "'maybe' is invalid value for boolean argument! Try 0 or 1",
            ),
        ),
        (
            "canonicalize",
            "region-simplify=bogus",
            cl_error("--region-simplify", "Cannot find option named 'bogus'!"),
        ),
        (
            "canonicalize",
            "region-simplify",
            cl_error("--region-simplify", "requires a value!"),
        ),
        (
            "canonicalize",
            "disable-patterns",
            cl_error("--disable-patterns", "requires a value!"),
        ),
        (
            "inline",
            "default-pipeline",
            cl_error("--default-pipeline", "requires a value!"),
        ),
        ("symbol-privatize", "exclude", cl_error("--exclude", "requires a value!")),
        (
            "inline",
            "max-iterations=abc",
            cl_error("--max-iterations", "'abc' value invalid for uint argument!"),
        ),
        (
            "inline",
            "inlining-threshold=-1",
            cl_error("--inlining-threshold", "'-1' value invalid for uint argument!"),
        ),
        (
            "inline",
            "inlining-threshold=4294967296",
            cl_error(
                "--inlining-threshold", "'4294967296' value invalid for uint argument!"
            ),
        ),
        (
            "composite-fixed-point-pass",
            "max-iterations=4294967296",
            cl_error(
                "--max-iterations", "'4294967296' value invalid for integer argument!"
            ),
        ),
        (
            "affine-loop-tile",
            "cache-size=x",
            cl_error("--cache-size", "'x' value invalid for ulong argument!"),
        ),
        # A one-letter argument gets one dash.
        (
            "rocdl-attach-target",
            "O=x",
            cl_error("-O", "'x' value invalid for uint argument!"),
        ),
        (
            "linalg-block-pack-matmul",
            "block-factors=1,x",
            cl_error("--block-factors", "'x' value invalid for long argument!"),
        ),
        (
            "linalg-block-pack-matmul",
            "block-factors=1,,2",
            cl_error("--block-factors", "'' value invalid for long argument!"),
        ),
        (
            "linalg-block-pack-matmul",
            "block-factors=(1,2)",
            cl_error("--block-factors", "'(1,2)' value invalid for long argument!"),
        ),
        (
            "affine-loop-fusion",
            "compute-tolerance=abc",
            cl_error(
                "--compute-tolerance",
                "'abc' value invalid for floating point argument!",
            ),
        ),
    ]
    + [
        (
            "canonicalize",
            f"max-num-rewrites={bad}",
            cl_error("--max-num-rewrites", f"'{bad}' value invalid for long argument!"),
        )
        for bad in (
            "+5",
            "9223372036854775808",
            "-9223372036854775809",
            "09",
            "0O17",
            "1" * 5000,
            "0b",
            "0x",
            "1a",
            "0_1",
            "--5",
        )
    ]
    + [
        (
            "affine-loop-fusion",
            f"compute-tolerance={bad}",
            cl_error(
                "--compute-tolerance",
                f"'{bad}' value invalid for floating point argument!",
            ),
        )
        for bad in ("1_0", "1e", "1e+", "0x", "0x1p", "nan(-)", ".", "-", "infin")
    ],
)
def test_errors_are_mlirs(argument: str, text: str, message: str) -> None:
    with pytest.raises(OptionError) as info:
        with_options(argument, text)
    assert str(info.value) == message


def test_prog_names_the_tool() -> None:
    with pytest.raises(OptionError, match=r"^mlir-opt: for the --top-down option: "):
        parse_options_string("top-down=2", options_of(Canonicalize), prog="mlir-opt")


def test_deep_nesting_does_not_exhaust_recursion() -> None:
    value = "{" * 5000 + "a" + "}" * 5000
    values = parse_options_string(f"exclude={value},b", options_of(SymbolPrivatize))
    assert values == {"exclude": ["{" * 4999 + "a" + "}" * 4999, "b"]}


# --- parse_options_string results ---------------------------------------------------


def test_parse_result_holds_only_the_options_given_by_attribute() -> None:
    values = parse_options_string(
        "region-simplify=aggressive disable-patterns=a,b top-down=0",
        options_of(Canonicalize),
    )
    assert values == {
        "region_simplify": RegionSimplify.AGGRESSIVE,
        "disable_patterns": ["a", "b"],
        "top_down": False,
    }
    assert parse_options_string("", options_of(Canonicalize)) == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("block-factors=1,-2,0x3", [1, -2, 3]),
        ("block-factors={}", []),
        ("block-factors=' 7 '", [7]),
    ],
)
def test_int_lists(text: str, expected: list[int]) -> None:
    assert parse_options_string(text, options_of(LinalgBlockPackMatmul)) == {
        "block_factors": expected
    }


def test_bool_list_accepts_a_bare_key_as_empty() -> None:
    class Flags:
        bits = ListOption(bool)

    assert parse_options_string("bits", options_of(Flags)) == {"bits": []}
    assert parse_options_string("bits=1,,false", options_of(Flags)) == {
        "bits": [True, True, False]
    }


# --- declarations ------------------------------------------------------------------


def test_arguments_and_metadata() -> None:
    options = options_of(Canonicalize)
    assert list(options) == [
        "top-down",
        "region-simplify",
        "max-iterations",
        "max-num-rewrites",
        "test-convergence",
        "disable-patterns",
        "enable-patterns",
    ]
    option = options["max-iterations"]
    assert (option.attr, option.argument, option.default) == (
        "max_iterations",
        "max-iterations",
        10,
    )
    assert option.help == "Max. iterations between applying patterns"
    assert options_of(RocdlAttachTarget)["O"].attr == "opt_level"
    assert options_of(SymbolPrivatize)["exclude"].default == ()
    assert options_of(CSE) == {}


def test_options_of_is_cached_and_read_only() -> None:
    options = options_of(Canonicalize)
    assert options_of(Canonicalize) is options
    with pytest.raises(TypeError):
        options["x"] = options["top-down"]  # pyright: ignore[reportIndexIssue]


def test_options_follow_the_mro_base_first() -> None:
    class Base:
        b = Option(1)
        shadowed = Option(2)

    class Derived(Base):
        d = Option("x")
        b = Option(3)  # redeclared: keeps its place, new default
        shadowed = 5  # a plain attribute hides the option

    assert list(options_of(Derived)) == ["b", "d"]
    assert options_of(Derived)["b"].default == 3
    assert Derived().shadowed == 5


def test_two_options_with_one_argument_are_an_error() -> None:
    class Twice:
        a_b = Option(1)
        other = Option(2, argument="a-b")

    with pytest.raises(
        RegistrationError, match="option 'a-b' is declared twice in Twice"
    ):
        options_of(Twice)


def test_unknown_python_type_needs_type_argument() -> None:
    with pytest.raises(TypeError, match="no option value type for bytes"):
        Option(b"x")


def test_options_are_non_data_descriptors() -> None:
    pass_ = Canonicalize()
    assert "max_iterations" not in vars(pass_)
    assert pass_.max_iterations == 10
    assert vars(pass_)["max_iterations"] == 10  # stored: later reads are plain
    pass_.max_iterations = 3
    assert pass_.max_iterations == 3
    assert Canonicalize().max_iterations == 10
    assert isinstance(Canonicalize.__dict__["max_iterations"], OptionBase)
    assert isinstance(Canonicalize.max_iterations, Option)


def test_list_defaults_are_fresh_per_instance() -> None:
    class Listy:
        items = ListOption(int, default=[1, 2])

    first, second = Listy(), Listy()
    first.items.append(3)
    assert (first.items, second.items) == ([1, 2, 3], [1, 2])
    assert options_of(Listy)["items"].default == (1, 2)


def test_list_with_a_default_prints_only_when_changed() -> None:
    class Listy:
        items = ListOption(int, default=[1, 2])

    options = options_of(Listy)
    item_option = options["items"]
    assert item_option.format_value([1, 2]) is None
    assert item_option.format_value([1, 2], explicit=True) == "items={1,2}"
    assert item_option.format_value([]) == "items={}"
    assert format_options({"items": [1, 2]}, options) == "{}"
    assert format_options({"items": [3]}, options) == "{items={3}}"
    assert (
        format_options({"items": [1, 2]}, options, explicit=["items"])
        == "{items={1,2}}"
    )


def test_format_value_of_scalars() -> None:
    assert options_of(Canonicalize)["region-simplify"].format_value(
        RegionSimplify.AGGRESSIVE
    ) == ("region-simplify=aggressive")
    assert (
        options_of(Inline)["default-pipeline"].format_value("a b")
        == "default-pipeline={a b}"
    )
    assert (
        options_of(Inline)["default-pipeline"].format_value("") == "default-pipeline="
    )


def test_enum_type_is_inferred_and_int_enum_is_an_enum() -> None:
    class Level(enum.IntEnum):
        LOW = 1
        HIGH = 2

    class Leveled:
        level = Option(Level.LOW)

    assert parse_options_string("level=2", options_of(Leveled)) == {"level": Level.HIGH}
    with pytest.raises(OptionError, match="Cannot find option named 'HIGH'!"):
        parse_options_string("level=HIGH", options_of(Leveled))


def test_explicit_type_and_long_default() -> None:
    class Typed:
        count = Option(1, type=LONG)
        ratio = Option(1, type=float)

    assert parse_options_string("count=-0x10 ratio=2.5", options_of(Typed)) == {
        "count": -16,
        "ratio": 2.5,
    }


# --- instances ---------------------------------------------------------------------


def test_option_values_apply_and_copy() -> None:
    source = Canonicalize()
    patterns = ["a"]
    apply_options(source, {"max_iterations": 3, "disable_patterns": patterns})
    patterns.append("b")  # applied values are copies
    assert option_values(source) == {
        "top_down": True,
        "region_simplify": RegionSimplify.NORMAL,
        "max_iterations": 3,
        "max_num_rewrites": -1,
        "test_convergence": False,
        "disable_patterns": ["a"],
        "enable_patterns": [],
    }
    target = Canonicalize()
    copy_option_values(source, target)
    assert option_values(target) == option_values(source)
    target.disable_patterns.append("c")
    assert source.disable_patterns == ["a"]


def test_apply_options_rejects_unknown_attributes() -> None:
    with pytest.raises(
        OptionError, match="Canonicalize has no option 'max-iterations'"
    ):
        apply_options(Canonicalize(), {"max-iterations": 3})


def test_programmatic_lists_are_not_explicit_but_text_lists_are() -> None:
    programmatic = SymbolPrivatize()
    apply_options(programmatic, {"exclude": []})
    assert explicit_options(programmatic) == frozenset()
    assert printed(programmatic) == "symbol-privatize{}"

    from_text = with_options("symbol-privatize", "exclude=")
    assert explicit_options(from_text) == {"exclude"}
    clone = SymbolPrivatize()
    copy_option_values(from_text, clone)
    assert printed(clone) == "symbol-privatize{exclude={}}"


# --- pipeline-valued options ---------------------------------------------------------

UNKNOWN_BOGUS = (
    "MLIR Textual PassPipeline Parser:1:1: error: 'bogus' does not refer to a "
    "registered pass or pass pipeline\nbogus\n^\n"
)


def test_pipeline_option_defaults_parse_per_instance() -> None:
    first, second = Nested(), Nested()
    assert first.inner is None
    assert isinstance(first.fallback, OpPassManager)
    assert first.fallback is not second.fallback
    assert printed(first) == "nested{fallback=any(cse) inner=}"
    assert options_of(Nested)["fallback"].default == "any(cse)"


def test_pipeline_option_parse_print_and_copy() -> None:
    source = with_options("nested", "inner=func.func(cse)")
    assert printed(source) == "nested{fallback=any(cse) inner=func.func(cse)}"
    target = Nested()
    copy_option_values(source, target)
    assert str(target.inner) == "func.func(cse)"
    assert target.inner is not source.inner


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "inner=bogus",
            "expected pass pipeline to be wrapped with the anchor operation type, "
            "e.g. 'builtin.module(...)'",
        ),
        (
            "inner=",
            "expected pass pipeline to be wrapped with the anchor operation type, "
            "e.g. 'builtin.module(...)'",
        ),
        ("inner=func.func(bogus)", UNKNOWN_BOGUS),
        ("inner", "passflow-opt: for the --inner option: requires a value!"),
    ],
)
def test_pipeline_option_errors_are_the_pipeline_parsers(
    text: str, message: str
) -> None:
    with pytest.raises(OptionError) as info:
        with_options("nested", text)
    assert str(info.value) == message


def test_pipeline_lists_print_like_inline_op_pipelines() -> None:
    inline = with_options("inline", "op-pipelines=func.func(cse),any(symbol-dce)")
    assert printed(inline) == (
        "inline{default-pipeline=canonicalize inlining-threshold=4294967295 "
        "max-iterations=4 op-pipelines={func.func(cse),any(symbol-dce)}}"
    )
    copy = Inline()
    copy_option_values(inline, copy)
    assert [str(p) for p in copy.op_pipelines] == ["func.func(cse)", "any(symbol-dce)"]
    assert copy.op_pipelines[0] is not inline.op_pipelines[0]


class RunsPipelines(OperationPass):
    argument = "runs-pipelines"
    pipelines = ListOption(PIPELINE, help="Pipelines to run")

    def run_on_operation(self) -> None:
        pass


def test_cloned_pass_shares_no_pipeline_with_its_original() -> None:
    original = RunsPipelines()
    original.initialize_options("pipelines=func.func(cse),any(symbol-dce)")
    clone = original.clone()
    assert clone.pipelines is not original.pipelines
    assert not any(map(operator.is_, clone.pipelines, original.pipelines))
    cse = lookup_pass("cse")
    assert cse is not None
    clone.pipelines[0].add(cse.create())
    clone.pipelines.append(parse_pass_pipeline("any(cse)"))
    assert [str(p) for p in original.pipelines] == ["func.func(cse)", "any(symbol-dce)"]
    assert [str(p) for p in clone.pipelines] == [
        "func.func(cse,cse)",
        "any(symbol-dce)",
        "any(cse)",
    ]


def test_bad_pipeline_in_an_option_reports_the_pipelines_own_error() -> None:
    with pytest.raises(PipelineParseError) as parsed:
        parse_pass_pipeline("func.func(bogus)")
    with pytest.raises(OptionError) as info:
        RunsPipelines().initialize_options("pipelines=func.func(cse),func.func(bogus)")
    assert str(info.value) == str(parsed.value) == UNKNOWN_BOGUS
    assert not info.value.printed_by_cl


# --- PipelineOptions ---------------------------------------------------------------


class BufferDeallocationOptions(PipelineOptions):
    private_function_dynamic_ownership = Option(False, help="Allow dynamic ownership")
    passes = ListOption(str, help="Extra passes")


class NoOptions(PipelineOptions):
    pass


def test_pipeline_options_parse_print_compare() -> None:
    parsed = BufferDeallocationOptions.parse(
        "private-function-dynamic-ownership passes=a,b"
    )
    assert parsed.private_function_dynamic_ownership is True
    assert str(parsed) == "{passes={a,b} private-function-dynamic-ownership=true}"
    assert (
        repr(parsed)
        == "BufferDeallocationOptions{passes={a,b} private-function-dynamic-ownership=true}"
    )
    assert parsed == BufferDeallocationOptions(
        private_function_dynamic_ownership=True, passes=["a", "b"]
    )
    assert parsed != BufferDeallocationOptions()
    assert parsed != "not options"
    assert (
        str(BufferDeallocationOptions())
        == "{ private-function-dynamic-ownership=false}"
    )
    assert str(NoOptions.parse("")) == ""
    assert NoOptions() == NoOptions()


def test_pipeline_options_errors() -> None:
    with pytest.raises(
        OptionError, match=r"^<Pass-Options-Parser>: no such option bogus$"
    ):
        BufferDeallocationOptions.parse("bogus=1")
    with pytest.raises(
        OptionError, match=r"^<Pass-Options-Parser>: no such option bogus$"
    ):
        NoOptions.parse("bogus")


# --- properties ------------------------------------------------------------------


class RoundTrip(PipelineOptions):
    flag = Option(False)
    count = Option(0)
    threshold = Option(0, type=UNSIGNED)
    small = Option(0, type=INT)
    mode = Option(RegionSimplify.NORMAL)
    label = Option("")
    labels = ListOption(str)
    numbers = ListOption(int)


# Strings without quotes, braces, commas or surrounding spaces survive printing.
WORDS = st.text(alphabet="abcXYZ019_-.:/+=", min_size=1, max_size=6)
PHRASES = st.lists(WORDS, min_size=1, max_size=3).map(" ".join)
LONGS = st.integers(-(2**63), 2**63 - 1)

ROUND_TRIP_VALUES: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {},
    optional={
        "flag": st.booleans(),
        "count": LONGS,
        "threshold": st.integers(0, 2**32 - 1),
        "small": st.integers(-(2**31), 2**31 - 1),
        "mode": st.sampled_from(RegionSimplify),
        "label": st.just("") | PHRASES,
        "labels": st.lists(PHRASES, max_size=4),
        "numbers": st.lists(LONGS, max_size=4),
    },
)


@given(ROUND_TRIP_VALUES)
def test_values_format_then_parse_to_the_same_values(values: dict[str, Any]) -> None:
    original = RoundTrip(**values)
    reparsed = RoundTrip.parse(str(original)[1:-1])
    assert option_values(reparsed) == option_values(original)
    assert reparsed == original


OPTION_FUZZ = st.text(alphabet="abel=, {}()[]'\"\t-0x1", max_size=30) | st.text(
    max_size=30
)


@given(OPTION_FUZZ)
def test_parsing_arbitrary_text_returns_or_raises_option_error(text: str) -> None:
    try:
        values = parse_options_string(text, options_of(RoundTrip))
    except OptionError:
        return
    assert set(values) <= {option.attr for option in options_of(RoundTrip).values()}


# --- C integer types, enums and lists of option structs (test-options-pass) ------


class IntKinds:
    argument = "int-kinds"
    c_int = Option(0, type=INT)
    c_long = Option(0)
    ints = ListOption(INT)
    longs = ListOption(int)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # `Option<int>` / `ListOption<int>`: llvm::cl::parser<int>.
        ("c-int=x", "for the --c-int option: 'x' value invalid for integer argument!"),
        ("ints=1,x", "for the --ints option: 'x' value invalid for integer argument!"),
        (
            "c-int=2147483648",
            "for the --c-int option: '2147483648' value invalid for integer argument!",
        ),
        # `Option<int64_t>` (a plain Python `int`): llvm::cl::parser<long>.
        ("c-long=x", "for the --c-long option: 'x' value invalid for long argument!"),
        ("longs=x", "for the --longs option: 'x' value invalid for long argument!"),
    ],
)
def test_integer_errors_name_the_c_type(text: str, message: str) -> None:
    with pytest.raises(OptionError) as info:
        parse_options_string(text, options_of(IntKinds))
    assert str(info.value) == f"passflow-opt: {message}"
    assert info.value.printed_by_cl


def test_int_options_accept_what_fits_in_a_c_int() -> None:
    values = parse_options_string(
        "c-int=-2147483648 c-long=2147483648", options_of(IntKinds)
    )
    assert values == {"c_int": -(2**31), "c_long": 2**31}


class Color(enum.Enum):
    """An `Option<Enum>` with `cl::values(clEnumValN(0, "zero", ...), ...)`."""

    ZERO = "zero"
    ONE = "one"


class Enums:
    argument = "enums"
    color = Option(Color.ZERO, help="Example enum option")


def test_enum_options_parse_by_name_print_by_name_and_reject_others() -> None:
    options = options_of(Enums)
    assert parse_options_string("color=one", options) == {"color": Color.ONE}
    assert format_options({"color": Color.ONE}, options) == "{color=one}"
    # The default (`Enum{}`, the first value) always prints.
    assert format_options({"color": Color.ZERO}, options) == "{color=zero}"
    for bad in ("color=ONE", "color=2", "color="):
        value = bad.split("=", 1)[1]
        with pytest.raises(
            OptionError,
            match=rf"^passflow-opt: for the --color option: Cannot find "
            rf"option named '{value}'!$",
        ):
            parse_options_string(bad, options)
    with pytest.raises(OptionError, match="--color option: requires a value!"):
        parse_options_string("color", options)


class Element(PipelineOptions):
    """MLIR's `TestOptionsPass::Options`, the element of a list of structs."""

    enum = Option(Color.ZERO, help="Example enum option")
    list = ListOption(INT, help="Example list option")
    string = Option("", help="Example string option")
    string_list = ListOption(str, help="Example string list option")


class Super:
    argument = "super"
    list = ListOption(Element, help="Example list of PassPipelineOptions option")


def test_lists_of_option_structs_parse_braced_or_bare_elements() -> None:
    options = options_of(Super)
    braced = parse_options_string(
        "list={{enum=one list={1} string=foo },{list=2,3 string={a b}}}", options
    )
    bare = parse_options_string(
        "list={enum=one list={1} string=foo },{list=2,3 string={a b}}", options
    )
    expected = [
        Element(enum=Color.ONE, list=[1], string="foo"),
        Element(list=[2, 3], string="a b"),
    ]
    assert braced == bare == {"list": expected}
    assert (
        format_options(braced, options)
        == "{list={{enum=one list={1} string=foo },{enum=zero list={2,3} "
        "string={a b} }}}"
    )


def test_elements_forget_which_options_their_text_gave() -> None:
    # As MLIR copies each parsed struct into the list: an element's `list={}`
    # equals the default and prints nothing, unlike a pass's own `list={}`.
    options = options_of(Super)
    values = parse_options_string("list={enum=one list={} string=bar}", options)
    (element,) = cast(list[Element], values["list"])
    assert isinstance(element, Element)
    assert explicit_options(element) == frozenset()
    assert format_options(values, options) == "{list={{enum=one  string=bar }}}"


def test_an_empty_list_of_structs_and_element_errors() -> None:
    options = options_of(Super)
    assert parse_options_string("list={}", options) == {"list": []}
    with pytest.raises(OptionError, match=r"^<Pass-Options-Parser>: no such option x$"):
        parse_options_string("list={x=1}", options)
    with pytest.raises(
        OptionError,
        match=r"for the --list option: 'y' value invalid for integer argument!$",
    ):
        parse_options_string("list={list=y}", options)


def test_struct_values_copy_and_compare_by_value() -> None:
    first = Element.parse("enum=one string-list=a,b")
    second = Element(enum=Color.ONE, string_list=["a", "b"])
    assert first == second
    holder = Super()
    holder.list = [first]
    copied = options_of(Super)["list"].copy_value(holder.list)
    assert copied == [first] and copied[0] is not first
    assert copied[0].string_list is not first.string_list
