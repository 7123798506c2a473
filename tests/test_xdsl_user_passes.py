"""A user's xDSL `ModulePass`, as xDSL users write it, run by passflow unchanged:
added to a pass manager, registered, loaded from a plugin file, placed by the
builder and the graph, instrumented, run in parallel, and converted to and from
xDSL's `PassPipeline`."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from xdsl.context import Context
from xdsl.dialects import builtin
from xdsl.passes import ModulePass, PassPipeline
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

from passflow import (
    IRPrinterConfig,
    PassflowPass,
    PassManager,
    PassPipelineError,
    PipelineGraph,
    PipelineParseError,
    ProcessExecutor,
    RegistrationError,
    ShippingExecutor,
    ThreadExecutor,
    from_xdsl_pipeline,
    ir,
    load_plugin,
    register_pass,
    registry,
    to_xdsl_pipeline,
)
from passflow.builder import PipelineBuilder
from passflow.xdsl_adapter import XDSLPass, adapt, adapter_class

EXAMPLE = Path(__file__).parent.parent / "examples" / "xdsl_fold_add_zero.py"

ADDS = """\
func.func @f(%x: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  %y = arith.addi %x, %c0 : i32
  func.return %y : i32
}
"""


@pytest.fixture(scope="module")
def fold_add_zero() -> type[ModulePass]:
    """The example plugin's pass class, loaded as `--load-pass-plugin` loads it."""
    load_plugin(str(EXAMPLE))
    info = registry.lookup_pass("fold-add-zero")
    assert info is not None and issubclass(info.pass_class, XDSLPass)
    return info.pass_class.xdsl_class


@dataclass(frozen=True)
class TagFunctions(ModulePass):
    """Put `tag` on every function (a pass written as xDSL users write them)."""

    name: ClassVar[str] = "test-tag-functions"

    tag: str = "seen"
    times: int = 1
    sizes: tuple[int, ...] = ()

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for func in op.walk():
            if func.name == "func.func":
                func.attributes[self.tag] = builtin.IntegerAttr(self.times, 32)


@dataclass(frozen=True)
class NeedsLabel(ModulePass):
    name: ClassVar[str] = "test-needs-label"

    label: str

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        op.attributes["label"] = builtin.StringAttr(self.label)


@pytest.fixture
def tag_registered() -> Iterator[None]:
    register_pass(TagFunctions)
    yield
    registry.unregister(TagFunctions.name)


def run(pm: PassManager, text: str = ADDS) -> str:
    module = ir.parse_module(text)
    pm.run(module)
    return ir.print_op(module)


def test_pm_add_takes_an_instance_as_it_is() -> None:
    pm = PassManager()
    pm.add(TagFunctions(tag="hot", times=3))
    assert str(pm) == 'builtin.module(test-tag-functions{tag="hot" times=3})'
    assert "hot = 3 : i32" in run(pm)


def test_pm_add_takes_a_class_with_its_defaults() -> None:
    pm = PassManager()
    pm.add(TagFunctions)
    assert str(pm) == "builtin.module(test-tag-functions)"
    assert "seen = 1 : i32" in run(pm)


def test_a_class_with_required_fields_names_them_and_the_fix() -> None:
    with pytest.raises(TypeError, match=r"required fields \(label\); fix: give an"):
        PassManager().add(NeedsLabel)
    pm = PassManager()
    pm.add(NeedsLabel(label="x"))
    assert 'label = "x"' in run(pm)


def test_one_adapter_class_per_xdsl_class() -> None:
    first, second = adapt(TagFunctions()), adapt(TagFunctions(tag="b"))
    assert type(first) is type(second) is adapter_class(TagFunctions)
    assert first.argument == "test-tag-functions" and first.name == "TagFunctions"
    assert (
        first.summary
        == "Put `tag` on every function (a pass written as xDSL users write them)."
    )
    assert first.op_name == "builtin.module"


def test_registered_class_takes_options_in_both_syntaxes(tag_registered: None) -> None:
    mlir_style = PassManager.parse(
        "builtin.module(test-tag-functions{tag=hot times=2 sizes=1,2})"
    )
    xdsl_style = PassManager.parse(
        'builtin.module(test-tag-functions{tag="hot" times=2 sizes=1,2})'
    )
    expected = TagFunctions(tag="hot", times=2, sizes=(1, 2))
    for pm in (mlir_style, xdsl_style):
        (pass_,) = pm.passes
        assert isinstance(pass_, XDSLPass) and pass_.xdsl_pass == expected
    printed = str(mlir_style)
    assert printed == 'builtin.module(test-tag-functions{tag="hot" times=2 sizes=1,2})'
    assert str(PassManager.parse(printed)) == printed


