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
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, cast

from passflow import ir, registry
from passflow.diagnostics import Diagnostic, PipelineParseError
from passflow.instruments.ir_printing import MODULE_SCOPE_THREADING_TOOL_ERROR
from passflow.options import EnumType, OptionBase, options_of
from passflow.pipeline_text import (
    PipelineElement,
    parse_pipeline_elements,
    split_anchored,
)
from passflow.tools.command_line import closest
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


did_you_mean = closest
"""The candidate closest to a word (difflib's ratio, at least 0.6), or None."""


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


def _options(pass_name: str) -> Mapping[str, OptionBase[Any]]:
    info = registry.lookup_pass(pass_name)
    return {} if info is None else options_of(info.pass_class)


_FAILED_TO_ADD = re.compile(r"failed to add `([^`]*)` with options `([^`]*)`")
_CANT_ADD = re.compile(
    r"Can't add pass '[^']*' restricted to '([^']*)' on a PassManager intended "
    r"to run on '([^']*)'"
)
_NOT_ANCHORED = "expected pass pipeline to be wrapped with the anchor operation type"
_BAD_VALUE = re.compile(
    r"for the --([\w-]+) option: '(.*)' value invalid for (.*) argument!$"
)
_BAD_ENUM = re.compile(r"for the --([\w-]+) option: Cannot find option named '(.*)'!$")
_XDSL_UNKNOWN_OPTION = re.compile(
    r"<Pass-Options-Parser>: Provided arguments \[(.*)\] not found in expected "
    r"arguments \[(.*)\]"
)
_OPTION_AFTER_COMMA = re.compile(r",[ \t]*[\w-]+=")
_KINDS = {
    "integer": "an integer",
    "long": "an integer",
    "uint": "a non-negative integer",
    "ulong": "a non-negative integer",
    "floating point": "a number",
}


def _failed_pass(err: PipelineParseError) -> tuple[str, str] | None:
    """The pass (and its options string) that mlir-opt's "failed to add" line
    names first: the innermost element that failed."""
    match = _FAILED_TO_ADD.search(err.message)
    return None if match is None else (match.group(1), match.group(2))


def _spaced(options: str) -> str | None:
    """`options` with each comma that starts another `key=` (outside quotes,
    braces, brackets and parentheses) replaced by a space, or None if it has
    none: MLIR separates a pass's options with spaces."""
    out: list[str] = []
    depth = 0
    quote = ""
    changed = False
    for index, char in enumerate(options):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        elif char == "," and depth == 0 and _OPTION_AFTER_COMMA.match(options, index):
            out.append(" ")
            changed = True
            continue
        out.append(char)
    return "".join(out) if changed else None


def _comma_note(err: PipelineParseError, _pipeline: str | None) -> str | None:
    failed = _failed_pass(err)
    if failed is None:
        return None
    name, options = failed
    spaced = _spaced(options)
    if spaced is None:
        return None
    return (
        f"MLIR separates a pass's options with spaces, not commas: write "
        f"`{name}{{{spaced}}}`"
    )


def _unknown_pass_note(err: PipelineParseError, _pipeline: str | None) -> str | None:
    if match := _UNKNOWN_PASS.search(err.message):
        close = did_you_mean(match.group(1), pass_names())
        return None if close is None else f"did you mean '{close}'?"
    return None


def _nesting_note(err: PipelineParseError, _pipeline: str | None) -> str | None:
    """A pass restricted to another op than its pipeline's: nest it in a
    pipeline on that op, or, for a module pass inside a nested pipeline, move
    it out to the module's."""
    match = _CANT_ADD.search(err.message)
    failed = _failed_pass(err)
    if match is None or failed is None:
        return None
    runs_on, anchor = match.groups()
    name, options = failed
    element = f"{name}{{{options}}}" if options else name
    if runs_on == "builtin.module":
        return (
            f"'{name}' runs on the '{runs_on}' op itself, not on the '{anchor}' ops "
            f"in it: move it out of `{anchor}(...)`, as `{runs_on}({anchor}(...),"
            f"{element})`"
        )
    return (
        f"'{name}' runs on '{runs_on}' ops: nest it in a pipeline on them, as "
        f"`{anchor}({runs_on}({element}))`"
    )


