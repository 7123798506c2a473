"""Names a package exports from its modules, each module loaded on first use.

passflow's packages (`passflow`, `passflow.executors`, `passflow.instruments`,
`passflow.sliced`) re-export what their users need from many modules; importing
all of them would make every program, and every passflow-opt run, pay for the
executors, instruments and sliced runs it does not use. Each package lists its
names by module and sets `__getattr__ = lazy_exports(__name__, table)` (PEP 562);
its `TYPE_CHECKING` imports tell type checkers the same names.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, modules: Mapping[str, Iterable[str]]
) -> Callable[[str], object]:
    """A module `__getattr__` for `package` that finds each name of `modules`
    (module name to the names it provides) in its module, importing it on
    first use, and binds it in the package. A name whose module is the
    package's submodule of that name (`passflow.ir` for `ir`) is the submodule."""
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> object:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module '{package}' has no attribute '{name}'")
        found = importlib.import_module(module)
        value = found if module == f"{package}.{name}" else getattr(found, name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
