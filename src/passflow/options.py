"""Pass and pipeline options: declaring, parsing and printing them as MLIR does.

A pass (or a registered pipeline's `PipelineOptions`) declares its options as class
attributes; the same declarations drive the `{...}` text of a pipeline element,
printing (`--dump-pass-pipeline`, reproducers), cloning and `--help`::

    class Canonicalize(Pass):
        max_iterations = Option(10, help="Max. iterations between applying patterns")
        region_simplify = Option(RegionSimplify.NORMAL, help="...")
        disable_patterns = ListOption(str, help="...")

    self.max_iterations          # 10 until set; a plain attribute after first use

An option is a non-data descriptor: the first read on an instance stores a fresh
default in the instance's `__dict__`, so later reads and assignments are ordinary
attribute accesses, and a pass's hot loop pays nothing for declaring options.

Parsing (`parse_options_string`) and printing (`format_options`) reproduce MLIR's
`PassOptions::parseFromString` and `PassOptions::print` exactly, quirks included, and
value errors carry llvm::cl's wording (`<prog>: for the --max-iterations option: 'abc'
value invalid for long argument!`), so text and habits move between mlir-opt and
passflow-opt unchanged.
"""

from __future__ import annotations

import builtins
import math
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from enum import Enum
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload
from weakref import WeakKeyDictionary

from passflow.diagnostics import OptionError, RegistrationError
from passflow.llvm_integers import parse_llvm_integer

__all__ = [
    "BOOL",
    "DEFAULT_PROG",
    "FLOAT",
    "INT",
    "LONG",
    "STRING",
    "UNSIGNED",
    "UNSIGNED_LONG",
    "EnumType",
    "IntType",
    "ListOption",
    "Option",
    "OptionBase",
    "OptionErrorFactory",
    "OptionsStructType",
    "PipelineOptions",
    "ValueType",
    "apply_options",
    "apply_options_string",
    "copy_option_values",
    "explicit_options",
    "format_options",
    "option_values",
    "options_of",
    "parse_options_string",
]

T = TypeVar("T")
V = TypeVar("V")
E = TypeVar("E", bound=Enum)
OptionT = TypeVar("OptionT", bound="OptionBase[Any]")
PO = TypeVar("PO", bound="PipelineOptions")

DEFAULT_PROG = "passflow-opt"

# The characters llvm::StringRef::trim() removes; Python's str.strip() removes more.
_WHITESPACE = " \t\n\v\f\r"
_QUOTES = "'\""

# Builds llvm::cl's `<prog>: for the --<arg> option: <message>` for one option.
OptionErrorFactory = Callable[[str], OptionError]


# --- value types: llvm::cl's parsers ------------------------------------------


class ValueType(ABC, Generic[T]):
    """How one value (a scalar, or one list element) is parsed and printed.

    Each instance stands for one llvm::cl parser (`parser<long>`, `parser<bool>`,
    ...), so messages and accepted spellings match mlir-opt's for the same C++ type.
    """

    #: Whether a bare key (`top-down` without `=`) is accepted, as `parser<bool>`.
    value_optional: bool = False

    @abstractmethod
    def parse(self, text: str, error: OptionErrorFactory) -> T:
        """The value `text` spells; raise `error(llvm message)` when it spells none."""

    @abstractmethod
    def format(self, value: T) -> str:
        """The text MLIR prints for `value` in a pipeline."""

    def copy(self, value: T) -> T:
        """A copy that shares no mutable state with `value` (for clones)."""
        return value

    def same(self, a: T, b: T) -> bool:
        """Whether two values are equal, as MLIR compares them with a default."""
        return a == b


class _BoolType(ValueType[bool]):
    value_optional = True

    def parse(self, text: str, error: OptionErrorFactory) -> bool:
        if text in ("", "true", "TRUE", "True", "1"):
            return True
        if text in ("false", "FALSE", "False", "0"):
            return False
        raise error(f"'{text}' is invalid value for boolean argument! Try 0 or 1")

    def format(self, value: bool) -> str:
        return "true" if value else "false"


