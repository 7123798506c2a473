"""A pipeline as Python builder source: the program that builds it again.

`python_source(pm)` writes the `PipelineBuilder` calls that build `pm`: one
`add` per pass, one `nest` per nested pipeline. A pass registered under its
argument is added as its text (`builder.add("canonicalize{max-iterations=3}")`),
so the source reads like the pipeline and needs only passflow's imports; any
other pass is made from its class, imported from its module, with its options
applied. Running the source gives a builder whose `build()` prints as `pm` does
(`tests/test_builder_roundtrip.py` checks this for every registered pipeline).
"""

from __future__ import annotations

import json

from passflow import registry
from passflow.builder.errors import BuilderError
from passflow.diagnostics import PassflowError
from passflow.manager import OpPassManager, OpToOpPassAdaptor
from passflow.pass_base import Pass

__all__ = ["python_source"]


def python_source(pm: OpPassManager, *, variable: str = "builder") -> str:
    """Python source that builds `pm` with a `PipelineBuilder` named `variable`.

    Raises `BuilderError` for a nested pipeline that runs at any depth
    (`recursive`), which a builder cannot hold.
    """
    writer = _Writer()
    writer.body.append(f"{variable} = PipelineBuilder({_literal(pm.anchor)})")
    writer.passes(pm, variable)
    imports = ["from passflow.builder import PipelineBuilder"]
    imports.extend(sorted(writer.imports))
    return "\n".join([*imports, "", *writer.body]) + "\n"


class _Writer:
    """The lines of the program, the imports its classes need, fresh names."""

    def __init__(self) -> None:
        self.body: list[str] = []
        self.imports: set[str] = set()
        self.count = 0

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"{stem}_{self.count}"

    def passes(self, pm: OpPassManager, variable: str) -> None:
        for pass_ in pm.passes:
            if isinstance(pass_, OpToOpPassAdaptor):
                for manager in pass_.managers:
                    if manager.recursive:
                        raise BuilderError(
                            f"python_source: the nested pipeline '{manager}' runs on "
                            "ops at any depth, which a PipelineBuilder cannot hold"
                        )
                    nested = self.fresh("nested")
                    self.body.append(
                        f"{nested} = {variable}.nest({_literal(manager.anchor)})"
                    )
                    self.passes(manager, nested)
            elif _registered_as_text(pass_, pm.anchor):
                self.body.append(f"{variable}.add({_literal(str(pass_))})")
            else:
                self.instance(pass_, variable)

    def instance(self, pass_: Pass, variable: str) -> None:
        cls = type(pass_)
        if "<locals>" in cls.__qualname__ or cls.__module__ == "__main__":
            raise BuilderError(
                f"python_source: pass '{pass_}' is of class {cls.__qualname__}, "
                f"which no module exports and which is not registered as "
                f"'{pass_.argument}'; fix: register it (register_pass) or define it "
                "at the top level of a module"
            )
        self.imports.add(f"from {cls.__module__} import {cls.__qualname__}")
        options = pass_.options_text()
        if not options:
            self.body.append(f"{variable}.add({cls.__qualname__}())")
            return
        made = self.fresh("pass")
        self.body.append(f"{made} = {cls.__qualname__}()")
        self.body.append(f"{made}.initialize_options({_literal(options[1:-1])})")
        self.body.append(f"{variable}.add({made})")


def _literal(text: str) -> str:
    """`text` as a double-quoted Python string literal (JSON's escapes are Python's)."""
    return json.dumps(text)


def _registered_as_text(pass_: Pass, anchor: str) -> bool:
    """Whether the pass's text makes this very pass again: a pass registered
    under its argument, or a registered pipeline that adds just this pass (a
    registered pipeline graph's schedule)."""
    text = str(pass_)
    name, _, options = text.partition("{")
    info = registry.lookup_pass(name)
    if info is not None:
        return info.pass_class is type(pass_)
    pipeline = registry.lookup_pipeline(name)
    if pipeline is None:
        return False
    probe = OpPassManager(anchor)
    try:
        pipeline.add_to(probe, options.removesuffix("}"))
    except PassflowError:
        return False
    return [str(p) for p in probe.passes] == [text]
