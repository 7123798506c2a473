"""Delta debugging: the smallest subset of items that keeps a test true.

Zeller's ddmin over item positions: try keeping each chunk alone, then each
chunk's complement, halving the chunks while nothing helps. One culprit among
n items costs about 2·log2(n) tests; the result is 1-minimal (no single item
can go). Candidates at one granularity are tried in parallel by the
`CandidateRunner`, which still returns the first interesting one in order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from passflow.reduce.candidates import CandidateRunner
from passflow.reduce.outcome import CandidateMaker

__all__ = ["minimize"]

Attempt = Callable[[frozenset[int]], CandidateMaker]
"""Makes the candidate that keeps only the given positions."""


def minimize(
    items: Sequence[int],
    attempt: Attempt,
    runner: CandidateRunner,
    on_progress: Callable[[list[int]], None] | None = None,
) -> list[int]:
    """A 1-minimal subset of `items` whose candidate is interesting (`items`
    itself is assumed to be)."""
    kept = list(items)
    if kept and runner.first_interesting([attempt(frozenset())]) is not None:
        kept = []
    granularity = 2
    while len(kept) >= 2:
        size = -(-len(kept) // granularity)
        chunks = [kept[i : i + size] for i in range(0, len(kept), size)]
        options = list(chunks)
        if len(chunks) > 2:
            options += [
                [item for item in kept if item not in set(chunk)] for chunk in chunks
            ]

        def candidates(
            options: list[list[int]] = options,
        ) -> Iterator[CandidateMaker]:
            for option in options:
                yield attempt(frozenset(option))

        found = runner.first_interesting(candidates())
        if found is not None:
            kept = options[found]
            granularity = 2 if found < len(chunks) else max(granularity - 1, 2)
            if on_progress is not None:
                on_progress(kept)
        elif granularity >= len(kept):
            break
        else:
            granularity = min(2 * granularity, len(kept))
    return kept
