"""The code a pass manager's pipeline runs, as the result cache's key sees it
(`passflow.sliced.cache_key.run_key`'s `code`).

A pipeline of passflow's own passes, built from text the caller's salt holds
(passflow-opt's command line), is keyed by passflow's source alone
(`own_code_key`): that is what passflow-opt's warm path computes without
building the pipeline. Any other pipeline (a plugin's pass, an xDSL pass, a
pass manager built in Python) is keyed by the source files of its pass
classes and their bases (for an xDSL pass, the xDSL class it runs) besides
passflow's, and by the pipeline as printed with all its options, the verifier
and the pass-error settings.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from passflow import registry
from passflow.pass_base import walk_passes
from passflow.pass_manager import PassManager
from passflow.sliced.cache_key import (
    PASSFLOW_SOURCE,
    digest,
    files_fingerprint,
    own_code_key,
    passflow_files,
)

__all__ = ["pipeline_code"]


def _class_files(pm: PassManager) -> tuple[set[Path], bool]:
    """The files defining each pass's classes, and whether every one of them
    is passflow's own (no xDSL class run by an adapter, no class from
    elsewhere)."""
    files: set[Path] = set()
    own = True
    for pass_ in walk_passes([pm]):
        classes: list[type] = list(type(pass_).__mro__)
        wrapped = getattr(type(pass_), "xdsl_class", None)
        if isinstance(wrapped, type):
            classes += wrapped.__mro__
            own = False
        for cls in classes:
            module = sys.modules.get(cls.__module__)
            source = getattr(module, "__file__", None)
            if isinstance(source, str):
                path = Path(source).resolve()
                files.add(path)
                own = own and path.is_relative_to(PASSFLOW_SOURCE)
            elif cls.__module__ != "builtins":
                own = False
    return files, own


def pipeline_code(pm: PassManager, *, named_by_salt: bool = False) -> str:
    """What the key holds of `pm`'s code and pipeline. `named_by_salt`: the
    caller's salt holds the text `pm` was built from (passflow-opt's flags)."""
    files, own = _class_files(pm)
    if named_by_salt and own and registry.only_passflow_registered():
        return own_code_key()
    return digest(
        json.dumps(
            [
                files_fingerprint(passflow_files() | files),
                str(pm),
                pm.verify_each,
                pm.emit_pass_error_on_failure,
            ]
        )
    )
