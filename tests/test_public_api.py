"""The public API is flat: every name README.md and docs/*.md import comes from
`passflow` or one of the few documented public modules, and `passflow.__all__`
is exactly what `passflow` exports."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from types import ModuleType

import pytest
from docs_blocks import all_blocks

import passflow

PUBLIC_MODULES = (
    "passflow",
    "passflow.ir",
    "passflow.remarks",
    "passflow.builder",
    "passflow.graph",
    "passflow.reduce",
    "passflow.sliced",
)
"""The modules docs/api/ documents; docs import from these alone."""

LAZY_LAYERS = (
    "passflow.analyses",
    "passflow.builder",
    "passflow.graph",
    "passflow.pipeline_text",
    "passflow.reduce",
    "passflow.registry",
    "passflow.tools",
)
"""The layers `import passflow` does not load (their names load them)."""


_IMPORT = re.compile(
    r"^[ \t]*(?:from passflow[\w.]* import (?:\([^)]*\)|[^\n]*)|import passflow[^\n]*)",
    re.M,
)


def _doc_imports() -> list[tuple[str, str, list[str]]]:
    """(where, module, names) of each `from passflow... import` statement of
    the Python blocks (`import passflow...` has no names)."""
    found: list[tuple[str, str, list[str]]] = []
    for block in all_blocks():
        if block.language != "python":
            continue
        for statement in _IMPORT.findall(block.code):
            node = ast.parse(statement.strip()).body[0]
            if isinstance(node, ast.ImportFrom):
                names = [alias.name for alias in node.names]
                found.append((block.where, node.module or "", names))
            elif isinstance(node, ast.Import):
                found.extend((block.where, alias.name, []) for alias in node.names)
    return found


DOC_IMPORTS = _doc_imports()


def test_the_docs_import_passflow() -> None:
    assert len(DOC_IMPORTS) >= 10, DOC_IMPORTS


@pytest.mark.parametrize(
    ("where", "module", "names"),
    DOC_IMPORTS,
    ids=[f"{where}:{module}" for where, module, _ in DOC_IMPORTS],
)
def test_every_name_the_docs_import_is_public(
    where: str, module: str, names: list[str]
) -> None:
    assert module in PUBLIC_MODULES, (
        f"{where}: imports from {module}; import from one of {PUBLIC_MODULES}"
    )
    imported = importlib.import_module(module)
    missing = [name for name in names if not hasattr(imported, name)]
    assert missing == [], f"{where}: {module} has no {missing}"


_EXPORTED = """
import types, passflow
bound = [
    name for name, value in vars(passflow).items()
    if not name.startswith("_") and name != "TYPE_CHECKING"
    and not isinstance(value, types.ModuleType)
]
lazy = [name for names in passflow._MODULES.values() for name in names]
print(*sorted({*bound, *lazy, "ir"}))
"""
"""The public names a fresh `import passflow` offers: those it binds
(everything but private names, submodules and `TYPE_CHECKING`), those it loads
on first use (`passflow._MODULES`), and `passflow.ir`."""


def test_all_is_sorted_and_without_duplicates() -> None:
    assert passflow.__all__ == sorted(set(passflow.__all__))


def test_all_is_everything_passflow_exports() -> None:
    eager = subprocess.run(
        [sys.executable, "-c", _EXPORTED], capture_output=True, text=True, check=True
    ).stdout.split()
    assert "OperationPass" in eager
    assert sorted(set(eager) - set(passflow.__all__)) == []
    for name in passflow.__all__:
        value: object = getattr(passflow, name)
        home = value.__name__ if isinstance(value, ModuleType) else value.__module__
        assert home.startswith("passflow."), (name, home)


def test_every_documented_module_exports_what_its_all_names() -> None:
    for name in PUBLIC_MODULES:
        module = importlib.import_module(name)
        names: list[str] = getattr(module, "__all__", [])
        missing = [n for n in names if not hasattr(module, n)]
        assert missing == [], f"{name}.__all__ names missing {missing}"


def test_unknown_names_are_attribute_errors() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchThing'"):
        getattr(passflow, "NoSuchThing")  # noqa: B009


def test_importing_passflow_leaves_the_lazy_layers_unloaded() -> None:
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, passflow; print(*sorted(sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    early = [m for m in loaded if m.startswith(LAZY_LAYERS)]
    assert early == []
