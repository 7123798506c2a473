"""The textual pass pipeline grammar, as MLIR's `TextualPipeline`.

`builtin.module(func.func(cse,canonicalize{max-iterations=3}),symbol-dce)` is first
split into a tree of named elements, each with its raw option text or its nested
elements, as a pure function of the text. Then every name is resolved against the
registry (pipelines first, then passes) before anything is built, and the tree is
added to a pass manager, reporting MLIR's chain of "failed to add" lines.

The scanner reproduces MLIR's `parsePipelineText` step by step rather than a tidier
grammar, because users meet its quirks: the error messages and the columns they point
at (`PipelineParseError.render()` draws MLIR's caret), an empty name for `cse,,cse` or
`func.func()`, `cse canonicalize` read as one name, option braces counted without
regard to quotes. Columns are 0-based offsets into the text given to the parser; for
an anchored pipeline that is the text inside `anchor(...)`, as in MLIR.

Options whose values are pipelines (`PIPELINE`, `PipelineOption`) are declared here,
next to the parser they use.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Generator, Iterable
from dataclasses import dataclass, field

from passflow.diagnostics import (
    OptionError,
    PassflowError,
    PassNestingError,
    PipelineParseError,
)
from passflow.manager import Nesting, OpPassManager
from passflow.options import DEFAULT_PROG, OptionBase, OptionErrorFactory, ValueType
from passflow.registry import PassInfo, PipelineInfo, lookup

__all__ = [
    "MAX_NESTING",
    "MAX_OPTION_NESTING",
    "PIPELINE",
    "PipelineElement",
    "PipelineOption",
    "PipelineType",
    "add_pass_flag",
    "format_elements",
    "parse_pass_pipeline",
    "parse_pass_pipeline_into",
    "parse_pipeline_elements",
    "split_anchored",
]

# The characters llvm::StringRef::trim() removes; Python's str.strip() removes more.
_WHITESPACE = " \t\n\v\f\r"
_SEPARATORS = ",(){"

_ANCHOR_ERROR = (
    "expected pass pipeline to be wrapped with the anchor operation type, "
    "e.g. 'builtin.module(...)'"
)
_MISSING_BRACE = "missing closing '}' while processing pass options"
_EXTRA_PAREN = "encountered extra closing ')' creating unbalanced parentheses while parsing pipeline"
_EXPECTED_COMMA = "expected ',' after parsing pipeline"
_UNBALANCED = "encountered unbalanced parentheses while parsing pipeline"

MAX_NESTING = 20_000
"""The deepest pipeline nesting accepted, the anchor's level included: the depth
mlir-opt was measured to handle. Deeper text is a parse error; up to it,
building and running stay within `passflow.deep_stack`'s limits."""
_TOO_DEEP = f"pipeline nested more than {MAX_NESTING} levels deep"

MAX_OPTION_NESTING = 32
"""The deepest nesting of pipelines inside pass options (`inline{op-pipelines=
builtin.module(inline{op-pipelines=...})}`), the outermost pipeline included.
Each level scans the text of every level inside it again, and a failure's
"failed to add" chain repeats it, as MLIR's does: the work grows with the depth
times the text, so the depth is bounded. Real pipelines nest two or three deep."""
_OPTIONS_TOO_DEEP = (
    f"pipelines nested in pass options more than {MAX_OPTION_NESTING} levels deep"
)
_RECURSION_LIMIT = (
    "pipeline nested too deeply to parse: the recursion limit was reached"
)


@dataclass(frozen=True)
class PipelineElement:
    """One element of a textual pipeline: a pass or pipeline name, or an op anchor.

    `options` is the raw text between the braces (untrimmed; `None` without braces)
    and `inner` the nested elements of `anchor(...)` (`None` without parentheses;
    never empty, since `anchor()` holds one element with an empty name). An element
    never has both. `name_pos` is where the trimmed name starts, which is where
    "does not refer to a registered pass" errors point.
    """

    name: str
    name_pos: int
    options: str | None = None
    inner: tuple[PipelineElement, ...] | None = None


def parse_pipeline_elements(text: str) -> list[PipelineElement]:
    """Split un-anchored pipeline text into its element tree; `""` has no elements.

    Raises `PipelineParseError` with MLIR's message and column for a missing `}`,
    an extra or missing `)`, or text after an element that is not a `,`.
    """
    if not text:
        return []
    return [draft.freeze() for draft in _StructureScanner(text).scan()]


