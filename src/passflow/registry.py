"""Registration of passes and pipelines by their textual name.

Textual pipelines, `passflow-opt` flags, reproducers and generated docs all find
passes here. Pipelines are looked up before passes, as in MLIR.

The registry names none of the passes it holds: they come in through one
mechanism, plugins (`load_plugin`). A plugin is a `"module:function"` that
registers passes, pipelines or dialects when called, a module (its `register()`,
if it has one, is called after import; without one, the xDSL dialects and
`ModulePass` classes it defines are registered), or a `.py` file. passflow's own passes
are two such plugins, which the tool loads as mlir-opt calls
`registerAllPasses()` (`passflow.register_all_passes`); installed packages
declare theirs as entry points of the `passflow.passes` group (passflow declares
its own there too), which are loaded when a name is not known or every pass is
listed. Each registration remembers the plugin it came from (`PassInfo.source`,
its spec; `loaded_plugins()` gives its title), so listings group passes by
where they come from, whoever loaded the plugin first.

A name may be registered lazily (`register_lazy`): only the module and the name of
what it registers are recorded, and the module (with the xDSL dialects and
patterns it imports) is imported when a pipeline first names it, or when a listing
needs every pass. The built-in and test passes are registered this way, so a run
pays in start-up time and memory only for the passes it uses.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Callable, Generator, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast, overload

from xdsl.passes import ModulePass

from passflow import ir
from passflow.diagnostics import OptionError, RegistrationError
from passflow.manager import OpPassManager
from passflow.options import PipelineOptions
from passflow.pass_base import Pass
from passflow.plugin_identity import plugin_key
from passflow.trust import check_pass
from passflow.xdsl_adapter import adapt, adapter_class
from passflow.xdsl_passes import adapter_for

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = [
    "PassInfo",
    "PipelineInfo",
    "PluginFailure",
    "entry_point_origin",
    "load_entry_points",
    "load_plugin",
    "load_plugins",
    "loaded_plugins",
    "lookup",
    "lookup_pass",
    "lookup_pipeline",
    "only_passflow_registered",
    "plugins_loaded",
    "register_lazy",
    "register_pass",
    "register_pipeline",
    "registered_by",
    "registered_passes",
    "registered_pipelines",
    "unregister",
]

ENTRY_POINT_GROUP = "passflow.passes"

PassT = TypeVar("PassT", bound=type[Pass])
ModulePassT = TypeVar("ModulePassT", bound=type[ModulePass])


@dataclass(frozen=True)
class PassInfo:
    """A registered pass: its textual argument and how to make one."""

    argument: str
    factory: Callable[[], Pass]
    pass_class: type[Pass]
    origin: str
    source: str = ""
    """The plugin that registered it, as `loaded_plugins()` keys it ("" for the
    program itself)."""

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
    source: str = ""
    """The plugin that registered it, as `loaded_plugins()` keys it ("" for the
    program itself)."""

    def add_to(self, pm: OpPassManager, options: str = "") -> None:
        """Run the builder on `pm`, with `options` parsed into the options struct."""
        if self.options is None:
            if options.strip():
                raise OptionError(f"pipeline '{self.argument}' takes no options")
            self.builder(pm)
            return
        self.builder(pm, self.options.parse(options))


@dataclass(frozen=True)
class _Lazy:
    """A name registered by `register_lazy`, whose module is not imported yet."""

    argument: str
    module: str
    name: str
    source: str

    @property
    def origin(self) -> str:
        return f"{self.module}.{self.name}"


_passes: dict[str, PassInfo] = {}
_xdsl_adapters: dict[str, PassInfo] = {}
"""xDSL passes adapted on first use; kept apart from `_passes` so that what is
listed as registered does not depend on what was looked up before."""
_pipelines: dict[str, PipelineInfo] = {}
_lazy: dict[str, _Lazy] = {}
_plugins: dict[str, str] = {}
"""Each plugin loaded, by its spec (a file as its absolute path), with its title."""
_source = ""
"""The plugin registering now, as `_plugins` keys it (`_registering`)."""
_plugins_loaded = False
_plugins_loading = False


def _origin(obj: object) -> str:
    module = getattr(obj, "__module__", "?")
    return f"{module}.{getattr(obj, '__qualname__', type(obj).__name__)}"


def _claim(argument: str, origin: str) -> None:
    """Check that `argument` is free for `origin`, or lazily registered by it."""
    if not argument or any(c in argument for c in " ,(){}"):
        raise RegistrationError(
            f"cannot register {origin}: '{argument}' is not a valid pass argument"
        )
    lazy = _lazy.get(argument)
    if lazy is not None and lazy.origin == origin:
        return
    taken = _passes.get(argument) or _pipelines.get(argument) or lazy
    if taken is not None:
        raise RegistrationError(
            f"'{argument}' is already registered by {taken.origin}; "
            f"cannot register {origin} under the same name"
        )


@overload
def register_pass(target: PassT, *, argument: str | None = None) -> PassT: ...
@overload
def register_pass(
    target: ModulePassT, *, argument: str | None = None
) -> ModulePassT: ...
@overload
def register_pass(
    target: Callable[[], Pass | ModulePass], *, argument: str | None = None
) -> Callable[[], Pass | ModulePass]: ...
def register_pass(target: Any, *, argument: str | None = None) -> Any:
    """Register a pass class (use as a decorator) or a factory returning a pass.

    The pass is found by `argument` (default: the class's `argument`). A factory
    is for passes whose constructor needs arguments; it is called once here to
    learn the pass class. An xDSL `ModulePass` class, or a factory of xDSL
    passes, registers as it is: its `name` is its argument, its fields its
    options (`passflow.xdsl_adapter`).
    """
    origin = _origin(target)
    factory = cast(Callable[[], object], target)
    if inspect.isclass(target):
        pass_class = cast(type, target)
    else:
        made = factory()
        pass_class = type(made)
        if isinstance(made, ModulePass):
            made_by = cast(Callable[[], ModulePass], target)
            factory = lambda: adapt(made_by())  # noqa: E731
    if issubclass(pass_class, ModulePass):
        pass_class = adapter_class(pass_class)
        if inspect.isclass(target):
            factory = pass_class
    if not issubclass(pass_class, Pass):
        raise RegistrationError(
            f"cannot register {origin}: not a Pass nor an xDSL ModulePass"
        )
    name = argument or pass_class.argument
    _claim(name, origin)
    _passes[name] = PassInfo(
        name, cast(Callable[[], Pass], factory), pass_class, origin, _source_of(name)
    )
    _lazy.pop(name, None)
    return target


def register_pipeline(
    argument: str,
    summary: str,
    builder: Callable[..., None],
    options: type[PipelineOptions] | None = None,
) -> None:
    """Register `builder(pm)` (or `builder(pm, options)`) as pipeline `argument`."""
    origin = _origin(builder)
    _claim(argument, origin)
    _pipelines[argument] = PipelineInfo(
        argument, summary, builder, options, origin, _source_of(argument)
    )
    _lazy.pop(argument, None)


def register_lazy(argument: str, target: str) -> None:
    """Register `argument` without importing what implements it, to keep start-up
    cheap: `target` is `"package.module:Name"`, the pass class (or factory) or
    pipeline builder that importing the module registers under `argument`.

    The module is imported when `argument` is first looked up, or when every
    pass is listed. A pass class its module does not register itself is
    registered then, as `register_pass(Name, argument=argument)` would.
    """
    module, _, name = target.partition(":")
    if not module or not name:
        raise RegistrationError(
            f"cannot register '{argument}' lazily: '{target}' is not 'module:Name'"
        )
    lazy = _Lazy(argument, module, name, _source)
    registered = _passes.get(argument) or _pipelines.get(argument)
    if registered is not None and registered.origin == lazy.origin:
        # Its module was imported first; it is this plugin's all the same.
        if _source and not registered.source:
            if isinstance(registered, PassInfo):
                _passes[argument] = replace(registered, source=_source)
            else:
                _pipelines[argument] = replace(registered, source=_source)
        return
    _claim(argument, lazy.origin)
    _lazy[argument] = lazy


def _import_lazy(argument: str) -> None:
    """Import what `argument` was lazily registered as, if it still is lazy."""
    lazy = _lazy.get(argument)
    if lazy is None:
        return
    module = importlib.import_module(lazy.module)
    if _lazy.get(argument) is not lazy:
        return  # its module registered it
    target = getattr(module, lazy.name, None)
    if inspect.isclass(target) and issubclass(target, ModulePass):
        target = adapter_class(target)
    if not (inspect.isclass(target) and issubclass(target, Pass)):
        raise RegistrationError(
            f"'{argument}' was registered as {lazy.origin}, but importing "
            f"{lazy.module} did not register it and it is not a pass class nor an xDSL ModulePass"
        )
    _passes[argument] = PassInfo(argument, target, target, lazy.origin, lazy.source)
    _lazy.pop(argument, None)


def _source_of(argument: str) -> str:
    """The plugin registering `argument`: the one loading now, or the one that
    registered it lazily (its module is being imported)."""
    lazy = _lazy.get(argument)
    return lazy.source if lazy is not None and not _source else _source


def unregister(argument: str) -> None:
    """Forget a pass or pipeline (for tests and interactive sessions)."""
    _passes.pop(argument, None)
    _pipelines.pop(argument, None)
    _lazy.pop(argument, None)


@dataclass(frozen=True)
class PluginFailure:
    """A plugin that failed: its name, the entry point and distribution it comes
    from (None for one given in code), and the exception it raised."""

    name: str
    entry_point: str | None
    distribution: str | None
    error: BaseException

    @classmethod
    def of(cls, entry: EntryPoint, error: BaseException) -> PluginFailure:
        return cls(entry.name, *entry_point_origin(entry), error)

    def __str__(self) -> str:
        """`'name' (entry point ..., distribution ...): KeyError: 'x'`."""
        where = [f"entry point {self.entry_point}"] if self.entry_point else []
        if self.distribution:
            where.append(f"distribution {self.distribution}")
        origin = f" ({', '.join(where)})" if where else ""
        return f"'{self.name}'{origin}: {type(self.error).__name__}: {self.error}"


def entry_point_origin(entry: EntryPoint) -> tuple[str, str | None]:
    """Where an entry point comes from, for messages: `'name = module:attr' in
    group 'g'`, and its distribution, `name version` (None if unknown)."""
    dist = getattr(entry, "dist", None)
    distribution = None if dist is None else f"{dist.name} {dist.version}"
    return f"'{entry.name} = {entry.value}' in group '{entry.group}'", distribution


def entry_points(group: str) -> Iterable[EntryPoint]:
    """The installed entry points of `group`."""
    # importlib.metadata (email, zipfile, csv, ...) and the scan of every
    # installed distribution cost 10-25 ms: only a run that needs plugins pays.
    from importlib import metadata

    return metadata.entry_points(group=group)


def load_entry_points(
    group: str,
) -> tuple[list[tuple[EntryPoint, object]], list[PluginFailure]]:
    """Load every entry point of `group`: what each loaded, and the ones that
    failed to import (each failure kept, so that one broken package does not
    stop the others)."""
    loaded: list[tuple[EntryPoint, object]] = []
    failures: list[PluginFailure] = []
    for entry in entry_points(group=group):
        try:
            loaded.append((entry, entry.load()))
        except Exception as err:
            failures.append(PluginFailure.of(entry, err))
    return loaded, failures


def plugins_loaded() -> bool:
    """Whether every `passflow.passes` plugin has been loaded, so the registry
    holds everything it will hold (False while they load)."""
    return _plugins_loaded and not _plugins_loading


def only_passflow_registered() -> bool:
    """Whether every name registered so far is passflow's own (its built-in
    and test passes and pipelines) and no other plugin was loaded: then a
    pipeline's text and passflow's source alone decide what it runs (the
    result cache keys such a pipeline without building it)."""
    if _plugins_loaded or _xdsl_adapters:
        return False
    if not all(key.startswith("passflow.") for key in _plugins):
        return False  # a plugin's passes or dialects may change any result
    registered: list[PassInfo | PipelineInfo | _Lazy] = [
        *_passes.values(),
        *_pipelines.values(),
        *_lazy.values(),
    ]
    return all(entry.origin.startswith("passflow.") for entry in registered)


@contextmanager
def _registering(key: str) -> Generator[None]:
    """Attribute what is registered in the block to the plugin `key`."""
    global _source
    outer, _source = _source, key
    try:
        yield
    finally:
        _source = outer


def load_plugin(spec: str, title: str | None = None, *, opt_main: bool = False) -> str:
    """Load the plugin `spec` once and return its title.

    `spec` is a `"module:function"` (the function is called), a
    `"module:Class"` naming an xDSL `xDSLOptMain` subclass (the dialects and
    passes it registers are registered), a module (imported;
    its `register()` is called if it has one, else the xDSL dialects and
    `ModulePass` classes it defines are registered) or a path to a `.py` file (run as a module, then the same).
    What it registers, at import or in the call, is listed under `title` (by
    default `plugin <spec>`). A plugin that fails to load raises
    `RegistrationError` naming it and what it raised; what it registered before
    failing stays registered. With `opt_main`, `spec` must name an
    `xDSLOptMain` subclass (`passflow-opt --load-xdsl-opt-main`).
    """
    key = plugin_key(spec)

    def load() -> None:
        plugin = _import(key)
        if opt_main and not _is_opt_main_class(plugin):
            raise RegistrationError(
                f"'{spec}' is {_describe(plugin)}, not an xDSLOptMain subclass; "
                "fix: name the class, as 'package.module:MyOptMain' or "
                "'file.py:MyOptMain'"
            )
        _run(plugin)

    return _load(key, title or f"plugin {spec}", load)


def _describe(obj: object) -> str:
    if inspect.ismodule(obj):
        return "a module"
    if inspect.isclass(obj):
        return f"the class {obj.__qualname__}"
    return f"a {type(obj).__name__}"


def _load(key: str, title: str, load: Callable[[], None]) -> str:
    loaded = _plugins.get(key)
    if loaded is not None:
        return loaded
    _plugins[key] = title
    try:
        with _registering(key):
            load()
    except Exception as err:
        del _plugins[key]
        raise RegistrationError(
            f"cannot load plugin '{key}': {type(err).__name__}: {err}"
        ) from err
    return title


def _import(key: str) -> object:
    """What `key` names: a file's or a module's module, or a function (or
    class) of either (`module:name`, `file.py:name`)."""
    if key.endswith(".py"):
        return _import_file(key)
    module_name, _, function = (
        key.rpartition(":") if ".py:" in key else key.partition(":")
    )
    found: object = (
        _import_file(module_name)
        if module_name.endswith(".py")
        else importlib.import_module(module_name.strip())
    )
    for part in function.split("[")[0].strip().split(".") if function else ():
        found = getattr(found, part)
    return found


def _run(plugin: object) -> None:
    """Call a plugin function, or a plugin module's `register()`; a module
    without one registered its passes when imported, or has its xDSL dialects
    and passes registered here."""
    if inspect.ismodule(plugin):
        register = getattr(plugin, "register", None)
        if register is None:
            _register_definitions_of(plugin)
            return
        plugin = register
    if _is_opt_main_class(plugin):
        _register_opt_main(plugin)
        return
    if not callable(plugin):
        raise RegistrationError(f"{plugin!r} is not a function")
    plugin()


def _is_opt_main_class(plugin: object) -> bool:
    """Whether `plugin` is an xDSL `xDSLOptMain` subclass (told by its bases'
    names, so that other plugins do not import xDSL's driver)."""
    return inspect.isclass(plugin) and any(
        base.__name__ == "xDSLOptMain" and base.__module__ == "xdsl.xdsl_opt_main"
        for base in plugin.__mro__
    )


def _register_opt_main(tool: object) -> None:
    """Register the dialects and passes an `xDSLOptMain` subclass adds or
    replaces (`passflow.xdsl_opt_main_plugin`)."""
    # xDSL's driver, and the scan of installed xDSL universes it makes, cost a
    # few dozen modules: only a plugin that is an xDSLOptMain pays for them.
    from passflow.xdsl_opt_main_plugin import is_opt_main, registrations_of

    if not is_opt_main(tool):
        raise RegistrationError(f"{tool!r} is not an xDSLOptMain subclass")
    found = registrations_of(cast(Any, tool))
    for name, dialect in found.dialects.items():
        ir.register_dialect(name, dialect)
    for name, factory in found.passes.items():
        xdsl_class = factory()
        registered = _passes.get(name)
        if registered is None or registered.origin != _origin(xdsl_class):
            register_pass(xdsl_class, argument=name)


def _register_definitions_of(module: object) -> None:
    """Register each xDSL dialect `module` defines (one of its ops or attributes
    is a class of the module) and each xDSL `ModulePass` class it defines with
    a `name` of its own (one that `register_pass` did not register at import):
    a file of xDSL dialects and passes is a plugin as it is."""
    name = getattr(module, "__name__", None)
    for value in list(vars(module).values()):
        if isinstance(value, ir.Dialect) and any(
            definition.__module__ == name
            for definition in (*value.operations, *value.attributes)
        ):
            ir.register_dialect(value.name, value)
        elif (
            inspect.isclass(value)
            and issubclass(value, ModulePass)
            and value.__module__ == name
            and isinstance(value.__dict__.get("name"), str)
            and not inspect.isabstract(value)
        ):
            registered = _passes.get(value.name)
            if registered is None or registered.origin != _origin(value):
                register_pass(value)


def _import_file(path: str) -> object:
    """Run the file `path` as a module of its own name (stable for a path, so a
    worker that loads the same file can unpickle what the module defines)."""
    if not Path(path).is_file():
        raise FileNotFoundError("no such file")
    digest = hashlib.sha256(path.encode()).hexdigest()[:12]
    name = f"passflow_plugin_{Path(path).stem.replace('-', '_')}_{digest}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import '{path}' as a module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def loaded_plugins() -> dict[str, str]:
    """Every plugin loaded so far, by spec, with its title (in load order): what a
    worker process loads to register what its parent registered."""
    return dict(_plugins)


def load_plugins() -> None:
    """Load every `passflow.passes` entry point not loaded yet (once).

    Lookups load them only when they need them: for a name that is not
    registered (a plugin may register it, or shadow an xDSL pass of that name)
    and for a registered pipeline (a plugin may extend it, as `extend_graph`
    does), so that a run of registered passes never scans the installed
    distributions. Listings load them all.

    Every plugin is loaded even when one fails; the failures are then raised
    together as one `RegistrationError` naming each plugin, its entry point and
    distribution, and what it raised. The plugins that loaded stay registered.
    """
    global _plugins_loaded, _plugins_loading
    if _plugins_loaded:
        return
    _plugins_loaded = True
    _plugins_loading = True
    failures: list[PluginFailure] = []
    try:
        for entry in entry_points(group=ENTRY_POINT_GROUP):
            origin, distribution = entry_point_origin(entry)
            title = f"plugin {distribution or origin}"
            try:
                _load(entry.value, title, lambda entry=entry: _run(entry.load()))
            except RegistrationError as err:
                failures.append(PluginFailure.of(entry, err.__cause__ or err))
    finally:
        _plugins_loading = False
    if failures:
        listed = "\n".join(f"- plugin {failure}" for failure in failures)
        raise RegistrationError(
            f"{len(failures)} {ENTRY_POINT_GROUP} plugin"
            f"{'s' * (len(failures) > 1)} failed to load; the others are "
            f"registered:\n{listed}\n  fix: reinstall or fix the packages named, "
            "or uninstall them"
        ) from failures[0].error


def _prepare(argument: str) -> None:
    """Make `argument` ready to be looked up: the plugins loaded if it is not
    registered (`load_plugins`), and its module imported if it was registered
    lazily."""
    if argument not in _lazy and argument not in _passes and argument not in _pipelines:
        load_plugins()
    _import_lazy(argument)


def lookup_pass(argument: str) -> PassInfo | None:
    """The pass registered as `argument`; xDSL's passes come in on first use."""
    _prepare(argument)
    found = _passes.get(argument) or _xdsl_adapters.get(argument)
    if found is None:
        adapter = adapter_for(argument)
        if adapter is not None:
            found = _xdsl_adapters[argument] = PassInfo(
                argument, adapter, adapter, _origin(adapter.xdsl_class)
            )
    return found


def lookup_pipeline(argument: str) -> PipelineInfo | None:
    _prepare(argument)
    if argument in _pipelines:
        load_plugins()  # they may extend it
    return _pipelines.get(argument)


def lookup(argument: str) -> PipelineInfo | PassInfo | None:
    """Pipelines first, then passes: MLIR's resolution order."""
    return lookup_pipeline(argument) or lookup_pass(argument)


def _import_all() -> None:
    load_plugins()
    for argument in list(_lazy):
        _import_lazy(argument)


def registered_passes() -> Iterator[PassInfo]:
    """Every registered pass, sorted by argument (lazily registered ones imported)."""
    _import_all()
    return iter(sorted(_passes.values(), key=lambda info: info.argument))


def registered_pipelines() -> Iterator[PipelineInfo]:
    """Every registered pipeline, sorted by argument (lazily registered ones imported)."""
    _import_all()
    return iter(sorted(_pipelines.values(), key=lambda info: info.argument))


def registered_by(spec: str) -> list[str]:
    """The passes and pipelines the plugin `spec` registered, sorted, without
    importing any: a pass plugin that gave none was most likely written
    without `@register_pass` or `register()`, and the tool says so."""
    key = plugin_key(spec)
    entries: list[PassInfo | PipelineInfo | _Lazy] = [
        *_passes.values(),
        *_pipelines.values(),
        *_lazy.values(),
    ]
    return sorted(entry.argument for entry in entries if entry.source == key)
