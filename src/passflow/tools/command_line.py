"""llvm::cl's command-line conventions on top of argparse.

mlir-opt's flags follow LLVM's `cl::opt` rules, which argparse does not: `-flag` and
`--flag` are the same flag, a flag is never abbreviated, a boolean flag takes
`=true|false|1|0` (and only in that `=` form, so `--mlir-timing input.mlir` still
names the input), and every mistake is one line, `<prog>: for the --NAME option:
...`, never a usage dump:

    passflow-opt: for the --jobs option: 'abc' value invalid for integer argument!
    passflow-opt: for the -p option: requires a value!
    passflow-opt: for the --executor option: Cannot find option named 'proces'!
    passflow-opt: Did you mean '--executor=process'?
    passflow-opt: Too many positional arguments specified!
    Can specify at most 1 positional arguments: See: passflow-opt --help

The second line, where there is one, is llvm::cl's own (its "Did you mean" after
an unknown flag, here also after a misspelt value; its positional-count line).
The tool prints `<prog>: ` before the message and exits 1. The program name of
those lines is, as in llvm::cl, that of the last command line parsed.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
from collections.abc import Callable, Generator, Iterable, Sequence
from typing import Any, NoReturn

from passflow.diagnostics import PassflowError

__all__ = [
    "CommandLineError",
    "FlagParser",
    "check_choice",
    "closest",
    "dashes",
    "did_you_mean_line",
    "option_name",
    "parse_bool",
    "parse_float",
    "parse_integer",
    "unknown_choice",
]

TRUE_SPELLINGS = ("", "true", "TRUE", "True", "1")
FALSE_SPELLINGS = ("false", "FALSE", "False", "0")


class CommandLineError(PassflowError):
    """A command-line error, worded as llvm::cl words it."""


class _Program:
    """llvm::cl's `ProgramName`: the program of the last command line parsed."""

    name = ""


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to `word` (difflib's ratio, at least 0.6), or None."""
    from difflib import get_close_matches  # only after an error

    found = get_close_matches(word, list(candidates), n=1)
    return found[0] if found else None


def did_you_mean_line(suggestion: str) -> str:
    """llvm::cl's suggestion line, `<prog>: Did you mean '<suggestion>'?`."""
    prefix = f"{_Program.name}: " if _Program.name else ""
    return f"{prefix}Did you mean '{suggestion}'?"


def option_name(flag: str) -> str:
    """How llvm::cl names an option in its messages: `-o`, `--jobs`."""
    flag = flag.lstrip("-")
    return f"-{flag}" if len(flag) == 1 else f"--{flag}"


def parse_bool(flag: str, text: str) -> bool:
    """A `cl::opt<bool>` value: exactly LLVM's accepted spellings."""
    if text in TRUE_SPELLINGS:
        return True
    if text in FALSE_SPELLINGS:
        return False
    raise CommandLineError(
        f"for the {option_name(flag)} option: '{text}' is invalid value for boolean "
        "argument! Try 0 or 1"
    )


_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def parse_integer(flag: str, text: str) -> int:
    """A `cl::opt<int>` value, as LLVM's `getAsInteger(0, ...)` reads it: decimal,
    `0x` hexadecimal, `0b` binary, `0o` or a leading `0` octal, an optional `-`."""
    digits = text[1:] if text.startswith("-") else text
    base = 10
    for prefix, prefix_base in (("0x", 16), ("0b", 2), ("0o", 8)):
        if digits[:2].lower() == prefix and len(digits) > 2:
            digits, base = digits[2:], prefix_base
            break
    else:
        if len(digits) > 1 and digits.startswith("0"):
            digits, base = digits[1:], 8
    if not digits or any(c not in _DIGITS[:base] for c in digits.lower()):
        raise CommandLineError(
            f"for the {option_name(flag)} option: '{text}' value invalid for "
            "integer argument!"
        )
    value = int(digits, base)
    return -value if text.startswith("-") else value


def parse_float(flag: str, text: str) -> float:
    """A `cl::opt<double>` value."""
    try:
        value = float(text)
    except ValueError:
        value = None
    if value is None or text.strip() != text or "_" in text:
        raise CommandLineError(
            f"for the {option_name(flag)} option: '{text}' value invalid for "
            "floating point argument!"
        )
    return value


_LISTED_CHOICES = 12
"""An enum flag with at most this many values lists them after a value far
from all of them (`--dump-pipeline-graph takes one of: dot, json`)."""


def unknown_choice(flag: str, value: str, choices: Iterable[str]) -> CommandLineError:
    """llvm::cl's error for a value an enum flag does not have, then the value it
    was closest to (`Did you mean '--executor=process'?`), or else the values
    (when they are few)."""
    message = f"for the {option_name(flag)} option: Cannot find option named '{value}'!"
    names = list(choices)
    close = closest(value, names)
    if close is not None:
        message += "\n" + did_you_mean_line(f"{option_name(flag)}={close}")
    elif len(names) <= _LISTED_CHOICES:
        prefix = f"{_Program.name}: " if _Program.name else ""
        values = ", ".join(name or "''" for name in names)
        message += f"\n{prefix}note: {option_name(flag)} takes one of: {values}"
    return CommandLineError(message)


def check_choice(flag: str, value: str, choices: Sequence[str]) -> None:
    """A `cl::opt` enum value: anything but `choices` is llvm::cl's error."""
    if value not in choices:
        raise unknown_choice(flag, value, choices)


def dashes(arg: str) -> str:
    """`-flag[=v]` as `--flag[=v]`; single-letter flags (`-o`, `-p`) stay as they are."""
    if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
        name = arg[1:].split("=", 1)[0]
        if len(name) > 1:
            return "-" + arg
    return arg


_TYPED: dict[object, Callable[[str, str], object]] = {
    int: parse_integer,
    float: parse_float,
}


def _value_parser(flag: str, kwargs: dict[str, Any]) -> Callable[[str], Any] | None:
    """The `type` of a flag declared with `type=int|float` or `choices=`: it
    raises llvm::cl's message itself, so argparse never words (or prints usage
    for) a bad value."""
    declared: Callable[[str], Any] | None = kwargs.get("type")
    choices = kwargs.pop("choices", None)
    llvm = _TYPED.get(declared)
    convert = declared if llvm is None else functools.partial(llvm, flag)
    if choices is None:
        return convert
    names = tuple(str(choice) for choice in choices)
    kwargs.setdefault("metavar", "|".join(names))
    inner = convert

    def choose(text: str) -> Any:
        check_choice(flag, text, names)
        return text if inner is None else inner(text)

    return choose


class FlagParser(argparse.ArgumentParser):
    """An argparse parser that parses by llvm::cl's rules: booleans, no
    abbreviations, and every error a `CommandLineError` in llvm::cl's words
    (argparse's usage dump and exit status 2 never happen)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        kwargs.setdefault("formatter_class", self._formatter)
        kwargs["exit_on_error"] = False
        self.formatting = False
        """Whether help or usage is being formatted (`_formatter`)."""
        super().__init__(**kwargs)
        self.booleans: dict[str, str] = {}
        """Option string (`--mlir-timing`) to its destination."""
        self.value_optional: dict[str, tuple[str, str]] = {}
        """Option string to its destination and its value when given bare."""
        self.known: set[str] = set()
        """Every option string the parser accepts."""
        self.takes_value: set[str] = set()
        """The option strings that need a value (`-o FILE`, `--jobs=N`)."""
        self.checked: set[str] = set()
        """The option strings whose values are checked as they are parsed (a
        number, an enum value, or a `type=` of the caller's)."""
        self.positionals: list[tuple[str, bool]] = []
        """Each positional argument's destination, and whether it is required."""

    def _formatter(self, prog: str) -> argparse.HelpFormatter:
        """argparse's formatter at the terminal's width for help and usage; at
        a fixed one for the check argparse makes of every flag declared, which
        prints nothing: asking the terminal loads `shutil` (and its
        compression modules) on every run, a few milliseconds of start-up."""
        if self.formatting:
            return argparse.HelpFormatter(prog)
        return argparse.HelpFormatter(prog, width=80)

    @contextlib.contextmanager
    def _printing(self) -> Generator[None]:
        """Formatting help or usage: at the terminal's width (`_formatter`)."""
        self.formatting = True
        try:
            yield
        finally:
            self.formatting = False

    def format_help(self) -> str:
        with self._printing():
            return super().format_help()

    def format_usage(self) -> str:
        with self._printing():
            return super().format_usage()

    def add_flag(self, *names: str, help: str, default: bool = False) -> None:
        """A boolean flag: `--name` sets it, `--name=false` clears it."""
        action = self.add_argument(*names, action="store_true", help=help)
        action.default = default
        if default:
            action.help = f"{help} (default true; --{names[-1][2:]}=false to disable)"
        for name in names:
            self.booleans[name] = action.dest
        self.known.update(names)

    def add_value_optional(
        self, name: str, *, bare: str, help: str, metavar: str
    ) -> None:
        """llvm::cl's `cl::ValueOptional`: `--name` means `bare`, `--name=v` means v;
        never `--name v`, so the flag can't swallow the input file."""
        action = self.add_argument(name, help=help, metavar=metavar)
        self.value_optional[name] = (action.dest, bare)
        self.known.add(name)

    def add_option(self, *names: str, **kwargs: Any) -> None:
        """A flag taking a value (or a positional argument). `type=int|float`
        and `choices=` are checked with llvm::cl's messages."""
        flags = [name for name in names if name.startswith("-")]
        if not flags:  # a positional: llvm::cl counts them itself
            required = kwargs.get("nargs") is None
            if required:
                kwargs["nargs"] = "?"
            action = self.add_argument(*names, **kwargs)
            self.positionals.append((action.dest, required))
            return
        convert = _value_parser(max(flags, key=len), kwargs)
        if convert is not None:
            kwargs["type"] = convert
        action = self.add_argument(*names, **kwargs)
        self.known.update(flags)
        if action.nargs is None and action.const is None:
            self.takes_value.update(flags)
        if convert is not None:
            self.checked.update(flags)

    def error(self, message: str) -> NoReturn:
        """Never argparse's usage and exit 2: one line, as llvm::cl."""
        raise CommandLineError(message)

    def _argument_error(self, err: argparse.ArgumentError, argv: Sequence[str]) -> str:
        """llvm::cl's wording of an error argparse found: a flag given last
        without its value (`-p`, `-o`), or anything else about one flag."""
        names = (err.argument_name or "").split("/")
        given = [arg.partition("=")[0] for arg in argv]
        typed = next((n for n in reversed(given) if n in names), names[-1])
        if typed in self.takes_value:
            return f"for the {option_name(typed)} option: requires a value!"
        return f"for the {option_name(typed)} option: {err.message}"

    def parse_flags(self, argv: Sequence[str]) -> tuple[argparse.Namespace, list[str]]:
        """Parse `argv` (already in `--` form); unknown arguments are returned.

        Booleans are taken out before argparse sees them, so their `=value` is
        parsed by LLVM's rules and a bare boolean never swallows the next argument.
        """
        settings: list[tuple[str, bool]] = []
        values: list[tuple[str, str]] = []
        rest: list[str] = []
        for arg in argv:
            name, has_value, value = arg.partition("=")
            if name in self.value_optional:
                dest, bare = self.value_optional[name]
                values.append((dest, value if has_value else bare))
                continue
            dest = self.booleans.get(name)
            if dest is None:
                rest.append(arg)
                continue
            settings.append((dest, parse_bool(name, value) if has_value else True))
        try:
            args, unknown = self.parse_known_args(rest)
        except argparse.ArgumentError as err:
            raise CommandLineError(self._argument_error(err, rest)) from None
        for dest, text in values:
            setattr(args, dest, text)
        for dest, setting in settings:
            setattr(args, dest, setting)
        return args, unknown

    def parse_command_line(
        self, argv: Sequence[str], more_flags: Iterable[str] = ()
    ) -> argparse.Namespace:
        """Parse a whole command line by llvm::cl's rules (`-flag` is `--flag`);
        an unknown argument is llvm::cl's error (`CommandLineError`), followed,
        as llvm::cl does, by the closest flag (this parser's or `more_flags`,
        such as pass names) as `<prog>: Did you mean '--flag=value'?`; so is
        an extra positional argument, or a missing one."""
        _Program.name = self.prog
        args, unknown = self.parse_flags([dashes(arg) for arg in argv])
        if unknown:
            more = list(more_flags)
            if not unknown[0].startswith("-") or unknown[0] == "-":
                raise CommandLineError(self._too_many(unknown[0], more))
            message = (
                f"Unknown command line argument '{unknown[0]}'.  "
                f"Try: '{self.prog} --help'"
            )
            name, has_value, value = unknown[0].partition("=")
            flags = [f for f in (*self.known, *more) if f.startswith("--")]
            close = closest(name, flags)
            if close is not None:
                message += "\n" + did_you_mean_line(
                    close + (f"={value}" if has_value else "")
                )
            raise CommandLineError(message)
        required = [dest for dest, needed in self.positionals if needed]
        if any(getattr(args, dest) is None for dest in required):
            raise CommandLineError(
                "Not enough positional command line arguments specified!\n"
                f"Must specify at least {len(required)} positional argument"
                f"{'s' if len(required) > 1 else ''}: See: {self.prog} --help"
            )
        return args

    def _too_many(self, extra: str, more_flags: Sequence[str]) -> str:
        """llvm::cl's two lines for one positional argument too many; the
        suggestion instead of the second when `extra` is a flag without its
        dashes (`passflow-opt in.mlir cse`)."""
        message = "Too many positional arguments specified!\n"
        name, has_value, value = extra.partition("=")
        if f"--{name}" in (*self.known, *more_flags):
            suggestion = f"--{name}" + (f"={value}" if has_value else "")
            return message + did_you_mean_line(suggestion)
        return message + (
            f"Can specify at most {len(self.positionals)} positional arguments: "
            f"See: {self.prog} --help"
        )