def test_bad_options_are_option_errors(tag_registered: None) -> None:
    with pytest.raises(PipelineParseError, match=r'Provided arguments \["bogus"\]'):
        PassManager.parse("builtin.module(test-tag-functions{bogus=1})")
    with pytest.raises(PipelineParseError, match="Incompatible types"):
        PassManager.parse("builtin.module(test-tag-functions{times=many})")


def test_register_pass_as_decorator_and_factory() -> None:
    assert register_pass(TagFunctions, argument="tag-by-decorator") is TagFunctions
    register_pass(lambda: TagFunctions(tag="made"), argument="tag-by-factory")
    try:
        factory_info = registry.lookup_pass("tag-by-factory")
        assert factory_info is not None
        made = factory_info.create()
        assert isinstance(made, XDSLPass)
        assert made.xdsl_pass == TagFunctions(tag="made")
        assert factory_info.pass_class is adapter_class(TagFunctions)
    finally:
        registry.unregister("tag-by-decorator")
        registry.unregister("tag-by-factory")
    with pytest.raises(RegistrationError, match="not a Pass nor an xDSL ModulePass"):
        register_pass(int)  # pyright: ignore[reportArgumentType, reportCallIssue]


def test_a_plugin_file_registers_its_module_passes(
    fold_add_zero: type[ModulePass],
) -> None:
    info = registry.lookup_pass("fold-add-zero")
    assert info is not None
    assert info.source == str(EXAMPLE.resolve())
    assert info.summary.startswith("Replace `arith.addi %x, %zero`")
    # Classes it only imports (xDSL's ModulePass, the pattern) are not registered.
    assert registry.lookup_pass("FoldAddZero") is None
    pm = PassManager.parse("builtin.module(fold-add-zero)")
    assert "arith.addi" not in run(pm)


def test_a_failure_exception_fails_the_pass_with_its_message(
    fold_add_zero: type[ModulePass],
) -> None:
    pm = PassManager()
    pm.add(fold_add_zero(fail_on="f"))  # pyright: ignore[reportCallIssue]
    with pytest.raises(PassPipelineError) as raised:
        run(pm)
    assert [d.message for d in raised.value.diagnostics] == [
        "fold-add-zero: refusing 'f'"
    ]


def test_timing_and_ir_printing_name_the_xdsl_pass(
    fold_add_zero: type[ModulePass],
) -> None:
    pm = PassManager()
    pm.add(fold_add_zero())
    timing, printed = io.StringIO(), io.StringIO()
    pm.enable_timing(stream=timing)
    pm.enable_ir_printing(IRPrinterConfig(after=("fold-add-zero",), stream=printed))
    run(pm)
    assert "FoldAddZeroPass" in timing.getvalue()
    assert (
        "// -----// IR Dump After FoldAddZeroPass (fold-add-zero) //----- //"
        in printed.getvalue()
    )


def test_crash_reproducer_names_the_pass_with_its_options(
    fold_add_zero: type[ModulePass], tmp_path: Path
) -> None:
    pm = PassManager()
    pm.add(fold_add_zero(crash=True))  # pyright: ignore[reportCallIssue]
    reproducer = tmp_path / "repro.mlir"
    pm.enable_crash_reproducer(str(reproducer))
    with pytest.raises(PassPipelineError, match="reproducer generated at"):
        run(pm)
    assert 'pipeline: "builtin.module(fold-add-zero{crash=true})"' in (
        reproducer.read_text()
    )


NESTED = (
    """\
builtin.module {
  builtin.module {
"""
    + ADDS
    + """\
  }
  builtin.module {
"""
    + ADDS.replace("@f", "@g")
    + """\
  }
}
"""
)


@pytest.mark.parametrize("kind", ["thread", "process", "process-pool"])
def test_nested_modules_run_in_parallel_as_serially(
    kind: str, process_pool: ProcessPoolExecutor
) -> None:
    make: dict[str, Callable[[], object]] = {
        "thread": lambda: ThreadExecutor(2),
        "process": lambda: ProcessExecutor(2, serial_budget=0),
        "process-pool": lambda: ShippingExecutor(process_pool, jobs=2),
    }
    serial = PassManager()
    serial.nest("builtin.module").add(TagFunctions(tag="t", times=7))
    expected = run(serial, NESTED)
    assert expected.count("t = 7 : i32") == 2
    parallel = PassManager(executor=make[kind]())  # pyright: ignore[reportArgumentType]
    parallel.nest("builtin.module").add(TagFunctions(tag="t", times=7))
    assert run(parallel, NESTED) == expected


