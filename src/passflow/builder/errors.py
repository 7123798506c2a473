"""The builder's errors and its warning category.

Every message names what was asked for and what the pipeline holds, and ends with a
line that starts with "fix:". Extensions catch these errors to fall back, as the "Pass Manager Builder" proposal's
`registerDialectAndPasses` example does when a framework has no one-shot bufferization:

    PassflowError
    └── BuilderError               a pipeline cannot be composed as asked
        ├── AnchorNotFoundError    no pass matches the anchor (or not that occurrence)
        ├── AmbiguousAnchorError   replace/remove matched several passes
        ├── ExtensionError         extensions failed to load or run (all of them listed)
        └── OrderingError          ordering constraints are broken
            └── ContradictionError no order of the passes satisfies their constraints

`OrderingError` and `ContradictionError` carry the `Violation`s they report, so they
live beside them in `constraints`, which raises `BuilderError` from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from passflow.diagnostics import PassflowError

if TYPE_CHECKING:
    from passflow.registry import PluginFailure

__all__ = [
    "AmbiguousAnchorError",
    "AnchorNotFoundError",
    "BuilderError",
    "ExtensionError",
    "OrderingWarning",
    "UnknownKindWarning",
]


class BuilderError(PassflowError):
    """A pipeline cannot be composed as asked. The builder is left unchanged."""


class AnchorNotFoundError(BuilderError):
    """No pass in the searched pipeline matches the anchor, or not the occurrence asked.

    `anchor` is what was searched for. `arguments` and `kinds` are what the searched
    pipeline holds, so that a fallback can choose another anchor without parsing the
    message.
    """

    def __init__(
        self,
        message: str,
        *,
        anchor: str,
        arguments: tuple[str, ...],
        kinds: tuple[str, ...],
    ) -> None:
        super().__init__(message)
        self.anchor = anchor
        self.arguments = arguments
        self.kinds = kinds


class AmbiguousAnchorError(BuilderError):
    """`replace` or `remove` matched several passes and no occurrence was given.

    Destructive edits must say which pass they mean. Insertions do not need to,
    because the "Pass Manager Builder" proposal gives them a rule: before the first occurrence, after the last.
    """


class ExtensionError(BuilderError):
    """Extensions failed to load (a missing module, an entry point that is not a
    function) or raised while registering.

    `failures` lists each one (`name`, `entry_point`, `distribution`, `error`);
    `ran` names the extensions that ran. Each failing extension was undone on its
    own, so the builder holds exactly what the others did.
    """

    def __init__(
        self,
        message: str,
        failures: tuple[PluginFailure, ...],
        ran: tuple[str, ...],
    ) -> None:
        super().__init__(message)
        self.failures = failures
        self.ran = ran


class OrderingWarning(UserWarning):
    """A weak ordering constraint is broken while `weak_severity` is WARNING.

    The warning is issued once per violation: by the operation that causes it (the
    stack level points at the caller's line) or else by `build()`.
    """


class UnknownKindWarning(OrderingWarning):
    """A constraint or a rule names a kind that no pass in the pipeline has and
    that is not a standard, tabled or tagged kind: most likely a misspelt kind,
    which makes a weak constraint hold trivially. Issued by `build()`."""