class IntType(ValueType[int]):
    """An llvm::cl integer parser: its name in messages and the C type's range.

    Accepts what `StringRef::getAsInteger(0, ...)` accepts: an optional `-` (signed
    types only), then decimal, `0x`/`0X` hex, `0b`/`0B` binary, `0o` or leading-`0`
    octal, with nothing else around it.
    """

    def __init__(self, cl_name: str, minimum: int, maximum: int) -> None:
        self.cl_name = cl_name
        self.minimum = minimum
        self.maximum = maximum

    def parse(self, text: str, error: OptionErrorFactory) -> int:
        value = parse_llvm_integer(text, signed=self.minimum < 0)
        if value is None or not self.minimum <= value <= self.maximum:
            raise error(f"'{text}' value invalid for {self.cl_name} argument!")
        return value

    def format(self, value: int) -> str:
        return str(value)


class _FloatType(ValueType[float]):
    def parse(self, text: str, error: OptionErrorFactory) -> float:
        value = _parse_strtod(text)
        if value is None:
            raise error(f"'{text}' value invalid for floating point argument!")
        return value

    def format(self, value: float) -> str:
        # raw_ostream's operator<<(double): "%e", with its own nan/inf spellings.
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "-INF" if value < 0 else "INF"
        return f"{value:e}"


class _StringType(ValueType[str]):
    def parse(self, text: str, error: OptionErrorFactory) -> str:
        return text

    def format(self, value: str) -> str:
        # Braced when a space comes before any character that would protect it.
        space = value.find(" ")
        if space >= 0 and not any(c in value[:space] for c in "{'\""):
            return "{" + value + "}"
        return value


class EnumType(ValueType[E]):
    """An `enum.Enum` spelled by its members' values, as `cl::values(...)` literals.

    Values are meant to be strings (`"normal"`); other values are spelled `str(value)`.
    """

    def __init__(self, enum: builtins.type[E]) -> None:
        self.enum = enum

    def parse(self, text: str, error: OptionErrorFactory) -> E:
        for member in self.enum:
            if str(member.value) == text:
                return member
        raise error(f"Cannot find option named '{text}'!")

    def format(self, value: E) -> str:
        return str(value.value)


BOOL: ValueType[bool] = _BoolType()
#: C `int`: `Option<int>`.
INT = IntType("integer", -(2**31), 2**31 - 1)
#: C `long` (`int64_t`): what a Python `int` default means.
LONG = IntType("long", -(2**63), 2**63 - 1)
#: C `unsigned`: `Option<unsigned>` (e.g. inline's `inlining-threshold`).
UNSIGNED = IntType("uint", 0, 2**32 - 1)
#: C `unsigned long` (`uint64_t`, `size_t`).
UNSIGNED_LONG = IntType("ulong", 0, 2**64 - 1)
FLOAT: ValueType[float] = _FloatType()
STRING: ValueType[str] = _StringType()


def _value_type_of(kind: ValueType[Any] | builtins.type[Any]) -> ValueType[Any]:
    """The value type for `type=`/element arguments: a ValueType or a Python type."""
    if isinstance(kind, ValueType):
        return kind
    if issubclass(kind, bool):
        return BOOL
    if issubclass(kind, Enum):
        return EnumType(kind)
    if issubclass(kind, PipelineOptions):
        return OptionsStructType(kind)
    if issubclass(kind, int):
        return LONG
    if issubclass(kind, float):
        return FLOAT
    if issubclass(kind, str):
        return STRING
    raise TypeError(f"no option value type for {kind.__name__}; pass type=")


# --- option declarations -------------------------------------------------------


