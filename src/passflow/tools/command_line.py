"""llvm::cl's command-line conventions on top of argparse.

mlir-opt's flags follow LLVM's `cl::opt` rules, which argparse does not: `-flag` and
`--flag` are the same flag, a boolean flag takes `=true|false|1|0` (and only in that
`=` form, so `--mlir-timing input.mlir` still names the input), and a bad value is
reported as `for the --NAME option: ...`.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from typing import Any

from passflow.diagnostics import PassflowError

__all__ = ["CommandLineError", "FlagParser", "check_choice", "dashes", "parse_bool"]

TRUE_SPELLINGS = ("", "true", "TRUE", "True", "1")
FALSE_SPELLINGS = ("false", "FALSE", "False", "0")


class CommandLineError(PassflowError):
    """A command-line error, worded as llvm::cl words it."""


def parse_bool(flag: str, text: str) -> bool:
    """A `cl::opt<bool>` value: exactly LLVM's accepted spellings."""
    if text in TRUE_SPELLINGS:
        return True
    if text in FALSE_SPELLINGS:
        return False
    raise CommandLineError(
        f"for the --{flag} option: '{text}' is invalid value for boolean argument! "
        "Try 0 or 1"
    )


def check_choice(flag: str, value: str, choices: Sequence[str]) -> None:
    """A `cl::opt` enum value: anything but `choices` is llvm::cl's error."""
    if value not in choices:
        raise CommandLineError(
            f"for the --{flag} option: Cannot find option named '{value}'!"
        )


def dashes(arg: str) -> str:
    """`-flag[=v]` as `--flag[=v]`; single-letter flags (`-o`, `-p`) stay as they are."""
    if arg.startswith("-") and not arg.startswith("--") and len(arg) > 2:
        name = arg[1:].split("=", 1)[0]
        if len(name) > 1:
            return "-" + arg
    return arg


class FlagParser(argparse.ArgumentParser):
    """An argparse parser that knows which of its flags are llvm::cl booleans."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.booleans: dict[str, str] = {}
        """Option string (`--mlir-timing`) to its destination."""
        self.value_optional: dict[str, tuple[str, str]] = {}
        """Option string to its destination and its value when given bare."""
        self.known: set[str] = set()
        """Every option string the parser accepts."""

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
        """A flag taking a value (or a positional argument)."""
        self.add_argument(*names, **kwargs)
        self.known.update(name for name in names if name.startswith("-"))

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
            settings.append((dest, parse_bool(name[2:], value) if has_value else True))
        args, unknown = self.parse_known_args(rest)
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
        such as pass names) as `<prog>: Did you mean '--flag=value'?`."""
        args, unknown = self.parse_flags([dashes(arg) for arg in argv])
        if unknown:
            from difflib import get_close_matches  # only after an error

            message = (
                f"Unknown command line argument '{unknown[0]}'.  "
                f"Try: '{self.prog} --help'"
            )
            name, has_value, value = unknown[0].partition("=")
            flags = [f for f in (*self.known, *more_flags) if f.startswith("--")]
            close = get_close_matches(name, flags, n=1)
            if name.startswith("-") and close:
                suggestion = close[0] + (f"={value}" if has_value else "")
                message += f"\n{self.prog}: Did you mean '{suggestion}'?"
            raise CommandLineError(message)
        return args
