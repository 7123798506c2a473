"""Pass and pipeline option strings on generated and random text: every input
ends in option values (or a pass) or in `OptionError` (or another
`PassflowError` from a pipeline nested in an option), within the time bound."""

from __future__ import annotations

from enum import Enum

from hypothesis import event, given
from hypothesis import strategies as st

from passflow import registry
from passflow.diagnostics import PassflowError
from passflow.manager import OpPassManager
from passflow.options import (
    INT,
    UNSIGNED,
    UNSIGNED_LONG,
    ListOption,
    Option,
    PipelineOptions,
    options_of,
    parse_options_string,
)
from passflow.pipeline_text import PIPELINE, PipelineOption
from passflow.registry import PassInfo, PipelineInfo

from .grammar import (
    EDITS,
    NATIVE_PASSES,
    PIPELINES,
    XDSL_PASSES,
    apply_edits,
    declare,
    option_text,
    pipelines,
)
from .support import escape, fuzz_settings, time_bound

NESTED = pipelines(NATIVE_PASSES + PIPELINES, clean=True) | pipelines(NATIVE_PASSES)


def _declaring(names: list[str]) -> list[str]:
    """The names whose pass or pipeline declares passflow options."""
    found: list[str] = []
    for name in names:
        info = registry.lookup(name)
        if (isinstance(info, PassInfo) and options_of(info.pass_class)) or (
            isinstance(info, PipelineInfo) and info.options is not None
        ):
            found.append(name)
    return found


DECLARING = _declaring(NATIVE_PASSES + PIPELINES)


def _texts(names: list[str]) -> st.SearchStrategy[tuple[str, str]]:
    """(name, option text): clean, messy, edited, or random."""
    return st.sampled_from(names).flatmap(
        lambda name: st.tuples(
            st.just(name),
            st.one_of(
                option_text(name, NESTED, clean=True),
                option_text(name, NESTED),
                st.tuples(
                    option_text(name, NESTED, clean=True),
                    st.lists(EDITS, min_size=1, max_size=3),
                ).map(lambda pair: apply_edits(pair[0], pair[1])),
                st.text(max_size=40),
            ),
        )
    )


class Choice(Enum):
    A = "a"
    B = "b-b"


class Structs(PipelineOptions):
    n = Option(0)
    words = ListOption(str)


class EveryKind:
    """One option of each value type (registered passes have no float, say)."""

    flag = Option(False)
    c_int = Option(0, type=INT)
    long = Option(0)
    unsigned = Option(0, type=UNSIGNED)
    ulong = Option(0, type=UNSIGNED_LONG)
    real = Option(1.5)
    text = Option("")
    choice = Option(Choice.A)
    ints = ListOption(INT)
    reals = ListOption(float)
    texts = ListOption(str)
    choices = ListOption(Choice)
    structs = ListOption(Structs)
    pipeline = PipelineOption()
    pipelines = ListOption(PIPELINE)


declare("every-kind", EveryKind)


@fuzz_settings(300)
@given(_texts(["every-kind"]))
def test_every_value_type_parses_or_raises_option_error(
    case: tuple[str, str],
) -> None:
    _, text = case
    with time_bound(case):
        try:
            values = parse_options_string(text, options_of(EveryKind))
        except PassflowError as err:
            event(f"error: {type(err).__name__}")
            return
        except Exception as err:
            raise escape(case, err) from err
        event("parsed")
        declared = options_of(EveryKind)
        by_attr = {option.attr: option for option in declared.values()}
        assert set(values) <= set(by_attr)
        try:
            printed = {
                attr: by_attr[attr].format_value(value, explicit=True)
                for attr, value in values.items()
            }
        except Exception as err:
            raise escape(f"printing the values of {case!r}", err) from err
        # Each value set from the text prints, under its option's name.
        for attr, text_ in printed.items():
            assert text_ is not None and text_.startswith(f"{by_attr[attr].argument}=")


def _options_class(name: str) -> type:
    info = registry.lookup(name)
    if isinstance(info, PipelineInfo):
        assert info.options is not None
        return info.options
    assert isinstance(info, PassInfo)
    return info.pass_class


@fuzz_settings(300)
@given(_texts(DECLARING))
def test_option_strings_parse_or_raise_option_error(case: tuple[str, str]) -> None:
    name, text = case
    with time_bound(case):
        try:
            values = parse_options_string(text, options_of(_options_class(name)))
        except PassflowError as err:
            event(f"error: {type(err).__name__}")
            return
        except Exception as err:
            raise escape(case, err) from err
        event("parsed")
        declared = {option.attr for option in options_of(_options_class(name)).values()}
        assert set(values) <= declared


@fuzz_settings(300)
@given(_texts(NATIVE_PASSES + PIPELINES + XDSL_PASSES))
def test_passes_take_options_or_raise_passflow_error(case: tuple[str, str]) -> None:
    """Through the registry: passflow's option parser, or xDSL's pass-spec parser
    for an xDSL pass; then the pass prints its options."""
    name, text = case
    info = registry.lookup(name)
    assert info is not None
    with time_bound(case):
        try:
            if isinstance(info, PipelineInfo):
                pm = OpPassManager("builtin.module")
                info.add_to(pm, text)
                printed = str(pm)
            else:
                printed = str(info.create(text))
        except PassflowError as err:
            event(f"error: {type(err).__name__}")
            return
        except Exception as err:
            raise escape(case, err) from err
        event("created")
        if isinstance(info, PipelineInfo):
            assert printed.startswith("builtin.module(") and printed.endswith(")")
        else:
            assert printed == name or printed.startswith(f"{name}{{"), printed
