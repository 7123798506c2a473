"""The pass statistics report, as mlir-opt's `--mlir-pass-statistics` prints it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from passflow.pass_base import PassPipeline, walk_passes
from passflow.statistics import statistic_values

__all__ = ["StatisticsDisplay", "statistics_report"]

StatisticsDisplay = Literal["pipeline", "list"]
"""`pipeline` mirrors the pass-manager tree; `list` sums passes of the same name."""

_BANNER = "===" + "-" * 73 + "==="
_TITLE = "... Pass statistics report ..."


def _statistic_lines(values: Iterable[tuple[str, int, str]], indent: int) -> list[str]:
    """`(S) value name - description`, sorted by name, values right-aligned and
    names left-aligned to the widest of the block."""
    rows = sorted(values, key=lambda row: row[0])
    if not rows:
        return []
    value_width = max(len(str(value)) for _, value, _ in rows)
    name_width = max(len(name) for name, _, _ in rows)
    pad = " " * indent
    return [
        f"{pad}(S) {value:>{value_width}} {name:<{name_width}} - {description}"
        for name, value, description in rows
    ]


def _pass_rows(pass_: object) -> list[tuple[str, int, str]]:
    return [(s.name, value, s.description) for s, value in statistic_values(pass_)]


def _pipeline_lines(pm: PassPipeline, indent: int, lines: list[str]) -> None:
    pad = " " * indent
    for pass_ in pm.passes:
        if pass_.is_adaptor:
            inner = indent
            pipelines = pass_.nested_pipelines()
            if len(pipelines) > 1:
                lines.append(pad + pass_.display_name)
                inner += 2
            for nested in pipelines:
                lines.append(" " * inner + pass_.pipeline_label(nested))
                _pipeline_lines(nested, inner + 2, lines)
        else:
            lines.append(pad + pass_.display_name)
            lines.extend(_statistic_lines(_pass_rows(pass_), indent + 2))
            for nested in pass_.nested_pipelines():
                lines.append(pad + "  " + pass_.pipeline_label(nested))
                _pipeline_lines(nested, indent + 4, lines)


def _list_lines(pm: PassPipeline) -> list[str]:
    merged: dict[str, dict[str, list[int | str]]] = {}
    for pass_ in walk_passes([pm]):
        if pass_.is_adaptor:
            continue
        rows = _pass_rows(pass_)
        if not rows:
            continue
        group = merged.setdefault(pass_.display_name, {})
        for name, value, description in rows:
            entry = group.setdefault(name, [0, description])
            entry[0] = int(entry[0]) + value
    lines: list[str] = []
    for pass_name in sorted(merged):
        lines.append(f"  {pass_name}")
        rows = [(n, int(v), str(d)) for n, (v, d) in merged[pass_name].items()]
        lines.extend(_statistic_lines(rows, 4))
    return lines


def statistics_report(pm: PassPipeline, display: StatisticsDisplay = "pipeline") -> str:
    """MLIR's pass statistics report for `pm`'s passes, as mlir-opt prints it.

    Pipeline view: the pass-manager tree (`'func.func' Pipeline`, `Pipeline
    Collection : [...]` for adaptors with several pipelines), every pass by
    name, its statistics under it. List view: passes with statistics, grouped
    by name and summed, sorted by name. The executors have already applied
    their worker clones' statistics to `pm`'s passes.
    """
    if display == "pipeline":
        lines: list[str] = []
        _pipeline_lines(pm, 0, lines)
    elif display == "list":
        lines = _list_lines(pm)
    else:
        raise ValueError(f"unknown statistics display '{display}'")
    header = [_BANNER, " " * ((80 - len(_TITLE)) // 2) + _TITLE, _BANNER]
    return "\n".join(header + lines) + "\n\n"
