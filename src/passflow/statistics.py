"""Pass statistics: named counters declared on a pass class.

A `Statistic` is declared like an option and used like an int
(`self.num_erased += 1`, or `self.num_cse = driver.num_cse` as MLIR's CSE does).
Values belong to a pass instance and persist across runs, as in MLIR.

Parallel executors run an op's children on clones of the passes, in any order,
in any process. So that the figures match a serial run whatever the executor,
every child's effect on a statistic is recorded and applied to the original
pass in child order (`passflow.executors.child_run.PipelineStatistics`): before a child
runs, the statistics of the passes that run it are *armed* to a `Relative`
zero, an int that stays `Relative` under `+` and `-`. After the child, a
statistic that is still `Relative` was only counted up or down (its effect:
add this much), one that is a plain int was assigned (its effect: this value).
Applied in child order, additions sum and the last assignment wins, exactly as
on the single instance of a serial run. Both effects are plain ints, so they
travel between processes.
"""

from __future__ import annotations

from typing import Any, overload

__all__ = [
    "Relative",
    "Statistic",
    "StatisticEffects",
    "apply_statistic_effects",
    "arm_statistics",
    "reset_statistics",
    "set_statistics_aside",
    "statistic_values",
    "statistics_of",
    "take_statistic_effects",
]


class Statistic:
    """An unsigned counter on a pass instance; `name` is what reports show.

    With `maximum`, the statistic is a high-water mark (MLIR's `updateMax`): a
    child run's value raises it and never lowers it, whichever child comes last.
    """

    __slots__ = ("attr", "description", "maximum", "name")

    def __init__(
        self, name: str | None = None, description: str = "", *, maximum: bool = False
    ) -> None:
        self.name = name or ""
        self.description = description
        self.maximum = maximum
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


def set_statistics_aside(instance: object) -> dict[str, object]:
    """Take `instance`'s statistic values off it (to put back with
    `instance.__dict__.update`), so that a run counts from nothing."""
    values = instance.__dict__
    return {
        stat.attr: values.pop(stat.attr)
        for stat in statistics_of(type(instance))
        if stat.attr in values
    }


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
    maxima = {stat.attr for stat in statistics_of(type(into)) if stat.maximum}
    for attr, value in assigned.items():
        values[attr] = max(values.get(attr, 0), value) if attr in maxima else value
    for attr, amount in added.items():
        values[attr] = values.get(attr, 0) + amount
