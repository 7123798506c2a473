"""Every command-line mistake is one line in llvm::cl's words and exit status 1,
for passflow-opt and passflow-reduce alike, never argparse's usage dump and exit
2: a missing value, a bad number, boolean or enum value (with llvm::cl's "Did
you mean" line, or the values, after it), an abbreviated or unknown flag, one
positional argument too many or too few. The tables cover every flag."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from passflow.tools import opt, reduce
from passflow.tools.command_line import FlagParser, option_name

FUNCTIONS = "func.func @f(%x: i32) -> i32 {\n  func.return %x : i32\n}\n"

Main = Callable[[Sequence[str]], int]
TOOLS: dict[str, tuple[Main, Callable[[], FlagParser]]] = {
    "passflow-opt": (opt.main, opt.build_parser),
    "passflow-reduce": (reduce.main, reduce.build_parser),
}


def errors(
    tool: str, argv: Sequence[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> list[str]:
    """Run `tool` on an input file and `argv`; it must exit 1, having written
    nothing to stdout: the lines it wrote to stderr."""
    source = tmp_path / "input.mlir"
    source.write_text(FUNCTIONS)
    main = TOOLS[tool][0]
    try:
        status = main([str(source), *argv])
    except SystemExit as exit_:
        status = exit_.code
    out, err = capsys.readouterr()
    assert (status, out) == (1, "")
    return err.splitlines()


def _flags(select: Callable[[FlagParser], set[str]]) -> list[tuple[str, str]]:
    return [
        (tool, flag)
        for tool, (_, build) in TOOLS.items()
        for flag in sorted(select(build()))
    ]


VALUED = _flags(lambda parser: parser.takes_value)
BOOLEANS = _flags(lambda parser: set(parser.booleans) - {"-h", "--help"})


@pytest.mark.parametrize(("tool", "flag"), VALUED)
def test_a_flag_without_its_value_is_one_line(
    tool: str, flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert errors(tool, [flag], tmp_path, capsys) == [
        f"{tool}: for the {option_name(flag)} option: requires a value!"
    ]


@pytest.mark.parametrize(("tool", "flag"), BOOLEANS)
def test_a_boolean_flag_with_a_bad_value_is_one_line(
    tool: str, flag: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert errors(tool, [f"{flag}=maybe"], tmp_path, capsys) == [
        f"{tool}: for the {option_name(flag)} option: 'maybe' is invalid value for "
        "boolean argument! Try 0 or 1"
    ]


# Every flag whose value is checked: a bad value, and the lines it gives.
BAD_VALUES: list[tuple[str, str, list[str]]] = [
    ("passflow-opt", "--jobs=abc", ["'abc' value invalid for integer argument!"]),
    (
        "passflow-opt",
        "--report-max-changes=lots",
        ["'lots' value invalid for integer argument!"],
    ),
    (
        "passflow-opt",
        "--report-max-op-chars=1.5",
        ["'1.5' value invalid for integer argument!"],
    ),
    ("passflow-opt", "--jobs=", ["'' value invalid for integer argument!"]),
    (
        "passflow-opt",
        "--executor=proces",
        ["Cannot find option named 'proces'!", "Did you mean '--executor=process'?"],
    ),
    (
        "passflow-opt",
        "--dump-pipeline-graph=svg",
        [
            "Cannot find option named 'svg'!",
            "note: --dump-pipeline-graph takes one of: dot, json",
        ],
    ),
    (
        "passflow-opt",
        "--remark-format=yml",
        ["Cannot find option named 'yml'!", "Did you mean '--remark-format=yaml'?"],
    ),
    (
        "passflow-opt",
        "--remark-policy=last",
        [
            "Cannot find option named 'last'!",
            "note: --remark-policy takes one of: all, final",
        ],
    ),
    (
        "passflow-opt",
        "--mlir-timing-display=lst",
        [
            "Cannot find option named 'lst'!",
            "Did you mean '--mlir-timing-display=list'?",
        ],
    ),
    (
        "passflow-opt",
        "--mlir-output-format=jsn",
        [
            "Cannot find option named 'jsn'!",
            "Did you mean '--mlir-output-format=json'?",
        ],
    ),
    (
        "passflow-opt",
        "--verify-diagnostics=only-expectd",
        [
            "Cannot find option named 'only-expectd'!",
            "Did you mean '--verify-diagnostics=only-expected'?",
        ],
    ),
    (
        "passflow-opt",
        "--mlir-elide-elementsattrs-if-larger=-1",
        ["'-1' value invalid for uint argument!"],
    ),
    (
        "passflow-opt",
        "--mlir-elide-resource-strings-if-larger=x",
        ["'x' value invalid for uint argument!"],
    ),
    (
        "passflow-opt",
        "--mlir-diagnostic-verbosity-level=remark",
        [
            "Cannot find option named 'remark'!",
            "Did you mean '--mlir-diagnostic-verbosity-level=remarks'?",
        ],
    ),
    ("passflow-reduce", "-j=abc", ["'abc' value invalid for integer argument!"]),
    ("passflow-reduce", "--jobs=1.5", ["'1.5' value invalid for integer argument!"]),
    (
        "passflow-reduce",
        "--timeout=soon",
        ["'soon' value invalid for floating point argument!"],
    ),
    (
        "passflow-reduce",
        "--test=crsh",
        ["Cannot find option named 'crsh'!", "Did you mean '--test=crash'?"],
    ),
]


@pytest.mark.parametrize(("tool", "arg", "lines"), BAD_VALUES)
def test_a_bad_value_is_llvm_cls_line_and_how_to_fix_it(
    tool: str,
    arg: str,
    lines: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    flag = arg.partition("=")[0]
    flag = {"-j": "--jobs"}.get(flag, flag)  # a bad value names the long spelling
    first, *rest = lines
    assert errors(tool, [arg], tmp_path, capsys) == [
        f"{tool}: for the {option_name(flag)} option: {first}",
        *(f"{tool}: {line}" for line in rest),
    ]


def test_the_table_has_every_flag_checked_while_parsing() -> None:
    for tool, (_, build) in TOOLS.items():
        tabled = {arg.partition("=")[0] for t, arg, _ in BAD_VALUES if t == tool}
        assert build().checked - tabled == set(), tool


def test_jobs_below_one_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for tool in TOOLS:
        assert errors(tool, ["--jobs=0"], tmp_path, capsys) == [
            f"{tool}: the number of jobs must be at least 1, got 0"
        ]


@pytest.mark.parametrize("tool", list(TOOLS))
def test_two_inputs_are_llvm_cls_too_many_positional_arguments(
    tool: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert errors(tool, ["other.mlir"], tmp_path, capsys) == [
        f"{tool}: Too many positional arguments specified!",
        f"Can specify at most 1 positional arguments: See: {tool} --help",
    ]


def test_a_pass_written_without_dashes_is_suggested_as_a_flag(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert errors("passflow-opt", ["cse"], tmp_path, capsys) == [
        "passflow-opt: Too many positional arguments specified!",
        "passflow-opt: Did you mean '--cse'?",
    ]


def test_passflow_reduce_without_an_input_is_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert reduce.main([]) == 1
    assert capsys.readouterr().err.splitlines() == [
        "passflow-reduce: Not enough positional command line arguments specified!",
        "Must specify at least 1 positional argument: See: passflow-reduce --help",
    ]


@pytest.mark.parametrize(
    ("tool", "arg", "meant"),
    [
        ("passflow-opt", "--jo=1", "--jobs=1"),
        ("passflow-reduce", "--bisec", "--bisect"),
    ],
)
def test_a_flag_is_never_abbreviated(
    tool: str, arg: str, meant: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert errors(tool, [arg], tmp_path, capsys) == [
        f"{tool}: Unknown command line argument '{arg}'.  Try: '{tool} --help'",
        f"{tool}: Did you mean '{meant}'?",
    ]
