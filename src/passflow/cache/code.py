"""The code a pass manager's pipeline runs, as the result cache's key sees it
(`passflow.cache.sources.PipelineCode`), or why it cannot be cached.

A pipeline of passflow's own passes, built from text the caller's salt holds
(passflow-opt's command line), is `OWN_PIPELINE`: passflow's and xDSL's
source, which the key always covers, decide what it runs; that is what
passflow-opt's warm path keys without building the pipeline. Any other
pipeline (a plugin's pass, an xDSL pass, a pass manager built in Python) is
keyed by its printed form with all its options, the verifier and pass-error
settings, and the code of each plugin loaded and each pass class defined
outside passflow and xDSL: a package's every loaded module, a plugin file's
and every loaded module beside it (its helpers). Files the passes read
(`Pass.external_inputs`) are keyed by content; a pass that depends on what no
key can hold (it starts a program) keeps the run out of the cache.
"""

from __future__ import annotations

import json
import sys
import sysconfig
from pathlib import Path

from passflow import registry
from passflow.cache.sources import (
    OWN_PIPELINE,
    PASSFLOW_SOURCE,
    PipelineCode,
    xdsl_source,
)
from passflow.pass_base import Pass, walk_passes
from passflow.pass_manager import PassManager
from passflow.plugin_identity import plugin_file

__all__ = ["pipeline_code"]


def _installed() -> list[Path]:
    """Where the standard library and installed distributions live."""
    paths = sysconfig.get_paths()
    return [Path(paths[name]).resolve() for name in ("stdlib", "purelib", "platlib")]


def _module_files(accept: str | Path) -> set[Path]:
    """The files of the loaded modules of the top-level package `accept`
    (a name), or lying in the directory `accept` (a path) but not installed
    there (a plugin file beside a virtual environment has no say over it)."""
    found: set[Path] = set()
    installed = _installed() if isinstance(accept, Path) else []
    for name, module in list(sys.modules.items()):
        file = getattr(module, "__file__", None)
        if not isinstance(file, str):
            continue
        path = Path(file).resolve()
        if isinstance(accept, str):
            if name == accept or name.startswith(f"{accept}."):
                found.add(path)
        elif path.is_relative_to(accept) and not any(
            path.is_relative_to(place) for place in installed
        ):
            found.add(path)
    return found


def _trees() -> tuple[Path, Path]:
    return PASSFLOW_SOURCE, xdsl_source()


def _foreign(path: Path) -> bool:
    """Whether `path` lies outside passflow's and xDSL's trees."""
    return not any(path.is_relative_to(tree) for tree in _trees())


class _Homeless(Exception):
    """A pass class whose code no file holds (defined in a notebook or at
    the prompt): no key can cover it."""


def _class_files(passes: list[Pass]) -> tuple[set[Path], bool]:
    """The code of each pass's classes outside passflow and xDSL, and whether
    every class is passflow's own (no xDSL class run by an adapter either)."""
    files: set[Path] = set()
    own = True
    for pass_ in passes:
        classes: list[type] = list(type(pass_).__mro__)
        wrapped = getattr(type(pass_), "xdsl_class", None)
        if isinstance(wrapped, type):
            classes += wrapped.__mro__
            own = False
        for cls in classes:
            if cls.__module__ == "builtins":
                continue
            source = getattr(sys.modules.get(cls.__module__), "__file__", None)
            if not isinstance(source, str):
                raise _Homeless(pass_.argument or pass_.name)
            path = Path(source).resolve()
            own = own and path.is_relative_to(PASSFLOW_SOURCE)
            if _foreign(path):
                files |= _module_files(cls.__module__.partition(".")[0])
                files.add(path)
    return files, own


def _plugin_files() -> set[Path]:
    """The code of every plugin loaded that is not passflow's own."""
    files: set[Path] = set()
    for key in registry.loaded_plugins():
        path = plugin_file(key)
        if path is not None:
            files.add(path)
            files |= {f for f in _module_files(path.parent) if _foreign(f)}
        elif not key.startswith("passflow."):
            files |= _module_files(key.partition(":")[0].strip().partition(".")[0])
    return files


def pipeline_code(
    pm: PassManager, *, named_by_salt: bool = False
) -> PipelineCode | str:
    """What the key holds of `pm`'s code and pipeline, or why a run of it
    cannot be cached. `named_by_salt`: the caller's salt holds the text `pm`
    was built from (passflow-opt's flags)."""
    passes = list(walk_passes([pm]))
    inputs: set[Path] = set()
    for pass_ in passes:
        read = pass_.external_inputs()
        if read is None:
            effect = pass_.unsafe_effect() or "depends on more than its IR"
            return f"pass '{pass_.argument or pass_.name}' {effect}"
        inputs |= {Path(path).resolve() for path in read}
    try:
        files, own = _class_files(passes)
    except _Homeless as err:
        return f"pass '{err}' is defined where no file holds its code"
    if named_by_salt and own and not inputs and registry.only_passflow_registered():
        return OWN_PIPELINE
    text = json.dumps(
        [str(pm), pm.verify_each, pm.emit_pass_error_on_failure], sort_keys=True
    )
    return PipelineCode(frozenset(files | _plugin_files()), frozenset(inputs), text)
