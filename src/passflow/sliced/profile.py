"""Where a sliced run's time went."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SlicedProfile"]


@dataclass
class SlicedProfile:
    """Where a sliced run's time went (benchmarks fit their model on it).

    `wall`: from the scan to the stitched text; `scan`: the parent's scan;
    `batch_seconds`: what the batches took, wherever they ran; `here`: the
    part of it the parent ran itself (`in_parent` batches); `waited`: the
    parent's time waiting for workers. What is left of `wall` is the part no
    other process can take over: `parent_only`.
    """

    pieces: int = 0
    batches: int = 0
    workers: int = 0
    in_parent: int = 0
    wall: float = 0.0
    scan: float = 0.0
    batch_seconds: float = 0.0
    here: float = 0.0
    waited: float = 0.0

    @property
    def parent_only(self) -> float:
        """Seconds of the parent neither running batches nor waiting."""
        return self.wall - self.here - self.waited
