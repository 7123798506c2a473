"""Documentation of registered passes, generated from their class declarations.

The same declarations (argument, summary, description, options, statistics,
dependent dialects) that drive parsing and printing produce `passflow-opt --help`
and the Markdown of `passflow-opt --gen-pass-doc` (MLIR's gen-pass-doc), so the
docs cannot drift from the code. `docs/passes.md` is this output; a test fails
when it is stale. Run `passflow-doc > docs/passes.md` to refresh it.
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
from collections.abc import Sequence
from typing import Any

from passflow import registry
from passflow.all_passes import BUILTIN_PLUGINS, register_all_passes
from passflow.options import OptionBase, options_of
from passflow.pass_base import Pass
from passflow.statistics import statistics_of
from passflow.tools.pass_listing import PassEntry, PassGroup, format_pass_groups
from passflow.tools.xdsl_summaries import xdsl_summary
from passflow.xdsl_passes import xdsl_pass_names

__all__ = [
    "generate_markdown",
    "list_passes",
    "main",
    "pass_groups",
    "pass_help",
]


def _option_rows(pass_class: type[Pass]) -> list[tuple[str, str]]:
    return [
        (f"-{o.argument}", _option_help(o)) for o in options_of(pass_class).values()
    ]


def _option_help(option: OptionBase[Any]) -> str:
    printed = option.format_value(option.default)  # `arg=value`, or None
    default = (printed or "").removeprefix(f"{option.argument}=")
    suffix = f" (default: {default})" if default else ""
    return f"{option.help}{suffix}"


def _aligned(rows: list[tuple[str, str]], indent: str) -> list[str]:
    width = max(len(key) for key, _ in rows)
    return [f"{indent}{key.ljust(width)} : {text}".rstrip() for key, text in rows]


def _argument(entry: PassEntry) -> str:
    return entry.argument


def pass_groups(options: bool = True) -> list[PassGroup]:
    """Every registered pass and pipeline, grouped by where it comes from:
    passflow's own (and the program's), each plugin's, xDSL's passes usable by
    name (those not shadowed), and MLIR's test passes and pipelines; each group
    sorted by argument. Without `options` (`--list-passes`), no xDSL pass module
    is imported: their summaries are `xdsl_summaries`'s, and their options are
    left out."""
    by_source: dict[str, list[PassEntry]] = {}
    for info in registry.registered_passes():
        entry = PassEntry(info.argument, info.summary, _option_rows(info.pass_class))
        by_source.setdefault(info.source, []).append(entry)
    for pipeline in registry.registered_pipelines():
        entry = PassEntry(pipeline.argument, pipeline.summary, [])
        by_source.setdefault(pipeline.source, []).append(entry)
    native = {entry.argument for entries in by_source.values() for entry in entries}
    xdsl: list[PassEntry] = []
    for name in xdsl_pass_names():
        if name in native:
            continue
        info = registry.lookup_pass(name) if options else None
        rows = [] if info is None else _option_rows(info.pass_class)
        xdsl.append(PassEntry(name, xdsl_summary(name), rows))
    (own_spec, own_title), (test_spec, test_title) = BUILTIN_PLUGINS.items()
    own = by_source.pop(own_spec, []) + by_source.pop("", [])
    tests = by_source.pop(test_spec, [])
    titles = registry.loaded_plugins()
    return [
        PassGroup(own_title, sorted(own, key=_argument)),
        *(
            PassGroup(
                f"Passes and pipelines of {titles.get(spec, spec)}",
                sorted(entries, key=_argument),
            )
            for spec, entries in by_source.items()
        ),
        PassGroup("xDSL's passes", xdsl),
        PassGroup(test_title, sorted(tests, key=_argument)),
    ]


def pass_help(width: int | None = None) -> str:
    """The pass section of `--help`: every pass, grouped, as `--NAME` with its
    summary and its options below it, wrapped to `width`."""
    return format_pass_groups(pass_groups(), prefix="--", options=True, width=width)


def list_passes(width: int | None = None) -> str:
    """`--list-passes`: every pass and pipeline by name, grouped, with its summary."""
    return format_pass_groups(
        pass_groups(options=False), prefix="", options=False, width=width
    )


_MLIR_DOC_LINK = re.compile(r"\]\((?![\w+.-]+:)([\w/-]+)\.md/?(#[\w-]+)?\)")
"""A link relative to MLIR's docs, as the descriptions copied from MLIR have."""


def _describe(pass_class: type[Pass]) -> str:
    """The pass's description, its links to MLIR's docs made absolute (they are
    relative to MLIR's docs, where passflow's pages have no such files)."""
    text = pass_class.description or pass_class.__doc__ or ""
    return _MLIR_DOC_LINK.sub(
        lambda link: f"](https://mlir.llvm.org/docs/{link[1]}/{link[2] or ''})",
        inspect.cleandoc(text),
    )


def _pass_markdown(info: registry.PassInfo) -> list[str]:
    cls = info.pass_class
    out = [f"### `-{info.argument}`", ""]
    if cls.summary:
        out += [f"_{cls.summary}_", ""]
    description = _describe(cls)
    if description:
        out += [description, ""]
    facts = [f"Display name: `{cls.name}`."]
    if cls.op_name:
        facts.append(f"Runs on `{cls.op_name}` operations.")
    if cls.dependent_dialects:
        deps = ", ".join(f"`{d}`" for d in cls.dependent_dialects)
        facts.append(f"Dependent dialects: {deps}.")
    out += [" ".join(facts), ""]
    rows = _option_rows(cls)
    if rows:
        out += ["#### Options", "", "```", *_aligned(rows, ""), "```", ""]
    stats = statistics_of(cls)
    if stats:
        stat_rows = [(s.name, s.description) for s in stats]
        out += ["#### Statistics", "", "```", *_aligned(stat_rows, ""), "```", ""]
    return out


def generate_markdown() -> str:
    """Markdown for every registered pass and pipeline, sorted by argument."""
    out = [
        "<!-- Generated by `passflow-doc`; do not edit. -->",
        "",
        "# Passes",
        "",
        "Every pass registered with passflow, as `passflow-opt --gen-pass-doc` "
        "prints it.",
        "",
    ]
    for info in registry.registered_passes():
        out += _pass_markdown(info)
    pipelines = list(registry.registered_pipelines())
    if pipelines:
        out += ["# Pipelines", ""]
        for pipeline in pipelines:
            out += [f"### `-{pipeline.argument}`", "", f"_{pipeline.summary}_", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """`passflow-doc`: the Markdown of every registered pass on stdout."""
    parser = argparse.ArgumentParser(
        prog="passflow-doc",
        description="Print Markdown documentation of every pass and pipeline "
        "registered with passflow (its own, plugins' and the test passes), as "
        "`passflow-opt --gen-pass-doc` does. docs/passes.md is this output: "
        "refresh it with `passflow-doc > docs/passes.md`.",
    )
    parser.parse_args(argv)
    register_all_passes()
    sys.stdout.write(generate_markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
