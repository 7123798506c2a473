"""A pipeline as a tree of text, to remove passes from and reset options in.

The reducer works on the textual pipeline: each candidate is new text, parsed
by the same parser as `--pass-pipeline`, so what it writes is exactly what
`passflow-opt` and mlir-opt read back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from passflow.manager import OpPassManager, OpToOpPassAdaptor

__all__ = [
    "Nest",
    "PassEntry",
    "count_passes",
    "keep_passes",
    "passes",
    "reset_options",
    "tree_of",
]


@dataclass(frozen=True)
class PassEntry:
    """One pass: its argument and its `{...}` options text ("" when default)."""

    argument: str
    options: str = ""

    def __str__(self) -> str:
        return self.argument + self.options


@dataclass(frozen=True)
class Nest:
    """A nested pipeline: `anchor(children)`."""

    anchor: str
    children: tuple[PassEntry | Nest, ...]

    def __str__(self) -> str:
        return f"{self.anchor}({','.join(str(c) for c in self.children)})"


def tree_of(pm: OpPassManager) -> Nest:
    """`pm` as a tree of text nodes."""
    children: list[PassEntry | Nest] = []
    for pass_ in pm.passes:
        if isinstance(pass_, OpToOpPassAdaptor):
            children.extend(tree_of(nested) for nested in pass_.managers)
        else:
            options = pass_.options_text()
            text = str(pass_)
            children.append(PassEntry(text[: len(text) - len(options)], options))
    return Nest(pm.textual_anchor, tuple(children))


def passes(tree: Nest) -> Iterator[PassEntry]:
    """Every pass of `tree`, in pipeline order."""
    for child in tree.children:
        if isinstance(child, Nest):
            yield from passes(child)
        else:
            yield child


def count_passes(tree: Nest) -> int:
    return sum(1 for _ in passes(tree))


def _map_passes(
    tree: Nest, change: Callable[[int, PassEntry], PassEntry | None]
) -> Nest:
    """`tree` with each pass replaced by `change(position, pass)` (None: the
    pass goes); nests left empty go too, the top one stays."""
    position = 0

    def rebuild(nest: Nest) -> Nest:
        nonlocal position
        children: list[PassEntry | Nest] = []
        for child in nest.children:
            if isinstance(child, Nest):
                inner = rebuild(child)
                if inner.children:
                    children.append(inner)
                continue
            changed = change(position, child)
            position += 1
            if changed is not None:
                children.append(changed)
        return replace(nest, children=tuple(children))

    return rebuild(tree)


def keep_passes(tree: Nest, keep: Callable[[int], bool]) -> Nest:
    """`tree` with only the passes whose position (in `passes` order) `keep`
    accepts; nests left empty go too (the top one stays)."""
    return _map_passes(tree, lambda i, entry: entry if keep(i) else None)


def reset_options(tree: Nest, target: int) -> Nest | None:
    """`tree` with the options of the pass at position `target` reset to their
    defaults, or None if that pass has none set."""
    entries = list(passes(tree))
    if target >= len(entries) or not entries[target].options:
        return None
    return _map_passes(
        tree, lambda i, entry: PassEntry(entry.argument) if i == target else entry
    )