class OptionBase(ABC, Generic[V]):
    """A declared option: its names, help, default, and how its values read and print.

    `V` is the type of the attribute on an instance. Subclasses say how one
    occurrence in an option string becomes a value and how values print.
    """

    def __init__(self, *, argument: str | None, help: str) -> None:
        #: The Python attribute name, known once the owning class is created.
        self.attr = ""
        #: The textual name (`max-iterations`); defaults to `attr` with `-` for `_`.
        self.argument = argument or ""
        self.help = help

    def __set_name__(self, owner: builtins.type[Any], name: str) -> None:
        self.attr = name
        if not self.argument:
            self.argument = name.replace("_", "-")

    @overload
    def __get__(
        self: OptionT, instance: None, owner: builtins.type[Any]
    ) -> OptionT: ...
    @overload
    def __get__(
        self, instance: object, owner: builtins.type[Any] | None = None
    ) -> V: ...
    def __get__(
        self: OptionT, instance: object | None, owner: builtins.type[Any] | None = None
    ) -> OptionT | Any:
        if instance is None:
            return self
        # Only reached while the instance has no value yet: store one, so every
        # later read is a plain instance-dict hit that never comes back here.
        return vars(instance).setdefault(self.attr, self.fresh_default())

    if TYPE_CHECKING:
        # Declared for type checkers only, so `self.max_iterations = 3` checks
        # against the option's type; at run time the option stays a non-data
        # descriptor and assignment goes straight to the instance dict.
        def __set__(self, instance: object, value: V) -> None: ...

    @property
    @abstractmethod
    def default(self) -> object:
        """The default as declared (a pipeline option's: its text)."""

    @property
    def value_optional(self) -> bool:
        """Whether the bare key (no `=`) is accepted; otherwise "requires a value!"."""
        return False

    @abstractmethod
    def fresh_default(self) -> V:
        """A new default value for one instance (lists and pipelines are not shared)."""

    @abstractmethod
    def parse_value(self, text: str, prog: str = DEFAULT_PROG) -> V:
        """The value of one `key=text` occurrence; raises `OptionError` as llvm::cl."""

    @abstractmethod
    def format_value(self, value: V, *, explicit: bool = False) -> str | None:
        """`argument=value` as MLIR prints it; None to print nothing at all.

        `explicit` says the value came from option text, which matters to lists:
        MLIR leaves out a list only while it still holds its untouched default.
        """

    @abstractmethod
    def copy_value(self, value: V) -> V:
        """A copy of `value` sharing no mutable state (lists, pass managers)."""

    @abstractmethod
    def same_value(self, a: V, b: V) -> bool:
        """Whether two values of this option are equal (pipelines: by their text)."""

    def combine(self, previous: V | None, value: V) -> V:
        """Merge a repeated occurrence into the earlier one: scalars, last wins."""
        return value

    def error(self, message: str, prog: str = DEFAULT_PROG) -> OptionError:
        """llvm::cl's `Option::error` line for this option."""
        dashes = "-" if len(self.argument) == 1 else "--"
        return OptionError(
            f"{prog}: for the {dashes}{self.argument} option: {message}",
            printed_by_cl=True,
        )

    def parse_occurrence(self, text: str | None, prog: str = DEFAULT_PROG) -> V:
        """Like `parse_value`, where `None` is the bare key (`top-down` for `top-down=`)."""
        if text is None:
            if not self.value_optional:
                raise self.error("requires a value!", prog)
            text = ""
        return self.parse_value(text, prog)

    def _error_factory(self, prog: str) -> OptionErrorFactory:
        return lambda message: self.error(message, prog)