def split_anchored(text: str) -> tuple[str, str, int]:
    """Split `anchor(inner)` into the anchor, the inner text and the inner text's offset.

    Mirrors the anchored entry of MLIR's `parsePassPipeline`: surrounding whitespace
    is ignored, the anchor is everything before the first `(` (right-trimmed, not
    validated) and must be non-empty, and the text must end with `)`. The offset lets
    a caller map columns in `inner` back to `text`.
    """
    leading = len(text) - len(text.lstrip(_WHITESPACE))
    body = text.strip(_WHITESPACE)
    open_paren = body.find("(")
    if open_paren <= 0 or not body.endswith(")"):
        raise PipelineParseError(_ANCHOR_ERROR)
    anchor = body[:open_paren].rstrip(_WHITESPACE)
    return anchor, body[open_paren + 1 : -1], leading + open_paren + 1


def format_elements(elements: Iterable[PipelineElement]) -> str:
    """The compact text of an element tree (`a{opts},b(c)`), which parses back to it."""
    return ",".join(_format_element(element) for element in elements)


def _format_element(element: PipelineElement) -> str:
    text = element.name
    if element.options is not None:
        text += "{" + element.options + "}"
    if element.inner is not None:
        text += "(" + format_elements(element.inner) + ")"
    return text


@dataclass
class _Draft:
    """A mutable element while its nested elements are still being scanned."""

    name: str
    name_pos: int
    options: str | None = None
    inner: list[_Draft] | None = None

    def freeze(self) -> PipelineElement:
        """The immutable element; iterative, so any depth the scanner accepts
        freezes under Python's default recursion limit."""
        frozen: dict[int, PipelineElement] = {}
        pending: list[tuple[_Draft, bool]] = [(self, False)]
        while pending:
            draft, children_done = pending.pop()
            if draft.inner is None:
                frozen[id(draft)] = PipelineElement(
                    draft.name, draft.name_pos, draft.options
                )
            elif children_done:
                inner = tuple(frozen.pop(id(child)) for child in draft.inner)
                frozen[id(draft)] = PipelineElement(
                    draft.name, draft.name_pos, draft.options, inner
                )
            else:
                pending.append((draft, True))
                pending.extend((child, False) for child in draft.inner)
        return frozen[id(self)]


class _StructureScanner:
    """MLIR's `parsePipelineText`: a stack of element lists and a moving position."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.root: list[_Draft] = []
        self.stack: list[list[_Draft]] = [self.root]

    def scan(self) -> list[_Draft]:
        while self._scan_element():
            pass
        if len(self.stack) > 1:
            # Points at the start of the last name, or the end when text ran out.
            raise self._error(_UNBALANCED, self.pos)
        return self.root

    def _scan_element(self) -> bool:
        """Scan one element and what follows it; False once the text is used up."""
        text = self.text
        separator = _find_first_of(text, self.pos)
        end = len(text) if separator < 0 else separator
        element = _Draft(*_trimmed(text, self.pos, end))
        self.stack[-1].append(element)
        if separator < 0:
            return False
        self.pos = separator
        if text[separator] == "{":
            self._scan_options(element)
        elif text[separator] == "(":
            if len(self.stack) >= MAX_NESTING:  # the anchor's level counts too
                raise self._error(_TOO_DEEP, separator)
            element.inner = []
            self.stack.append(element.inner)
            self.pos = separator + 1
            return True
        self._close_parentheses()
        if self.pos == len(text):
            return False
        if text[self.pos] != ",":
            raise self._error(_EXPECTED_COMMA, self.pos)
        self.pos += 1
        return True

    def _scan_options(self, element: _Draft) -> None:
        """Take `{...}` (braces counted, quotes ignored) as the element's options."""
        open_brace = self.pos
        close = _matching_brace(self.text, open_brace + 1)
        if close < 0:
            raise self._error(_MISSING_BRACE, open_brace)
        element.options = self.text[open_brace + 1 : close]
        self.pos = _skip_whitespace(self.text, close + 1)

    def _close_parentheses(self) -> None:
        """Greedily consume `)`s (and the whitespace after each), popping the stack."""
        text = self.text
        while self.pos < len(text) and text[self.pos] == ")":
            if len(self.stack) == 1:
                raise self._error(_EXTRA_PAREN, self.pos)
            self.stack.pop()
            self.pos = _skip_whitespace(text, self.pos + 1)

    def _error(self, message: str, column: int) -> PipelineParseError:
        return PipelineParseError(message, self.text, column)


