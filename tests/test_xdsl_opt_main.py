"""An xDSL project's `xDSLOptMain` subclass, as projects write them: passflow
registers the dialects and passes it adds or replaces, and nothing else."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.xdsl_opt_main import xDSLOptMain

from passflow import PassManager, RegistrationError, ir, load_plugin, registry
from passflow.xdsl_adapter import XDSLPass
from passflow.xdsl_opt_main_plugin import is_opt_main, registrations_of

EXAMPLE = Path(__file__).parent.parent / "examples" / "xdsl_project_opt.py"
SPEC = f"{EXAMPLE}:ToyOptMain"

TOY = """\
func.func @f(%x: i32) -> i32 {
  %0 = "toy.double"(%x) : (i32) -> i32
  %1 = "toy.double"(%0) : (i32) -> i32
  func.return %1 : i32
}
"""


@dataclass(frozen=True)
class MarkingDCE(ModulePass):
    """A project's own `dce`, replacing xDSL's."""

    name: ClassVar[str] = "dce"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        op.attributes["project.dce"] = builtin.UnitAttr()


Lazy = Dialect("lazyproject", [])


class ReplacingOptMain(xDSLOptMain):
    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        self.ctx.register_dialect("lazyproject", lambda: Lazy)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        self.register_pass("dce", lambda: MarkingDCE)


@pytest.fixture(scope="module")
def toy_loaded() -> None:
    load_plugin(SPEC, opt_main=True)


def test_only_what_the_subclass_adds_is_read() -> None:
    load_plugin(SPEC, opt_main=True)
    tool = registry.lookup_pass("toy-fuse-doubles")
    assert tool is not None
    (toy_main,) = [
        cls for cls in type.__subclasses__(xDSLOptMain) if cls.__name__ == "ToyOptMain"
    ]
    found = registrations_of(toy_main)
    assert list(found.dialects) == ["toy"]
    assert list(found.passes) == ["toy-fuse-doubles"]
    assert found.dialects["toy"]().name == "toy"


def test_its_dialect_parses_and_its_pass_runs(toy_loaded: None) -> None:
    module = ir.parse_module(TOY)
    PassManager.parse("builtin.module(toy-fuse-doubles)").run(module)
    assert '"toy.quad"(%x)' in ir.print_op(module)


def test_its_pass_lists_under_the_plugin(toy_loaded: None) -> None:
    info = registry.lookup_pass("toy-fuse-doubles")
    assert info is not None and issubclass(info.pass_class, XDSLPass)
    assert registry.loaded_plugins()[info.source] == f"plugin {SPEC}"
    assert info.summary == "Fuse `toy.double(toy.double(x))` into `toy.quad(x)`."


@pytest.fixture
def replacing() -> Iterator[None]:
    load_plugin(f"{__name__}:ReplacingOptMain", opt_main=True)
    yield
    registry.unregister("dce")


def test_a_replaced_xdsl_pass_and_a_lazy_dialect(replacing: None) -> None:
    found = registrations_of(ReplacingOptMain)
    assert list(found.passes) == ["dce"] and list(found.dialects) == ["lazyproject"]
    info = registry.lookup_pass("dce")
    assert info is not None and issubclass(info.pass_class, XDSLPass)
    assert info.pass_class.xdsl_class is MarkingDCE
    module = ir.parse_module("")
    PassManager.parse("builtin.module(dce)").run(module)
    assert "project.dce" in ir.print_op(module)
    assert "lazyproject" in ir.registered_dialect_names()


def test_anything_else_is_refused_naming_the_fix() -> None:
    assert not is_opt_main(MarkingDCE) and is_opt_main(ReplacingOptMain)
    with pytest.raises(
        RegistrationError,
        match="is the class MarkingDCE, not an xDSLOptMain subclass; fix: name the class",
    ):
        load_plugin(f"{__name__}:MarkingDCE", opt_main=True)
    with pytest.raises(RegistrationError, match="is a module, not an xDSLOptMain"):
        load_plugin("json", opt_main=True)


def test_the_result_cache_key_holds_the_subclass_file(tmp_path: Path) -> None:
    """An edit to the file of an xDSLOptMain subclass changes the cache key of
    a run that loads it, as an edit to a pass plugin does."""
    from passflow.tools.cache_options import cache_salt
    from passflow.tools.opt import parse_command_line

    tool = tmp_path / "tool.py"
    tool.write_text(EXAMPLE.read_text())
    argv = [f"--load-xdsl-opt-main={tool}:ToyOptMain", "-p", "builtin.module(cse)"]
    before = cache_salt(parse_command_line(argv))
    assert cache_salt(parse_command_line(argv)) == before
    tool.write_text(EXAMPLE.read_text() + "\n# edited\n")
    assert cache_salt(parse_command_line(argv)) != before