class Option(OptionBase[T]):
    """A scalar option (`Option<T>`): bool, int, float, str or an Enum with str values.

    The type comes from the default unless `type=` names one: a Python type or a
    value type such as `UNSIGNED` when the C++ option is `unsigned` (which changes
    both the accepted range and the wording of errors).
    """

    def __init__(
        self,
        default: T,
        *,
        type: ValueType[T] | builtins.type[T] | None = None,
        argument: str | None = None,
        help: str = "",
    ) -> None:
        super().__init__(argument=argument, help=help)
        self._default = default
        self.value_type: ValueType[T] = _value_type_of(
            default.__class__ if type is None else type
        )

    @property
    def default(self) -> T:
        return self._default

    @property
    def value_optional(self) -> bool:
        return self.value_type.value_optional

    def fresh_default(self) -> T:
        return self.value_type.copy(self._default)

    def parse_value(self, text: str, prog: str = DEFAULT_PROG) -> T:
        return self.value_type.parse(text, self._error_factory(prog))

    def format_value(self, value: T, *, explicit: bool = False) -> str:
        return f"{self.argument}={self.value_type.format(value)}"

    def copy_value(self, value: T) -> T:
        return self.value_type.copy(value)

    def same_value(self, a: T, b: T) -> bool:
        return self.value_type.same(a, b)


class ListOption(OptionBase[list[T]]):
    """A list option (`ListOption<T>`): comma-separated, repeatable, default empty.

    The first occurrence in an option string replaces the default and later ones
    append (`x=a,b x=c` is `[a, b, c]`); `x=`, `x={}` and `x=""` give an empty list.
    """

    def __init__(
        self,
        element: ValueType[T] | builtins.type[T],
        default: Iterable[T] = (),
        *,
        argument: str | None = None,
        help: str = "",
    ) -> None:
        super().__init__(argument=argument, help=help)
        self.value_type: ValueType[T] = _value_type_of(element)
        self._default = tuple(default)

    @property
    def default(self) -> tuple[T, ...]:
        return self._default

    @property
    def value_optional(self) -> bool:
        return self.value_type.value_optional

    def fresh_default(self) -> list[T]:
        return self.copy_value(list(self._default))

    def parse_value(self, text: str, prog: str = DEFAULT_PROG) -> list[T]:
        error = self._error_factory(prog)
        return [self.value_type.parse(item, error) for item in _split_list(text)]

    def format_value(self, value: list[T], *, explicit: bool = False) -> str | None:
        if not explicit and self.same_value(value, list(self._default)):
            return None
        items = ",".join(self.value_type.format(item) for item in value)
        return f"{self.argument}={{{items}}}"

    def copy_value(self, value: list[T]) -> list[T]:
        return [self.value_type.copy(item) for item in value]

    def same_value(self, a: list[T], b: list[T]) -> bool:
        return len(a) == len(b) and all(map(self.value_type.same, a, b))

    def combine(self, previous: list[T] | None, value: list[T]) -> list[T]:
        """Append to the earlier occurrence's list, in place: it is the parser's
        own fresh list, and copying it for each occurrence would be quadratic."""
        if previous is None:
            return value
        previous.extend(value)
        return previous


_options_cache: WeakKeyDictionary[type, Mapping[str, OptionBase[Any]]] = (
    WeakKeyDictionary()
)


def options_of(cls: type) -> Mapping[str, OptionBase[Any]]:
    """The options declared on `cls` and its bases, keyed by argument, base first.

    Computed once per class (read-only). A subclass attribute that is not an option
    hides the base's option of that name; two options with one argument are an error.
    """
    options = _options_cache.get(cls)
    if options is None:
        options = MappingProxyType(_collect_options(cls))
        _options_cache[cls] = options
    return options


def _collect_options(cls: type) -> dict[str, OptionBase[Any]]:
    by_attr: dict[str, OptionBase[Any]] = {}
    for klass in reversed(cls.__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, OptionBase):
                by_attr[name] = value
            else:
                by_attr.pop(name, None)
    by_argument: dict[str, OptionBase[Any]] = {}
    for option in by_attr.values():
        if option.argument in by_argument:
            raise RegistrationError(
                f"option '{option.argument}' is declared twice in {cls.__name__}"
            )
        by_argument[option.argument] = option
    return by_argument


# --- the option string: MLIR's PassOptions::parseFromString --------------------


