"""Bundles: named groups of passes that are added as one unit.

A bundle stands for passes that belong together, either because running a cleanup
between them would undo what the first one set up, or simply because they are always
used together (`cleanup()` is canonicalize followed by cse). While the pipeline is
being built, a bundle is a single entry. Insertions anchored on one of its passes go
before or after the whole bundle, never between its members. `build()` flattens the
bundle into its passes. Two identical cleanup bundles with nothing between them are
collapsed into one, and the build report says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from xdsl.passes import ModulePass

from passflow.builder.errors import BuilderError
from passflow.manager import Nesting, OpPassManager, OpToOpPassAdaptor
from passflow.pass_base import Pass
from passflow.pipeline_text import parse_pass_pipeline_into
from passflow.xdsl_adapter import adapt

__all__ = ["Bundle", "cleanup"]


@dataclass(frozen=True, init=False)
class Bundle:
    """A named group of passes, e.g. `Bundle("tpp-mapping", PackPass(), "canonicalize")`.

    Members are pass instances (xDSL `ModulePass`es too) or pipeline text naming
    registered passes (options allowed: `"canonicalize{max-iterations=3}"`). They cannot be nested pipelines.
    An op-restricted member still runs on its op, because `build()` nests it as
    `OpPassManager.add` does with implicit nesting. A bundle is a template: each
    time it is added, the builder stores fresh copies of its passes.
    """

    name: str
    passes: tuple[Pass, ...]

    def __init__(
        self, name: str, *passes: Pass | ModulePass | type[ModulePass] | str
    ) -> None:
        if not name:
            raise BuilderError(
                "a bundle needs a name, which explain() and the build report show; "
                'fix: Bundle("my-bundle", ...)'
            )
        members: list[Pass] = []
        for item in passes:
            if isinstance(item, str):
                members.extend(passes_from_text(item))
            elif isinstance(item, Pass):
                members.append(item)
            else:
                members.append(adapt(item))
        if not members:
            raise BuilderError(
                f"bundle '{name}' has no passes; fix: give it at least one pass"
            )
        nested = [str(p) for p in members if isinstance(p, OpToOpPassAdaptor)]
        if nested:
            raise BuilderError(
                f"bundle '{name}' holds the nested pipeline {nested[0]}, but bundles "
                "hold passes only; fix: add the pass itself, and build() nests it on "
                "the op it is restricted to"
            )
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "passes", tuple(members))


@cache
def cleanup() -> Bundle:
    """The standard cleanup bundle, `canonicalize` then `cse` (LLVM's addCleanupPasses).

    The one template is shared (a bundle is immutable, and placing it copies its
    passes), so calling it in a loop parses nothing twice.
    """
    return Bundle("cleanup", "canonicalize", "cse")


def passes_from_text(text: str) -> list[Pass]:
    """The top-level passes of unanchored pipeline text; nested pipelines become adaptors.

    Registered pipelines are expanded into their passes. A parse error is raised as
    `PipelineParseError`, with MLIR's message and caret.
    """
    staging = OpPassManager("any", Nesting.EXPLICIT)
    parse_pass_pipeline_into(text, staging)
    return list(staging.passes)
