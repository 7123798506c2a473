"""Pass statistics: named counters declared on a pass class.

A `Statistic` is declared like an option and used like an int
(`self.num_erased += 1`). Values belong to a pass instance and persist across
runs, as in MLIR; worker clones start at zero and are summed back into the
original, so the reported figure is the same whichever executor ran the work.
"""

from __future__ import annotations

from typing import Any, overload

__all__ = ["Statistic", "statistics_of"]


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


def add_statistics(into: object, source: object) -> None:
    """`into.stat += source.stat` for every statistic; `source` is reset to zero."""
    for stat in statistics_of(type(into)):
        value = source.__dict__.pop(stat.attr, 0)
        if value:
            into.__dict__[stat.attr] = into.__dict__.get(stat.attr, 0) + value
