"""Pass statistics: named counters declared on a pass class.

A `Statistic` is declared like an option and used like an int
(`self.num_erased += 1`, or `self.num_cse = driver.num_cse` as MLIR's CSE does).
Values belong to a pass instance and persist across runs, as in MLIR.

Parallel executors run an op's children on clones of the passes, in any order,
in any process. So that the figures match a serial run whatever the executor,
every child's effect on a statistic is recorded and applied to the original
pass in child order (`passflow.execution.PipelineStatistics`): before a child
runs, the statistics of the passes that run it are *armed* to a `Relative`
zero, an int that stays `Relative` under `+` and `-`. After the child, a
statistic that is still `Relative` was only counted up or down (its effect:
add this much), one that is a plain int was assigned (its effect: this value).
Applied in child order, additions sum and the last assignment wins, exactly as
on the single instance of a serial run. Both effects are plain ints, so they
travel between processes.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal, overload

if TYPE_CHECKING:
    from passflow.manager import OpPassManager

__all__ = [
    "Relative",
    "Statistic",
    "StatisticEffects",
    "StatisticsDisplay",
    "apply_statistic_effects",
    "arm_statistics",
    "merge_statistics",
    "statistics_of",
    "statistics_report",
    "take_statistic_effects",
]


class Statistic:
    """An unsigned counter on a pass instance; `name` is what reports show."""

    __slots__ = ("attr", "description", "name")

    def __init__(self, name: str | None = None, description: str = "") -> None:
        self.name = name or ""
        self.description = description
        self.attr = ""

    def __set_name__(self, owner: type, attr: str) -> None:
        self.attr = attr
        if not self.name:
            self.name = attr.replace("_", "-")

    @overload
    def __get__(self, instance: None, owner: type) -> Statistic: ...
    @overload
    def __get__(self, instance: object, owner: type) -> int: ...
    def __get__(self, instance: object | None, owner: type) -> Statistic | int:
        if instance is None:
            return self
        return 0


_cache: dict[type, tuple[Statistic, ...]] = {}


def statistics_of(cls: type[Any]) -> tuple[Statistic, ...]:
    """The statistics declared on `cls` and its bases, in declaration order."""
    found = _cache.get(cls)
    if found is None:
        seen: dict[str, Statistic] = {}
        for klass in reversed(cls.__mro__):
            for value in vars(klass).values():
                if isinstance(value, Statistic):
                    seen[value.attr] = value
        found = _cache[cls] = tuple(seen.values())
    return found


def statistic_values(instance: object) -> list[tuple[Statistic, int]]:
    """Current values of every statistic of a pass instance."""
    return [(s, int(getattr(instance, s.attr))) for s in statistics_of(type(instance))]


def reset_statistics(instance: object) -> None:
    for stat in statistics_of(type(instance)):
        instance.__dict__.pop(stat.attr, None)


class Relative(int):
    """A statistic counted from an armed zero: `+` and `-` with an int keep it
    `Relative`, anything else (an assignment, `*`, `max`) gives a plain int."""

    __slots__ = ()

    def __add__(self, other: int) -> int:  # pyright: ignore[reportIncompatibleMethodOverride]
        result = int.__add__(self, other)
        return result if result is NotImplemented else Relative(result)

    __radd__ = __add__

    def __sub__(self, other: int) -> int:  # pyright: ignore[reportIncompatibleMethodOverride]
        result = int.__sub__(self, other)
        return result if result is NotImplemented else Relative(result)

    def __repr__(self) -> str:
        return f"Relative({int(self)})"


StatisticEffects = tuple[dict[str, int], dict[str, int]]
"""What a run did to a pass's statistics, by attribute: (added, assigned).