def parse_options_string(
    text: str, options: Mapping[str, OptionBase[Any]], prog: str = DEFAULT_PROG
) -> dict[str, object]:
    """Parse the text between a pipeline element's braces into option values.

    The result is keyed by attribute name and holds only the options that occur.
    Keys and values are separated by spaces; a value may protect spaces with quotes
    or braces (not parentheses); an empty key is skipped (so `top-down = false`
    fails on the key `false`). Raises `OptionError` with MLIR's text: `<Pass-Options-
    Parser>: no such option <key>`, or llvm::cl's line for a bad value.

    Linear in the length of `text`: the scanners below move an index through the
    one string (MLIR's `StringRef` slicing copies nothing; Python's would) and
    jump between the characters that matter with compiled patterns.
    """
    values: dict[str, object] = {}
    pos = 0
    while pos < len(text):
        key, value, pos = _next_option(text, pos)
        if not key:
            continue
        option = options.get(key)
        if option is None:
            raise OptionError(f"<Pass-Options-Parser>: no such option {key}")
        parsed = option.parse_occurrence(value, prog)
        values[option.attr] = option.combine(values.get(option.attr), parsed)
    return values


# Where a key ends; blanks to skip; what `_value_end` and `_value_brace_end` stop at.
_KEY_END = re.compile("[ =]")
_BLANKS = re.compile(f"[{re.escape(_WHITESPACE)}]*")
_VALUE_STOP = re.compile("[ '\"{]")
_BRACE_STOP = re.compile("['\"{}]")


def _skip_whitespace(text: str, start: int) -> int:
    """The first index at or after `start` that is not llvm whitespace."""
    match = _BLANKS.match(text, start)
    return start if match is None else match.end()


def _next_option(text: str, start: int) -> tuple[str, str | None, int]:
    """Split off the `key[=value]` at `start`: (key, value or None if bare, where
    the next one starts, blanks skipped)."""
    stop = _KEY_END.search(text, start)
    end = len(text) if stop is None else stop.start()
    key = _extract_arg(text[start:end])
    if end == len(text) or text[end] == " ":
        return key, None, _skip_whitespace(text, end)
    value_start = end + 1
    value_end = _value_end(text, value_start)
    value = _extract_arg(text[value_start:value_end])
    return key, value, _skip_whitespace(text, value_end)


def _value_end(text: str, start: int) -> int:
    """Where the value at `start` ends: the first space outside quotes and `{...}`."""
    index = start
    while True:
        stop = _VALUE_STOP.search(text, index)
        if stop is None:
            return len(text)
        index = stop.start()
        char = text[index]
        if char == " ":
            return index
        if char == "{":
            index = _value_brace_end(text, index + 1)
        else:
            index = _closing_quote(text, index) + 1


def _value_brace_end(text: str, start: int) -> int:
    """The `}` closing a value's `{` before `start` (quotes skipped), or the end."""
    depth = 1
    index = start
    while True:
        stop = _BRACE_STOP.search(text, index)
        if stop is None:
            return len(text)
        index = stop.start()
        char = text[index]
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return index
        else:
            index = _closing_quote(text, index)
        index += 1


def _closing_quote(text: str, index: int) -> int:
    """The matching quote after `text[index]`, or `index` itself when unmatched."""
    close = text.find(text[index], index + 1)
    return index if close < 0 else close


def _extract_arg(text: str) -> str:
    """MLIR's argument cleaning: trim, then drop one pair of outer quotes or braces."""
    text = text.strip(_WHITESPACE)
    if len(text) <= 1:
        return text
    if text[0] in _QUOTES and text[-1] == text[0]:
        return text[1:-1].strip(_WHITESPACE)
    if text[0] == "{" and _find_char(text, 1, "}") == len(text) - 1:
        return text[1:-1].strip(_WHITESPACE)
    return text


