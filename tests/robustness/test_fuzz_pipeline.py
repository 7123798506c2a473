"""The textual pipeline parser on generated and random text: every input ends in
a pass manager (or element tree) or in `PipelineParseError`, within the time
bound (see support.py) — never another exception, never a hang."""

from __future__ import annotations

from hypothesis import event, given
from hypothesis import strategies as st

from passflow import registry
from passflow.diagnostics import PassflowError, PipelineParseError
from passflow.manager import Nesting, OpPassManager
from passflow.pipeline_text import (
    add_pass_flag,
    format_elements,
    parse_pass_pipeline,
    parse_pipeline_elements,
    split_anchored,
)
from passflow.registry import PassInfo

from .grammar import (
    EDITS,
    JUNK_NAMES,
    NATIVE_PASSES,
    PIPELINES,
    XDSL_PASSES,
    apply_edits,
    option_text,
    pipelines,
)
from .support import escape, fuzz_settings, time_bound

ALL_NAMES = NATIVE_PASSES + PIPELINES + XDSL_PASSES
NATIVE_PIPELINES = pipelines(NATIVE_PASSES + PIPELINES)
RANDOM = st.text(alphabet=",(){}[] \t\na.x*'\"=-\\", max_size=60) | st.text(max_size=60)
TEXT = st.one_of(
    pipelines(NATIVE_PASSES + PIPELINES, clean=True),
    pipelines(ALL_NAMES, clean=True),
    NATIVE_PIPELINES,
    pipelines(ALL_NAMES),
    RANDOM,
)


@fuzz_settings(300)
@given(TEXT)
def test_elements_parse_or_raise_a_located_pipeline_error(text: str) -> None:
    with time_bound(text):
        try:
            elements = parse_pipeline_elements(text)
        except PipelineParseError as err:
            assert err.column is not None and 0 <= err.column <= len(text)
            assert err.render()
            return
        except Exception as err:
            raise escape(text, err) from err
        for element in elements:
            assert 0 <= element.name_pos <= len(text)
        format_elements(elements)


@fuzz_settings(200)
@given(TEXT)
def test_split_anchored_returns_or_raises_pipeline_error(text: str) -> None:
    with time_bound(text):
        try:
            anchor, inner, offset = split_anchored(text)
        except PipelineParseError:
            return
        except Exception as err:
            raise escape(text, err) from err
        assert anchor and text[offset : offset + len(inner)] == inner


@fuzz_settings(300)
@given(TEXT)
def test_pass_pipeline_builds_or_raises_passflow_error(text: str) -> None:
    with time_bound(text):
        try:
            pm = parse_pass_pipeline(text)
        except PassflowError as err:
            event(f"error: {type(err).__name__}")
            return
        except Exception as err:
            raise escape(text, err) from err
        try:
            printed = str(pm)
        except Exception as err:
            raise escape(f"str() of {text!r}", err) from err
        assert printed.startswith(pm.anchor)
        event("built")


FLAGS = st.sampled_from(ALL_NAMES).flatmap(
    lambda name: st.tuples(
        st.just(name) | JUNK_NAMES,
        option_text(name, NATIVE_PIPELINES),
        st.lists(EDITS, max_size=1),
    ).map(lambda t: (t[0], apply_edits(t[1], t[2])))
)


@fuzz_settings(150)
@given(FLAGS, st.sampled_from(list(Nesting)))
def test_pass_flags_add_or_raise_passflow_error(
    flag: tuple[str, str], nesting: Nesting
) -> None:
    name, options = flag
    with time_bound(flag):
        pm = OpPassManager("builtin.module", nesting)
        try:
            add_pass_flag(pm, name, options)
        except PassflowError as err:
            event(f"error: {type(err).__name__}")
            return
        except Exception as err:
            raise escape(flag, err) from err
        try:
            printed = str(pm)
        except Exception as err:
            raise escape(f"str() of {flag!r}", err) from err
        event("added")
        assert printed.startswith("builtin.module(") and printed.endswith(")")
        if isinstance(registry.lookup(name), PassInfo):
            # One pass, added at the top or in the nested pipeline it needed.
            assert len(pm.passes) == 1 and name in printed, printed