# The scanners jump between the characters that matter with compiled patterns,
# so scanning is linear in the text and fast on long names and option strings.
_SEPARATOR_STOP = re.compile("[" + re.escape(_SEPARATORS) + "]")
_BRACE_STOP = re.compile("[{}]")
_BLANKS = re.compile("[" + re.escape(_WHITESPACE) + "]*")


def _find_first_of(text: str, start: int) -> int:
    """The first of `_SEPARATORS` at or after `start`, or -1."""
    found = _SEPARATOR_STOP.search(text, start)
    return -1 if found is None else found.start()


def _trimmed(text: str, start: int, end: int) -> tuple[str, int]:
    """`text[start:end]` trimmed, and where it starts (at `end` when all blank)."""
    first = min(_skip_whitespace(text, start), end)
    return text[first:end].rstrip(_WHITESPACE), first


def _matching_brace(text: str, start: int) -> int:
    """Index of the `}` closing a `{` just before `start`, or -1."""
    depth = 1
    index = start
    while True:
        found = _BRACE_STOP.search(text, index)
        if found is None:
            return -1
        index = found.start()
        if text[index] == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return index
        index += 1


def _skip_whitespace(text: str, start: int) -> int:
    found = _BLANKS.match(text, start)
    return start if found is None else found.end()


# --- resolution and building: MLIR's TextualPipeline::addToPipeline -----------


@dataclass
class _ErrorChain:
    """The error stream MLIR builds while adding: handler lines and llvm::cl lines."""

    lines: list[str] = field(default_factory=lambda: list[str]())
    cl: list[str] = field(default_factory=lambda: list[str]())

    def option_error(self, err: OptionError, *, newline: bool) -> None:
        if err.printed_by_cl:
            self.cl.append(str(err))
            self.lines.append("\n" if newline else "")
        else:
            self.lines.append(f"{err}\n" + ("\n" if newline else ""))

    def fail(self) -> PipelineParseError:
        return PipelineParseError("".join(self.lines), cl_messages=tuple(self.cl))


def _resolve(elements: Iterable[PipelineElement], text: str) -> None:
    for element in elements:
        if element.inner is not None:
            _resolve(element.inner, text)
        elif lookup(element.name) is None:
            raise PipelineParseError(
                f"'{element.name}' does not refer to a registered pass or pass pipeline",
                text,
                element.name_pos,
            )


def _add_entry(
    info: PassInfo | PipelineInfo, options: str, pm: OpPassManager, chain: _ErrorChain
) -> bool:
    try:
        if isinstance(info, PipelineInfo):
            if info.options is None and options.strip():
                return False
            info.add_to(pm, options)
        else:
            pm.add(info.create(options))
    except OptionError as err:
        if isinstance(info, PipelineInfo):
            chain.cl.append(str(err))
        else:
            chain.option_error(err, newline=True)
        return False
    except PassNestingError as err:
        chain.lines.append(f"{err}\n")
        return False
    return True


def _add_elements(
    elements: Iterable[PipelineElement], pm: OpPassManager, chain: _ErrorChain
) -> bool:
    for element in elements:
        if element.inner is not None:
            name = element.name
            recursive = name.startswith("**")
            nested = pm.nest(name[2:] if recursive else name, recursive=recursive)
            if not _add_elements(element.inner, nested, chain):
                chain.lines.append(
                    f"failed to add `{element.name}` with options `` to inner pipeline\n"
                )
                return False
            continue
        info = lookup(element.name)
        assert info is not None, "resolved before adding"
        options = element.options or ""
        if not _add_entry(info, options, pm, chain):
            chain.lines.append(
                f"failed to add `{element.name}` with options `{options}`\n"
            )
            return False
    return True


class _OptionsTooDeep(Exception):
    """Unwinds a pipeline nested in options too deeply to the outermost parse.

    Not a `PassflowError`, so no level wraps it into an option error and a
    "failed to add" chain (which would repeat the text of every level)."""


class _Nesting(threading.local):
    depth = 0


_nesting = _Nesting()


@contextlib.contextmanager
def _pipeline_level() -> Generator[None]:
    """One level of pipeline parsing: levels below the first are pipelines in
    pass options. The outermost level turns running out of depth (the bound
    above, or Python's recursion limit) into one `PipelineParseError`."""
    if _nesting.depth >= MAX_OPTION_NESTING:
        raise _OptionsTooDeep
    _nesting.depth += 1
    try:
        yield
    except (_OptionsTooDeep, RecursionError) as err:
        if _nesting.depth > 1:
            raise
        message = (
            _OPTIONS_TOO_DEEP if isinstance(err, _OptionsTooDeep) else _RECURSION_LIMIT
        )
        raise PipelineParseError(message) from None
    finally:
        _nesting.depth -= 1