`added[attr]` was only counted up or down by that much; `assigned[attr]` was
assigned and ended at that value (later increments included)."""

_MISSING = object()


def arm_statistics(instance: object) -> None:
    """Set every statistic of `instance` to `Relative(0)`, to see what a run does."""
    values = instance.__dict__
    for stat in statistics_of(type(instance)):
        values[stat.attr] = Relative(0)


def take_statistic_effects(instance: object) -> StatisticEffects:
    """What the runs since `arm_statistics(instance)` did to its statistics, as
    plain ints; the statistics are reset to zero (unarmed)."""
    added: dict[str, int] = {}
    assigned: dict[str, int] = {}
    values = instance.__dict__
    for stat in statistics_of(type(instance)):
        value = values.pop(stat.attr, _MISSING)
        if isinstance(value, Relative):
            if value:
                added[stat.attr] = int(value)
        elif isinstance(value, int):
            assigned[stat.attr] = int(value)
    return added, assigned


def apply_statistic_effects(into: object, effects: StatisticEffects) -> None:
    """Apply a run's effects to `into`: assigned values replace, counts add.

    `into` may itself be armed (a nested run): additions keep it `Relative`."""
    added, assigned = effects
    values = into.__dict__
    values.update(assigned)
    for attr, amount in added.items():
        values[attr] = values.get(attr, 0) + amount


def add_statistics(into: object, source: object) -> None:
    """`into.stat += source.stat` for every statistic; `source` is reset to zero."""
    for stat in statistics_of(type(into)):
        value = source.__dict__.pop(stat.attr, 0)
        if value:
            into.__dict__[stat.attr] = into.__dict__.get(stat.attr, 0) + value


# --- reports (mlir-opt's `--mlir-pass-statistics`) ---------------------------------

StatisticsDisplay = Literal["pipeline", "list"]
"""`pipeline` mirrors the pass-manager tree; `list` sums passes of the same name."""

_BANNER = "===" + "-" * 73 + "==="
_TITLE = "... Pass statistics report ..."


def merge_statistics(main: OpPassManager, clones: Iterable[OpPassManager]) -> None:
    """Sum the statistics of copies of `main` into `main`'s passes (MLIR's
    `prepareStatistics`).

    Each clone's passes are paired with `main`'s by position, nested pipelines
    recursively, and their counts added into the original pass while the
    clone's are reset, so a count is never added twice. For counters that are
    only added to, that is what a serial run gives; the executors do not use it,
    as a summed *assigned* statistic depends on how the children were spread
    over the clones (see the module's docstring for what they do instead).
    """
    from passflow.manager import OpToOpPassAdaptor

    for clone in clones:
        for original, copy in zip(main.passes, clone.passes, strict=True):
            if isinstance(original, OpToOpPassAdaptor) and isinstance(
                copy, OpToOpPassAdaptor
            ):
                for nested, nested_copy in zip(
                    original.managers, copy.managers, strict=True
                ):
                    merge_statistics(nested, [nested_copy])
            else:
                add_statistics(original, copy)


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


def _pipeline_lines(pm: OpPassManager, indent: int, lines: list[str]) -> None:
    from passflow.manager import OpToOpPassAdaptor

    pad = " " * indent
    for pass_ in pm.passes:
        if isinstance(pass_, OpToOpPassAdaptor):
            inner = indent
            if len(pass_.managers) > 1:
                lines.append(pad + pass_.adaptor_name)
                inner += 2
            for nested in pass_.managers:
                lines.append(" " * inner + f"'{nested.anchor}' Pipeline")
                _pipeline_lines(nested, inner + 2, lines)
        else:
            lines.append(pad + pass_.name)
            lines.extend(_statistic_lines(_pass_rows(pass_), indent + 2))


def _list_lines(pm: OpPassManager) -> list[str]:
    from passflow.manager import OpToOpPassAdaptor

    merged: dict[str, dict[str, list[int | str]]] = {}
    pending = list(pm.passes)
    while pending:
        pass_ = pending.pop()
        if isinstance(pass_, OpToOpPassAdaptor):
            for nested in pass_.managers:
                pending.extend(nested.passes)
            continue
        rows = _pass_rows(pass_)
        if not rows:
            continue
        group = merged.setdefault(pass_.name, {})
        for name, value, description in rows:
            entry = group.setdefault(name, [0, description])
            entry[0] = int(entry[0]) + value
    lines: list[str] = []
    for pass_name in sorted(merged):
        lines.append(f"  {pass_name}")
        rows = [(n, int(v), str(d)) for n, (v, d) in merged[pass_name].items()]
        lines.extend(_statistic_lines(rows, 4))
    return lines


def statistics_report(
    pm: OpPassManager, display: StatisticsDisplay = "pipeline"
) -> str:
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
