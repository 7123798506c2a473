"""The pipeline builder of the "Pass Manager Builder" proposal: compose a pipeline you don't own.

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

Modules: `kinds` (PassKind, anchors), `catalog` (the kinds of passflow's and
xDSL's passes, `tag_kinds`), `constraints` (Requires, AfterLast, BeforeFirst,
FollowedByCleanup, PrecededByCleanup), `bundles` (Bundle, cleanup), `entries` (what
the builder holds), `tree` (back-pointers, order keys, anchor indexes, undo),
`search` (finding anchors, placing entries, splitting nests), `nesting` (which
ops can sit directly inside which), `plan` (flattening, merging, collapsing),
`checks` (the full evaluation, cycles, unknown kinds), `quick` (the incremental check), `explain` (the listing), `discovery` (extensions by entry
point), `source` (a pipeline as builder source), `compare` (what changed between
two versions), `pipeline` (PipelineBuilder, `diff_pipelines`), `errors`. The user guide is docs/builder.md.
"""

from passflow.builder.bundles import Bundle, cleanup
from passflow.builder.catalog import KIND_TABLE, UNKNOWN, tag_kinds
from passflow.builder.compare import PassChange, PipelineDiff
from passflow.builder.constraints import (
    AfterLast,
    BeforeFirst,
    Constraint,
    ContradictionError,
    FollowedByCleanup,
    OrderingError,
    PrecededByCleanup,
    Requires,
    Violation,
)
from passflow.builder.discovery import EXTENSION_GROUP, Extension, discover_extensions
from passflow.builder.errors import (
    AmbiguousAnchorError,
    AnchorNotFoundError,
    BuilderError,
    ExtensionError,
    OrderingWarning,
    UnknownKindWarning,
)
from passflow.builder.kinds import STANDARD_KINDS, Anchor, InBundle, PassKind
from passflow.builder.pipeline import BuildReport, PipelineBuilder, diff_pipelines
from passflow.builder.search import Occurrence
from passflow.builder.source import python_source

__all__ = [
    "EXTENSION_GROUP",
    "KIND_TABLE",
    "STANDARD_KINDS",
    "UNKNOWN",
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
    "Extension",
    "ExtensionError",
    "FollowedByCleanup",
    "InBundle",
    "Occurrence",
    "OrderingError",
    "OrderingWarning",
    "PassChange",
    "PassKind",
    "PipelineBuilder",
    "PipelineDiff",
    "PrecededByCleanup",
    "Requires",
    "UnknownKindWarning",
    "Violation",
    "cleanup",
    "diff_pipelines",
    "discover_extensions",
    "python_source",
    "tag_kinds",
]
