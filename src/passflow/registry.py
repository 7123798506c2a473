"""Registration of passes and pipelines by their textual name.

Textual pipelines, `passflow-opt` flags, reproducers and generated docs all find
passes here. Pipelines are looked up before passes, as in MLIR. Passes of other
packages arrive through the `passflow.passes` entry-point group: each entry point
names a callable (or module) that registers its passes when first needed.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from passflow.diagnostics import OptionError, RegistrationError
from passflow.pass_base import Pass
from passflow.trust import check_pass

if TYPE_CHECKING:
    from passflow.manager import OpPassManager
    from passflow.options import PipelineOptions

__all__ = [
    "PassInfo",
    "PipelineInfo",
    "lookup",
    "lookup_pass",
    "lookup_pipeline",
    "register_pass",
    "register_pipeline",
    "registered_passes",
    "registered_pipelines",
]

ENTRY_POINT_GROUP = "passflow.passes"

PassT = TypeVar("PassT", bound=type[Pass])


@dataclass(frozen=True)
class PassInfo:
    """A registered pass: its textual argument and how to make one."""

    argument: str
    factory: Callable[[], Pass]
    pass_class: type[Pass]
    origin: str

    @property
    def summary(self) -> str:
        return self.pass_class.summary

    def create(self, options: str = "") -> Pass:
        """A new pass with `options` (the text between braces) applied."""
        pass_ = self.factory()
        if options.strip():
            pass_.initialize_options(options)
        check_pass(pass_)
        return pass_


@dataclass(frozen=True)
class PipelineInfo:
    """A registered pipeline: expanded inline into the pass manager it is added to."""

    argument: str
    summary: str
    builder: Callable[..., None]
    options: type[PipelineOptions] | None
    origin: str

    def add_to(self, pm: OpPassManager, options: str = "") -> None:
        """Run the builder on `pm`, with `options` parsed into the options struct."""
        if self.options is None:
            if options.strip():
                raise OptionError(f"pipeline '{self.argument}' takes no options")
            self.builder(pm)
            return
        self.builder(pm, self.options.parse(options))


_passes: dict[str, PassInfo] = {}
_xdsl_adapters: dict[str, PassInfo] = {}
"""xDSL passes adapted on first use; kept apart from `_passes` so that what is
listed as registered does not depend on what was looked up before."""
_pipelines: dict[str, PipelineInfo] = {}
_plugins_loaded = False


def _origin(obj: object) -> str:
    module = getattr(obj, "__module__", "?")
    return f"{module}.{getattr(obj, '__qualname__', type(obj).__name__)}"


def _check_free(argument: str, origin: str) -> None:
    if not argument or any(c in argument for c in " ,(){}"):
        raise RegistrationError(
            f"cannot register {origin}: '{argument}' is not a valid pass argument"
        )
    taken = _passes.get(argument) or _pipelines.get(argument)
    if taken is not None:
        raise RegistrationError(
            f"'{argument}' is already registered by {taken.origin}; "
            f"cannot register {origin} under the same name"
        )


@overload
def register_pass(target: PassT, *, argument: str | None = None) -> PassT: ...
@overload
def register_pass(
    target: Callable[[], Pass], *, argument: str | None = None
) -> Callable[[], Pass]: ...
def register_pass(target: Any, *, argument: str | None = None) -> Any:
    """Register a pass class (use as a decorator) or a factory returning a pass.

    The pass is found by `argument` (default: the class's `argument`). A factory
    is for passes whose constructor needs arguments; it is called once here to
    learn the pass class.
    """
    factory = cast(Callable[[], Pass], target)
    pass_class = target if inspect.isclass(target) else type(factory())
    if not issubclass(pass_class, Pass):
        raise RegistrationError(f"cannot register {_origin(target)}: not a Pass")
    name = argument or pass_class.argument
    origin = _origin(target)
    _check_free(name, origin)
    _passes[name] = PassInfo(name, factory, pass_class, origin)
    return target


def register_pipeline(
    argument: str,
    summary: str,
    builder: Callable[..., None],
    options: type[PipelineOptions] | None = None,
) -> None:
    """Register `builder(pm)` (or `builder(pm, options)`) as pipeline `argument`."""
    origin = _origin(builder)
    _check_free(argument, origin)
    _pipelines[argument] = PipelineInfo(argument, summary, builder, options, origin)


def unregister(argument: str) -> None:
    """Forget a pass or pipeline (for tests and interactive sessions)."""
    _passes.pop(argument, None)
    _pipelines.pop(argument, None)


def load_plugins() -> None:
    """Register the built-in passes and every `passflow.passes` entry point (once)."""
    _load_plugins()


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    # Importing these packages registers the built-in and test passes.
    importlib.import_module("passflow.transforms")
    importlib.import_module("passflow.testing")

    for entry in entry_points(group=ENTRY_POINT_GROUP):
        loaded = entry.load()
        if callable(loaded):
            loaded()


def lookup_pass(argument: str) -> PassInfo | None:
    """The pass registered as `argument`; xDSL's passes come in on first use."""
    _load_plugins()
    found = _passes.get(argument) or _xdsl_adapters.get(argument)
    if found is None:
        from passflow.xdsl_passes import adapter_for

        adapter = adapter_for(argument)
        if adapter is not None:
            found = _xdsl_adapters[argument] = PassInfo(
                argument, adapter, adapter, _origin(adapter.xdsl_class)
            )
    return found


def lookup_pipeline(argument: str) -> PipelineInfo | None:
    _load_plugins()
    return _pipelines.get(argument)


def lookup(argument: str) -> PipelineInfo | PassInfo | None:
    """Pipelines first, then passes: MLIR's resolution order."""
    return lookup_pipeline(argument) or lookup_pass(argument)


def registered_passes() -> Iterator[PassInfo]:
    """Every registered pass, sorted by argument."""
    _load_plugins()
    return iter(sorted(_passes.values(), key=lambda info: info.argument))


def registered_pipelines() -> Iterator[PipelineInfo]:
    _load_plugins()
    return iter(sorted(_pipelines.values(), key=lambda info: info.argument))