def _anchor_note(err: PipelineParseError, pipeline: str | None) -> str | None:
    """Un-anchored pipeline text (`-p cse`): the same passes, anchored."""
    if pipeline is None or not err.message.startswith(_NOT_ANCHORED):
        return None
    text = pipeline.strip()
    if not text or "(" in text or ")" in text:
        return None
    return (
        f"a pass pipeline starts with the op it runs on: write `builtin.module({text})`"
    )


def _option_value_note(err: PipelineParseError, flags: Sequence[str]) -> str | None:
    """A bad option value (llvm::cl's line): the values of an enum option, or
    the kind of value and an example. The pass is the one that failed to be
    added, or the pass flag with that option."""
    failed = _failed_pass(err)
    passes = [failed[0]] if failed is not None else list(flags)
    for line in err.cl_messages:
        enum = _BAD_ENUM.search(line)
        bad = _BAD_VALUE.search(line)
        match = enum or bad
        if match is None:
            continue
        key = match.group(1)
        owner = next((name for name in passes if key in _options(name)), None)
        if owner is None:
            return None
        option = _options(owner)[key]
        value_type = getattr(option, "value_type", None)
        if enum is not None and isinstance(value_type, EnumType):
            members = cast("EnumType[Enum]", value_type).enum
            values = [str(member.value) for member in members]
            close = did_you_mean(enum.group(2), values)
            if close is not None:
                return f"did you mean '{key}={close}'?"
            return f"'{key}' (an option of '{owner}') takes one of: {', '.join(values)}"
        if bad is not None and bad.group(3) in _KINDS:
            example = option.format_value(option.fresh_default(), explicit=True)
            return (
                f"'{key}' (an option of '{owner}') takes {_KINDS[bad.group(3)]}, "
                f"as in `{owner}{{{example}}}`"
            )
        return None
    return None


def _unknown_option_note(
    err: PipelineParseError, pipeline: str | None, flags: Sequence[str]
) -> str | None:
    """An option the pass does not have: the one it meant, else the pass's
    options (or that it takes none)."""
    failed = _failed_pass(err)
    if match := _UNKNOWN_OPTION.search(err.message):
        key = match.group(1)
        if failed is not None:
            candidates = [failed[0]]
        else:
            elements = _elements(pipeline or "")
            candidates = [e.name for e in elements if e.options is not None]
            candidates += flags
        for name in candidates:
            known = list(_options(name))
            if key in known:
                continue
            close = did_you_mean(key, known)
            if close is not None:
                return f"did you mean '{close}' (an option of '{name}')?"
        if failed is not None:
            return _options_of_note(failed[0], list(_options(failed[0])))
        return None
    if (match := _XDSL_UNKNOWN_OPTION.search(err.message)) and failed is not None:
        given = re.findall(r'"([^"]*)"', match.group(1))
        known = re.findall(r'"([^"]*)"', match.group(2))
        close = did_you_mean(given[0], known) if given else None
        if close is not None:
            return f"did you mean '{close}' (an option of '{failed[0]}')?"
        return _options_of_note(failed[0], known)
    return None


def _options_of_note(name: str, known: list[str]) -> str:
    if not known:
        return f"'{name}' takes no options: write `{name}`"
    return f"the options of '{name}' are: {', '.join(known)}"


_PIPELINE_NOTES = (_comma_note, _unknown_pass_note, _nesting_note, _anchor_note)


def pipeline_error_note(
    err: PipelineParseError, pipeline: str | None, flags: Iterable[str] = ()
) -> str | None:
    """How to fix a pipeline error, after mlir-opt's message: commas between a
    pass's options, the registered pass closest to an unknown name, where to
    nest a pass restricted to another op, the anchor a pipeline lacks, the
    values a bad option value could take, or the option closest to an unknown
    one of a pass in `pipeline` (anchored text) or among the pass `flags`
    (their names)."""
    for note in _PIPELINE_NOTES:
        found = note(err, pipeline)
        if found is not None:
            return found
    flags = list(flags)
    found = _option_value_note(err, flags)
    return found if found is not None else _unknown_option_note(err, pipeline, flags)