def parse_pass_pipeline_into(text: str, pm: OpPassManager) -> None:
    """Append the unanchored pipeline `text` (`func.func(cse),symbol-dce`) to `pm`.

    The elements are added with explicit nesting, so the result mirrors the text;
    on any error `pm` is left unchanged and `PipelineParseError` carries MLIR's
    message.
    """
    with _pipeline_level():
        _parse_pass_pipeline_into(text, pm)


def _parse_pass_pipeline_into(text: str, pm: OpPassManager) -> None:
    elements = parse_pipeline_elements(text)
    _resolve(elements, text)
    staging = OpPassManager(pm.anchor, Nesting.EXPLICIT)
    chain = _ErrorChain()
    if not _add_elements(elements, staging, chain):
        raise chain.fail()
    pm.extend(staging.passes)


def parse_pass_pipeline(text: str) -> OpPassManager:
    """Parse an anchored pipeline (`builtin.module(func.func(cse))`) into a new manager."""
    anchor, inner, _ = split_anchored(text)
    with _pipeline_level():
        pm = OpPassManager(anchor, Nesting.EXPLICIT)
        _parse_pass_pipeline_into(inner, pm)
    return pm


def add_pass_flag(pm: OpPassManager, name: str, options: str) -> None:
    """Add a pass or pipeline given as a command-line flag (`--canonicalize=...`).

    Unlike pipeline text, this honours `pm`'s own nesting mode, so an op-specific
    pass on a module manager with implicit nesting gets its own nested pipeline,
    as mlir-opt's individual pass flags do.
    """
    info = lookup(name)
    if info is None:
        raise PipelineParseError(
            f"'{name}' does not refer to a registered pass or pass pipeline"
        )
    with _pipeline_level():
        _add_flag(pm, info, options)


def _add_flag(pm: OpPassManager, info: PassInfo | PipelineInfo, options: str) -> None:
    chain = _ErrorChain()
    try:
        if isinstance(info, PipelineInfo):
            info.add_to(pm, options)
        else:
            pm.add(info.create(options))
    except OptionError as err:
        chain.option_error(err, newline=False)
        raise chain.fail() from None
    except PassNestingError as err:
        raise PipelineParseError(str(err)) from None


# --- pipelines as option values ---------------------------------------------------


class PipelineType(ValueType[OpPassManager]):
    """An anchored pass pipeline as an option value (`parser<OpPassManager>`).

    It lives with the parser it uses rather than with the other value types, so
    that `passflow.options` stays below the pass manager and the registry.
    """

    def parse(self, text: str, error: OptionErrorFactory) -> OpPassManager:
        try:
            return parse_pass_pipeline(text)
        except PassflowError as err:
            # As parser<OpPassManager>: the pipeline's own error text, unprefixed.
            raise OptionError(str(err)) from err

    def format(self, value: OpPassManager) -> str:
        return str(value)

    def copy(self, value: OpPassManager) -> OpPassManager:
        return value.clone()

    def same(self, a: OpPassManager, b: OpPassManager) -> bool:
        return str(a) == str(b)


PIPELINE = PipelineType()
"""The element type of a list of pipelines: `ListOption(PIPELINE)`."""


class PipelineOption(OptionBase[OpPassManager | None]):
    """An option whose value is a pass pipeline (`Option<OpPassManager>`).

    Written and printed as an anchored pipeline (`inner=func.func(cse)`). The
    default is pipeline text, parsed for each instance on first use, since passes
    are not registered yet when the class is created; `""` means no pipeline (None).
    """

    def __init__(
        self, default: str = "", *, argument: str | None = None, help: str = ""
    ) -> None:
        super().__init__(argument=argument, help=help)
        self._default = default

    @property
    def default(self) -> str:
        return self._default

    def fresh_default(self) -> OpPassManager | None:
        return self.parse_value(self._default) if self._default else None

    def parse_value(self, text: str, prog: str = DEFAULT_PROG) -> OpPassManager:
        return PIPELINE.parse(text, self._error_factory(prog))

    def format_value(
        self, value: OpPassManager | None, *, explicit: bool = False
    ) -> str:
        return f"{self.argument}={'' if value is None else PIPELINE.format(value)}"

    def copy_value(self, value: OpPassManager | None) -> OpPassManager | None:
        return None if value is None else PIPELINE.copy(value)

    def same_value(self, a: OpPassManager | None, b: OpPassManager | None) -> bool:
        if a is None or b is None:
            return a is b
        return PIPELINE.same(a, b)
