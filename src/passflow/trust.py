"""What a pipeline from an untrusted source may do.

A reproducer is a file someone sent you: its pipeline must not start a program or
read a file that you did not name on the command line. Passes say what they do
beyond the IR through `Pass.unsafe_effect()`; while `untrusted(source)` is in force
(passflow-opt holds it while it reads and replays a reproducer), creating a pass
with such an effect raises `UnsafePassError`. The user opts in with
`--allow-unsafe-passes`.

The check is process-wide, not per thread, so that passes created at run time by
dynamic pipelines on any executor's threads or forked workers are refused too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator

from passflow.diagnostics import PassflowError
from passflow.pass_base import Pass

__all__ = ["UnsafePassError", "check_pass", "untrusted"]

_source: str | None = None


class UnsafePassError(PassflowError):
    """A pipeline from an untrusted source asked for a pass that would start a
    program or read a file."""

    def __init__(self, argument: str, effect: str, source: str) -> None:
        super().__init__(
            f"refusing to run pass '{argument}' from {source}: it {effect}"
        )
        self.argument = argument
        self.effect = effect
        self.source = source


@contextlib.contextmanager
def untrusted(source: str) -> Generator[None]:
    """Refuse unsafe passes while the block runs; `source` names where the
    pipeline came from (`a reproducer`) in the error."""
    global _source
    previous, _source = _source, source
    try:
        yield
    finally:
        _source = previous


def check_pass(pass_: Pass) -> None:
    """Raise `UnsafePassError` if `pass_` has an unsafe effect while a pipeline
    from an untrusted source is being built or run."""
    if _source is None:
        return
    effect = pass_.unsafe_effect()
    if effect is not None:
        raise UnsafePassError(pass_.argument or pass_.name, effect, _source)
