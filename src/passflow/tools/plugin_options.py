"""The flags that bring passes and dialects in: `--load-pass-plugin`,
`--load-dialect-plugin`, `--irdl-file` and `--show-dialects`, as mlir-opt's, and
`--load-xdsl-opt-main`, an xDSL project's `xDSLOptMain` subclass.

mlir-opt calls `registerAllPasses()` and then loads the plugins its command line
names, before it reads the rest of the command line (a plugin's pass is usable
as `--NAME`). passflow-opt does the same in `register_for`: passflow's own
passes (`passflow.register_all_passes`), then each plugin, a Python module or
`.py` file, through the registry's one plugin mechanism. Loading code is the
user's explicit choice on the command line; nothing else (a reproducer, an
input file, an environment variable) loads a plugin (SECURITY.md).

Nothing here imports the registry until a run, a listing or a pass flag needs
it: `passflow-opt --version` stays cheap.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from passflow.diagnostics import PassflowError
from passflow.plugin_identity import plugin_key
from passflow.tools.command_line import FlagParser, dashes

__all__ = [
    "CommandLinePlugins",
    "add_plugin_flags",
    "load_dialect_sources",
    "load_irdl_file",
    "register_for",
    "show_dialects",
]

_PASS_PLUGIN = "--load-pass-plugin"
_DIALECT_PLUGIN = "--load-dialect-plugin"
_OPT_MAIN = "--load-xdsl-opt-main"


def add_plugin_flags(parser: FlagParser) -> None:
    parser.add_option(
        _PASS_PLUGIN,
        action="append",
        default=[],
        metavar="FILE.py|MODULE",
        help="load passes from a Python file or module (its register() is "
        "called, if it has one; else the xDSL ModulePass classes it defines "
        "register by name); may be repeated",
    )
    parser.add_option(
        _DIALECT_PLUGIN,
        action="append",
        default=[],
        metavar="FILE.py|MODULE",
        help="load dialects from a Python file or module (its register(), or "
        "the xDSL dialects it defines); may be repeated",
    )
    parser.add_option(
        _OPT_MAIN,
        action="append",
        default=[],
        metavar="MODULE:CLASS",
        help="load the dialects and passes an xDSL project's xDSLOptMain "
        "subclass registers; may be repeated",
    )
    parser.add_option(
        "--irdl-file",
        metavar="FILE",
        help="load the dialects defined in an IRDL file",
    )
    parser.add_flag(
        "--show-dialects", help="print the list of registered dialects and exit"
    )


@dataclass(frozen=True)
class CommandLinePlugins:
    """The plugins a command line names, read before the rest of it (a
    plugin's pass may be given as `--NAME`), in the order given."""

    passes: tuple[str, ...] = ()
    dialects: tuple[str, ...] = ()
    opt_mains: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.passes and not self.dialects and not self.opt_mains

    @property
    def identity(self) -> str:
        """What tells these plugins from others: a file by its absolute path (the
        same `plugin.py` in two directories is two plugins)."""
        specs = [
            plugin_key(spec)
            for spec in (*self.passes, "--", *self.dialects, "--", *self.opt_mains)
        ]
        return "\0".join(specs)

    @classmethod
    def of(cls, argv: Sequence[str]) -> CommandLinePlugins:
        found: dict[str, list[str]] = {
            _PASS_PLUGIN: [],
            _DIALECT_PLUGIN: [],
            _OPT_MAIN: [],
        }
        args = [dashes(arg) for arg in argv]
        for index, arg in enumerate(args):
            name, has_value, value = arg.partition("=")
            if name not in found:
                continue
            if not has_value and index + 1 < len(args):
                value = args[index + 1]
            if value:  # a missing value is the parser's error
                found[name].append(value)
        return cls(
            tuple(found[_PASS_PLUGIN]),
            tuple(found[_DIALECT_PLUGIN]),
            tuple(found[_OPT_MAIN]),
        )


_registered: set[CommandLinePlugins] = set()


def register_for(plugins: CommandLinePlugins) -> None:
    """Register passflow's passes, then load `plugins` (once for each set)."""
    if plugins in _registered:
        return
    from passflow import ir, registry  # a run, a listing or a pass flag needs it
    from passflow.all_passes import register_all_passes

    register_all_passes()
    kinds = (
        ("passes from", plugins.passes, False),
        ("dialect plugin from", plugins.dialects, False),
        ("the xDSLOptMain subclass", plugins.opt_mains, True),
    )
    for what, specs, opt_main in kinds:
        for spec in specs:
            dialects = ir.registered_dialect_names()
            try:
                registry.load_plugin(spec, opt_main=opt_main)
            except PassflowError as err:
                cause = err.__cause__ or err
                raise PassflowError(
                    f"Failed to load {what} '{spec}': {type(cause).__name__}: "
                    f"{cause}\nnote: "
                    + (
                        "--load-xdsl-opt-main takes a subclass of xDSL's xDSLOptMain "
                        "(xdsl.xdsl_opt_main)"
                        if opt_main
                        else "a plugin is a Python file (FILE.py) or an importable "
                        "module"
                    )
                    + ", loaded before the run starts"
                ) from err
            gave_nothing = not registry.registered_by(spec) and (
                ir.registered_dialect_names() == dialects
            )
            if specs is plugins.passes and gave_nothing:
                sys.stderr.write(_registered_nothing(spec))
    _registered.add(plugins)


def _registered_nothing(spec: str) -> str:
    """The warning for a pass plugin that loaded and registered nothing: the
    run would otherwise only say, later, that its pass is unknown."""
    return (
        f"passflow-opt: warning: plugin '{spec}' registered no passes\n"
        "note: register them when the file is imported (`@register_pass` on each "
        "pass class, `register_pipeline(...)`) or in a `register()` function, "
        "which passflow-opt calls after importing it, as "
        "`passflow.registry.load_plugin` does\n"
    )


def load_irdl_file(path: str) -> None:
    """Register every dialect the IRDL file `path` defines (`irdl.dialect`), in
    place of xDSL's dialect of the same name, for every context made after."""
    from xdsl.dialects.irdl import DialectOp
    from xdsl.interpreters.irdl import make_dialect

    from passflow import ir

    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            text = stream.read()
    except OSError as err:
        raise PassflowError(
            f"error: cannot open input file '{path}': {err.strerror}"
        ) from None
    module = ir.parse_module(text, ir.default_context(), path)
    for op in module.walk():
        if not isinstance(op, DialectOp):
            continue
        try:
            dialect = make_dialect(op)
        except Exception as err:
            where = ir.location(op)
            raise PassflowError(
                f"{where}: error: cannot build dialect '{op.sym_name.data}' from "
                f"IRDL: {err}\nnote: xDSL's IRDL reader handles types, attributes "
                "and operations with irdl.is/any/any_of constraints; see "
                "docs/decisions.md"
            ) from None
        ir.register_dialect(dialect.name, dialect)


def show_dialects() -> str:
    """mlir-opt's `--show-dialects` line: every dialect a context knows."""
    from passflow import ir

    return f"Available Dialects: {','.join(ir.registered_dialect_names())}\n"


def load_dialect_sources(args: argparse.Namespace) -> None:
    """Load the IRDL file the command line names, if any."""
    if args.irdl_file:
        load_irdl_file(args.irdl_file)