def _split_list(text: str) -> list[str]:
    """List elements: split at top-level commas, each cleaned like an argument."""
    items: list[str] = []
    if not text:
        return items
    start = 0
    comma = _find_char(text, start, ",")
    while comma >= 0:
        items.append(_extract_arg(text[start:comma]))
        start = comma + 1
        comma = _find_char(text, start, ",")
    items.append(_extract_arg(text[start:]))
    return items


_CLOSERS = {"{": "}", "(": ")", "[": "]"}
_FIND_CHAR_STOPS: dict[str, re.Pattern[str]] = {}


def _find_char(text: str, start: int, char: str) -> int:
    """MLIR's `findChar`: the first `char` outside nested `{}`/`()`/`[]` and quotes.

    Returns -1 if there is none, or if a bracket or quote is left open. Iterative,
    with a stack of awaited closers, so deep nesting cannot exhaust the recursion;
    it visits only brackets, quotes and `char`.
    """
    stops = _FIND_CHAR_STOPS.get(char)
    if stops is None:
        stops = _FIND_CHAR_STOPS[char] = re.compile(
            "[" + re.escape("{}()[]'\"" + char) + "]"
        )
    awaited = [char]
    index = start
    while True:
        stop = stops.search(text, index)
        if stop is None:
            return -1
        index = stop.start()
        current = text[index]
        if current == awaited[-1]:
            awaited.pop()
            if not awaited:
                return index
        elif current in _CLOSERS:
            awaited.append(_CLOSERS[current])
        elif current in _QUOTES:
            index = text.find(current, index + 1)
            if index < 0:
                return -1
        index += 1


# --- printing: MLIR's PassOptions::print ---------------------------------------


def format_options(
    values: Mapping[str, object],
    options: Mapping[str, OptionBase[Any]],
    *,
    explicit: Iterable[str] = (),
) -> str:
    """The `{...}` suffix MLIR prints after a pass argument; "" with no options.

    `values` holds every option's value by attribute name (see `option_values`);
    `explicit` names the attributes set from option text (see `explicit_options`).
    Options print sorted by argument and joined by one space, and a list left at its
    default prints nothing but keeps its space, hence `canonicalize{  max-...}`.
    """
    if not options:
        return ""
    from_text = frozenset(explicit)
    parts: list[str] = []
    for argument in sorted(options):
        option = options[argument]
        value = values[option.attr]
        parts.append(
            option.format_value(value, explicit=option.attr in from_text) or ""
        )
    return "{" + " ".join(parts) + "}"


# --- option values on instances ------------------------------------------------

# Instance-dict key of the set of attributes last set from option text.
_EXPLICIT_KEY = "_passflow_explicit_options"


def option_values(instance: object) -> dict[str, object]:
    """The current value of every option declared on `instance`'s class, by attribute."""
    return {
        option.attr: getattr(instance, option.attr)
        for option in options_of(type(instance)).values()
    }


def apply_options(instance: object, values: Mapping[str, object]) -> None:
    """Set options from Python values by attribute name (copied; lists not shared).

    This is the programmatic path (`Canonicalize(max_iterations=3)`): as in MLIR,
    a list set this way still prints only when it differs from its default.
    """
    by_attr = {option.attr: option for option in options_of(type(instance)).values()}
    for attr, value in values.items():
        option = by_attr.get(attr)
        if option is None:
            raise OptionError(f"{type(instance).__name__} has no option '{attr}'")
        setattr(instance, attr, option.copy_value(value))


def apply_options_string(instance: object, text: str, prog: str = DEFAULT_PROG) -> None:
    """Set options from pipeline option text, as MLIR's `initializeOptions`.

    Options set this way are remembered as explicit, so a list printed later shows
    up even when equal to its default (`symbol-privatize{exclude={}}`).
    """
    values = parse_options_string(text, options_of(type(instance)), prog)
    state = vars(instance)
    state.update(values)
    explicit: set[str] = state.setdefault(_EXPLICIT_KEY, set())
    explicit.update(values)


