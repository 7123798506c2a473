"""Notes that say how to fix an error, where mlir-opt's message leaves users guessing.

passflow-opt keeps mlir-opt's first line of every message (scripts and tests
match on it) and adds a `note:` after it: the flag that fixes a threading
refusal, the op or dialect a typo meant, the flag that accepts unknown ops, the
pass or option a misspelt name meant. The messages recognised here are
mlir-opt's fixed wordings, so a hint follows the message it belongs to and
nothing else.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from passflow import ir, registry
from passflow.diagnostics import Diagnostic, PipelineParseError
from passflow.instruments.ir_printing import MODULE_SCOPE_THREADING_TOOL_ERROR
from passflow.options import options_of
from passflow.pipeline_text import (
    PipelineElement,
    parse_pipeline_elements,
    split_anchored,
)
from passflow.tools.pass_manager_options import LOCAL_REPRODUCER_THREADING_ERROR
from passflow.xdsl_passes import xdsl_pass_names

__all__ = [
    "THREADING_NOTE",
    "did_you_mean",
    "parse_error_note",
    "pass_names",
    "pipeline_error_note",
    "threading_note",
]

THREADING_NOTE = (
    "passflow-opt runs nested pipelines in worker processes by default; add "
    "--mlir-disable-threading (or --executor=serial, or --jobs=1) to run them "
    "on this thread"
)

_UNKNOWN_PASS = re.compile(
    r"'(.*)' does not refer to a registered pass or pass pipeline"
)
_UNKNOWN_OPTION = re.compile(r"<Pass-Options-Parser>: no such option (\S+)")
_UNKNOWN_DIALECT_OP = re.compile(
    r"^Dialect `([^']*)' not found for custom op '([^']*)' "
)
_UNKNOWN_CUSTOM_OP = re.compile(
    r"^custom op '([^']*)' is unknown(?: \(tried '([^']*)')?"
)
_UNKNOWN_OP_IN_DIALECT = re.compile(
    r"^unregistered operation '([^']*)' found in dialect \('([^']*)'\)"
)
_UNREGISTERED_DIALECT = "operation being parsed with an unregistered dialect."
_ALLOW_UNREGISTERED = (
    "passflow-opt accepts ops of dialects it does not know, in generic form "
    '(`"dialect.op"(...) : (...) -> (...)`), with --allow-unregistered-dialect'
)


def did_you_mean(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to `word` (difflib's ratio, at least 0.6), or None."""
    from difflib import get_close_matches  # only after an error

    found = get_close_matches(word, list(candidates), n=1)
    return found[0] if found else None


def threading_note(message: str) -> str | None:
    """The fix for mlir-opt's "without disabling multi-threading first" refusals
    (a local reproducer, module-scope IR printing), or None for other messages."""
    if message in (LOCAL_REPRODUCER_THREADING_ERROR, MODULE_SCOPE_THREADING_TOOL_ERROR):
        return THREADING_NOTE
    return None


# --- the IR parser's unknown ops -----------------------------------------------


def _op_names(ctx: ir.Context, dialect: str) -> list[str]:
    loaded = ctx.get_optional_dialect(dialect)
    return [] if loaded is None else [op.name for op in loaded.operations]


def _close_op(ctx: ir.Context, name: str) -> str | None:
    """The op of `name`'s dialect whose own name (after the dialect's) is
    closest to `name`'s, so that the shared prefix does not decide."""
    dialect, _, short = name.partition(".")
    ops = {op.partition(".")[2]: op for op in _op_names(ctx, dialect)}
    close = did_you_mean(short, ops)
    return None if close is None else ops[close]


def parse_error_note(diagnostic: Diagnostic, ctx: ir.Context) -> str | None:
    """How to fix an unknown op the parser refused: the registered op a typo
    meant (`fnc.return`, `func.retrn`), or the flag that accepts unknown ops."""
    message = diagnostic.message
    if message.startswith(_UNREGISTERED_DIALECT):
        return _ALLOW_UNREGISTERED
    if match := _UNKNOWN_DIALECT_OP.match(message):
        dialect, name = match.groups()
        close = did_you_mean(dialect, ctx.registered_dialect_names)
        if close is not None:
            op = _close_op(ctx, f"{close}{name[len(dialect) :]}")
            if op is not None:
                return f"did you mean '{op}'?"
        return (
            f"an op of a dialect passflow-opt does not know has no custom form: write "
            f'it in generic form (`"{name}"(...) : (...) -> (...)`) and pass '
            "--allow-unregistered-dialect"
        )
    if match := _UNKNOWN_CUSTOM_OP.match(message):
        name, tried = match.groups()
        op = _close_op(ctx, tried or name)
        return None if op is None else f"did you mean '{op}'?"
    if match := _UNKNOWN_OP_IN_DIALECT.match(message):
        op = _close_op(ctx, match.group(1))
        if op is not None:
            return f"did you mean '{op}'?"
        return (
            f"the '{match.group(2)}' dialect has no such op; "
            "--allow-unregistered-dialect accepts it anyway"
        )
    return None


# --- pipelines: unknown passes and options -----------------------------------------


def pass_names() -> list[str]:
    """Every name a pipeline or a pass flag may use: passflow's passes and
    pipelines, then xDSL's passes."""
    names = [info.argument for info in registry.registered_passes()]
    names += [info.argument for info in registry.registered_pipelines()]
    return names + list(xdsl_pass_names())


def _elements(pipeline: str) -> list[PipelineElement]:
    """The pass elements of anchored pipeline text, depth first (none if it
    does not parse: the error being explained may be that)."""
    try:
        _, inner, _ = split_anchored(pipeline)
        stack = parse_pipeline_elements(inner)
    except PipelineParseError:
        return []
    found: list[PipelineElement] = []
    while stack:
        element = stack.pop(0)
        if element.inner is not None:
            stack[:0] = element.inner
        else:
            found.append(element)
    return found


def _option_names(pass_name: str) -> list[str]:
    info = registry.lookup_pass(pass_name)
    return [] if info is None else list(options_of(info.pass_class))


def pipeline_error_note(
    err: PipelineParseError, pipeline: str | None, flags: Iterable[str] = ()
) -> str | None:
    """ "Did you mean" for a pipeline error: the registered pass closest to an
    unknown pass name, or the option closest to an unknown option of a pass in
    `pipeline` (anchored text) or among the pass `flags` (their names)."""
    if match := _UNKNOWN_PASS.search(err.message):
        close = did_you_mean(match.group(1), pass_names())
        return None if close is None else f"did you mean '{close}'?"
    if match := _UNKNOWN_OPTION.search(err.message):
        key = match.group(1)
        passes = [e.name for e in _elements(pipeline or "") if e.options is not None]
        for name in [*passes, *flags]:
            known = _option_names(name)
            if key in known:
                continue
            close = did_you_mean(key, known)
            if close is not None:
                return f"did you mean '{close}' (an option of '{name}')?"
    return None