def test_clones_run_their_own_copy_with_the_same_options() -> None:
    pass_ = adapt(TagFunctions(tag="c", sizes=(3,)))
    clone = pass_.clone()
    assert clone.xdsl_pass == pass_.xdsl_pass
    assert clone.xdsl_pass is not pass_.xdsl_pass


def test_the_builder_places_module_passes_and_anchors_on_their_class() -> None:
    builder = PipelineBuilder("builtin.module")
    builder.add(TagFunctions(tag="first"))
    builder.add("cse")
    builder.insert_after(TagFunctions, TagFunctions, kinds=())
    builder.insert_before(NeedsLabel(label="l"), "cse")
    assert str(builder.build()) == (
        'builtin.module(test-tag-functions{tag="first"},test-tag-functions,'
        'test-needs-label{label="l"},cse)'
    )


def test_a_graph_stage_takes_a_module_pass_or_an_xdsl_pipeline() -> None:
    graph = PipelineGraph("xdsl-stages")
    graph.register_pipeline("tag", populate=TagFunctions(tag="g"))
    graph.register_pipeline(
        "clean", predecessors=["tag"], populate=PassPipeline((DeadCodeElimination(),))
    )
    schedule = graph.create_schedule()
    module = ir.parse_module(ADDS)
    schedule.run(module)
    assert "g = 1 : i32" in ir.print_op(module)


def test_xdsl_pipeline_converts_to_a_pass_manager_and_back() -> None:
    pipeline = PassPipeline((TagFunctions(tag="a"), DeadCodeElimination()))
    pm = from_xdsl_pipeline(pipeline)
    assert str(pm) == 'builtin.module(test-tag-functions{tag="a"},dce)'
    assert to_xdsl_pipeline(pm).passes == pipeline.passes
    by_xdsl = ir.parse_module(ADDS)
    pipeline.apply(ir.default_context(), by_xdsl)
    assert run(pm) == ir.print_op(by_xdsl)


def test_passflow_passes_become_passflow_module_passes_and_come_back() -> None:
    pm = PassManager.parse("builtin.module(func.func(canonicalize),cse)")
    pm.add(TagFunctions(tag="z"))
    pipeline = to_xdsl_pipeline(pm)
    first, second, third = pipeline.passes
    assert first == PassflowPass(pipeline=str(pm.passes[0]))
    assert str(first).startswith('passflow{pipeline="func.func(canonicalize{')
    assert str(second) == 'passflow{pipeline="cse"}'
    assert third == TagFunctions(tag="z")
    assert str(from_xdsl_pipeline(pipeline)) == str(pm)
    module = ir.parse_module(ADDS)
    pipeline.apply(ir.default_context(), module)
    assert "arith.addi" not in ir.print_op(module)


def test_the_xdsl_callback_is_called_as_xdsl_calls_it() -> None:
    def record(calls: list[tuple[object, object]]) -> Callable[..., None]:
        def callback(
            previous: ModulePass | None,
            op: builtin.ModuleOp,
            upcoming: ModulePass | None,
        ) -> None:
            calls.append((previous, upcoming))

        return callback

    passes = (
        TagFunctions(),
        PassflowPass(pipeline="cse,canonicalize"),
        DeadCodeElimination(),
    )
    by_xdsl: list[tuple[object, object]] = []
    PassPipeline(passes, record(by_xdsl)).apply(
        ir.default_context(), ir.parse_module(ADDS)
    )
    by_passflow: list[tuple[object, object]] = []
    pm = from_xdsl_pipeline(PassPipeline(passes, record(by_passflow)))
    run(pm)
    assert by_passflow == by_xdsl and len(by_xdsl) == 4


def test_only_module_anchored_pipelines_convert_to_xdsl() -> None:
    with pytest.raises(ValueError, match=r"anchored on 'func\.func'"):
        to_xdsl_pipeline(PassManager("func.func"))


def test_the_example_plugin_imports_no_passflow() -> None:
    """It is an xDSL user's file as it is."""
    imports = [
        line
        for line in EXAMPLE.read_text().splitlines()
        if line.startswith(("import", "from"))
    ]
    assert imports and not any("passflow" in line for line in imports)


def test_a_clone_keeps_what_the_instance_holds_beside_its_fields() -> None:
    held = PassflowPass.of(adapt(TagFunctions(tag="inner")))
    clone = adapt(held).clone()
    assert isinstance(clone.xdsl_pass, PassflowPass)
    assert clone.xdsl_pass.passflow_pass is held.passflow_pass
    module = ir.parse_module(ADDS)
    pm = PassManager()
    pm.add(clone)
    pm.run(module)
    assert "inner = 1 : i32" in ir.print_op(module)