def explicit_options(instance: object) -> frozenset[str]:
    """The attributes of `instance` set from option text (for `format_options`)."""
    return frozenset(vars(instance).get(_EXPLICIT_KEY, ()))


def copy_option_values(source: object, target: object) -> None:
    """Give `target` copies of all of `source`'s option values (for `clone()`).

    Lists and pipelines are copied, never shared; which options were explicit is
    copied too, so a clone prints like its original.
    """
    state = vars(target)
    for option in options_of(type(source)).values():
        state[option.attr] = option.copy_value(getattr(source, option.attr))
    state[_EXPLICIT_KEY] = set(explicit_options(source))


# --- registered pipelines' option structs ---------------------------------------


class PipelineOptions:
    """Base of a registered pipeline's options (MLIR's `PassPipelineOptions<T>`).

    Subclasses declare options like a pass does; the registry parses the element's
    `{...}` text with `parse` and hands the instance to the pipeline builder.
    Instances compare equal when every option has the same value.
    """

    def __init__(self, **values: object) -> None:
        apply_options(self, values)

    @classmethod
    def parse(cls: type[PO], text: str, prog: str = DEFAULT_PROG) -> PO:
        """An instance with `text` (the option string) applied over the defaults."""
        options = cls()
        apply_options_string(options, text, prog)
        return options

    def __str__(self) -> str:
        return format_options(
            option_values(self), options_of(type(self)), explicit=explicit_options(self)
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}{self}"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(
            option.same_value(getattr(self, option.attr), getattr(other, option.attr))
            for option in options_of(type(self)).values()
        )


class OptionsStructType(ValueType[PO]):
    """A struct of options as one value: MLIR's `ListOption<Options>` where `Options`
    is itself a `PassPipelineOptions` (a list of configurations in one option).

    A value is written as the struct's own option string, braced when it holds
    spaces (`list={enum=one list={2}},{enum=two}`), and printed as MLIR's
    `PassOptions::print` prints a struct: every option, sorted, in braces. Stored
    values are copies that forget which options were given in text, as MLIR's copy
    of a parsed struct does, so `list={}` in an element prints nothing.
    """

    def __init__(self, options: builtins.type[PO]) -> None:
        self.options = options

    def parse(self, text: str, error: OptionErrorFactory) -> PO:
        # The nested parser reports its own errors (`no such option`, llvm::cl's
        # line for a bad value), unprefixed by the list option, as in MLIR.
        return self.copy(self.options.parse(text))

    def format(self, value: PO) -> str:
        return str(value) or "{}"

    def copy(self, value: PO) -> PO:
        return type(value)(**option_values(value))

    def same(self, a: PO, b: PO) -> bool:
        return a == b


# --- llvm number syntax --------------------------------------------------------


# What C's strtod consumes (after leading whitespace); the whole text must match.
# Each digit can be matched one way only (`[0-9]+(?:\.[0-9]*)?`, not
# `[0-9]+\.?[0-9]*`), so a long run of digits that fails to match fails in
# linear time instead of trying every split of the run between two repetitions.
_STRTOD = re.compile(
    r"""[ \t\n\v\f\r]*(?P<number>[+-]?(?:
        (?P<hex>0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?)
      | (?P<decimal>(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
      | (?P<inf>(?i:inf(?:inity)?))
      | (?P<nan>(?i:nan)(?:\([0-9A-Za-z_]*\))?)
    ))""",
    re.VERBOSE,
)


def _parse_strtod(text: str) -> float | None:
    """llvm::cl's double parser: `strtod` must consume all of `text`; "" is 0."""
    if not text:
        return 0.0
    match = _STRTOD.fullmatch(text)
    if match is None:
        return None
    number = match["number"]
    sign = -1.0 if number.startswith("-") else 1.0
    if match["nan"] is not None:
        return math.nan
    if match["inf"] is not None:
        return sign * math.inf
    if match["hex"] is not None:
        try:
            return float.fromhex(number)
        except OverflowError:
            return sign * math.inf
    return float(number)
