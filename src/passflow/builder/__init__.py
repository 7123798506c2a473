"""The pipeline builder of seed 003: compose a pipeline you don't own.

A framework builds its pipeline; extensions it has never seen insert their passes
before or after a named pass or a kind of pass; ordering constraints are checked on
every change and again when the pipeline is built, not when it breaks at run time;
`build()` returns an ordinary `PassManager`; `explain()` says who placed each pass.

    builder = PipelineBuilder("builtin.module", framework="acme")
    builder.add(IngressPass())
    functions = builder.nest("func.func")
    functions.add(TensorFold())
    functions.add(cleanup())
    builder.add("one-shot-bufferize")
    ...
    with builder.extension("tpp"):                      # in the extension's code
        builder.insert_before(TppTensorPass(), "one-shot-bufferize")
        builder.insert_after(TppMemrefPass(), PassKind.BUFFERIZATION)
    pm = builder.build()                                # an ordinary PassManager
    print(builder.explain())

Modules: `kinds` (PassKind), `constraints` (Requires, AfterLast, BeforeFirst,
FollowedByCleanup), `bundles` (Bundle, cleanup), `entries` (what the builder holds),
`search` (finding anchors, placing entries), `plan` (flattening, merging,
collapsing), `checks` (constraint checks, cycles), `explain` (the listing),
`pipeline` (PipelineBuilder), `errors`. The user guide is docs/builder.md.
"""

from passflow.builder.bundles import Bundle, cleanup
from passflow.builder.constraints import (
    AfterLast,
    BeforeFirst,
    Constraint,
    FollowedByCleanup,
    Requires,
    Violation,
)
from passflow.builder.errors import (
    AmbiguousAnchorError,
    AnchorNotFoundError,
    BuilderError,
    ContradictionError,
    OrderingError,
    OrderingWarning,
)
from passflow.builder.kinds import STANDARD_KINDS, Anchor, PassKind
from passflow.builder.pipeline import BuildReport, PipelineBuilder
from passflow.builder.search import Occurrence

__all__ = [
    "STANDARD_KINDS",
    "AfterLast",
    "AmbiguousAnchorError",
    "Anchor",
    "AnchorNotFoundError",
    "BeforeFirst",
    "BuildReport",
    "BuilderError",
    "Bundle",
    "Constraint",
    "ContradictionError",
    "FollowedByCleanup",
    "Occurrence",
    "OrderingError",
    "OrderingWarning",
    "PassKind",
    "PipelineBuilder",
    "Requires",
    "Violation",
    "cleanup",
]
