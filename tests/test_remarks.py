"""Optimization remarks: the pass API, the engine's filters, policies and ids, the
YAML format, remarks from every executor, and passflow-opt's remark flags."""

from __future__ import annotations

import io
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from xdsl.dialects.builtin import IntegerAttr, i32

from passflow import ir
from passflow.diagnostics import (
    UNKNOWN_LOCATION,
    Diagnostic,
    DiagnosticEngine,
    Location,
    PassflowError,
    PassPipelineError,
    Severity,
)
from passflow.execution import ChildExecutor
from passflow.executors import SerialExecutor, ThreadExecutor
from passflow.executors.forking import ProcessExecutor
from passflow.executors.shipping import ShippingExecutor
from passflow.output_file import OutputFileError
from passflow.pass_base import OperationPass
from passflow.pass_manager import PassManager
from passflow.pipeline_text import parse_pass_pipeline
from passflow.remarks import (
    InFlightRemark,
    Remark,
    RemarkArg,
    RemarkCategories,
    RemarkEngine,
    RemarkKind,
    RemarkOpts,
    RemarkPolicy,
    YamlRemarkStreamer,
    add,
    metric,
    reason,
    remark_yaml,
    suggest,
)
from passflow.testing.remark_passes import TestRemarkPass
from passflow.tools import opt

FUNCTIONS = """\
func.func @c() {
  return loc("b.c":1:1)
} loc("a.c":30:1)
func.func @a() {
  return loc("a.c":11:1)
} loc("a.c":10:1)
func.func @b() {
  return loc("n"("a.c":20:1))
} loc(fused["a.c":10:5, "x"])
func.func @d() {
  return loc(unknown)
} loc("a.c":25:1)
"""

EVERYTHING = RemarkCategories(all=".*")


def at(line: int, column: int = 1, file: str = "a.c") -> Location:
    return Location(file, line, column)


class EmitRemarks(OperationPass):
    """Runs `body(self)` on every function: a pass written for one test."""

    __test__ = False
    argument = "emit-remarks"
    op_name = "func.func"

    def __init__(self, body: Callable[[OperationPass], None]) -> None:
        super().__init__()
        self.body = body

    def run_on_operation(self) -> None:
        self.body(self)


def run(
    module: ir.Operation,
    engine: RemarkEngine | None,
    pipeline: str | None = None,
    *,
    body: Callable[[OperationPass], None] | None = None,
    executor: ChildExecutor | None = None,
) -> list[Diagnostic]:
    """Run on `module` with `engine`; every diagnostic delivered, in order."""
    pm = PassManager("builtin.module", executor=executor)
    if pipeline is not None:
        pm.assign(parse_pass_pipeline(pipeline))
    if body is not None:
        pm.nest("func.func").add(EmitRemarks(body))
    delivered: list[Diagnostic] = []
    pm.add_diagnostic_handler(delivered.append)
    pm.enable_remarks(engine)
    pm.run(module)
    return delivered


def messages(diagnostics: list[Diagnostic]) -> list[str]:
    return [str(d) for d in diagnostics]


# --- messages ---------------------------------------------------------------------


def test_message_is_mlirs_with_arguments_sorted_by_key() -> None:
    remark = Remark(
        RemarkKind.MISSED,
        at(1),
        "unroll",
        "loop",
        "inner",
        "main",
        [
            RemarkArg("Remark", "not unrolled"),
            RemarkArg("Reason", "tripCount=4 < threshold=256"),
            RemarkArg("Count", "4"),
            RemarkArg("Shape", "{1,2}"),
        ],
    )
    assert remark.message() == (
        "[Missed] unroll | Category:loop:inner | Function=main | Count=4, "
        'Reason="tripCount=4 < threshold=256", Remark="not unrolled", '
        'Shape="{1,2}"'
    )


def test_message_without_category_function_or_arguments() -> None:
    remark = Remark(RemarkKind.FAILURE, at(1), "", "", "sub")
    assert remark.message() == "[Failure]  | Category:sub | "
    assert Remark(RemarkKind.PASSED, at(1), "x").message() == "[Passed] x | "


def test_metric_values_print_as_mlir_prints_them() -> None:
    values = [
        metric("On", True).resolve(),
        metric("Count", -3).resolve(),
        metric("Ratio", 1.5).resolve(),
        metric("Big", float("inf")).resolve(),
        metric("Attr", IntegerAttr(4, i32)).resolve(),
        metric("Type", i32).resolve(),
    ]
    assert [(a.key, a.value) for a in values] == [
        ("On", "true"),
        ("Count", "-3"),
        ("Ratio", "1.500000e+00"),
        ("Big", "INF"),
        ("Attr", "4 : i32"),
        ("Type", "i32"),
    ]


def test_text_arguments_format_only_with_values() -> None:
    assert add("loop {0} unrolled {1}x", "L1", 4).resolve() == RemarkArg(
        "Remark", "loop L1 unrolled 4x"
    )
    assert reason("{not a field}").resolve() == RemarkArg("Reason", "{not a field}")
    assert suggest("try {}", "this").resolve() == RemarkArg("Suggestion", "try this")


# --- filters ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("categories", "kind", "category", "enabled"),
    [
        (RemarkCategories(), RemarkKind.PASSED, "loop", False),
        (RemarkCategories(passed="loop"), RemarkKind.PASSED, "loop", True),
        (RemarkCategories(passed="loop"), RemarkKind.PASSED, "loops", False),
        (RemarkCategories(passed="loop"), RemarkKind.MISSED, "loop", False),
        (RemarkCategories(all="l.*"), RemarkKind.ANALYSIS, "loop", True),
        (RemarkCategories(all="x", failed="loop"), RemarkKind.FAILURE, "loop", True),
        (RemarkCategories(all="x", failed="loop"), RemarkKind.FAILURE, "x", True),
        (RemarkCategories(all="x", failed="loop"), RemarkKind.MISSED, "loop", False),
        (RemarkCategories(missed="^lo"), RemarkKind.MISSED, "loop", False),
        (RemarkCategories(missed="^lo.*$"), RemarkKind.MISSED, "loop", True),
        (RemarkCategories(missed="lo("), RemarkKind.MISSED, "lo(", False),
    ],
)
def test_filters_match_whole_category_names(
    categories: RemarkCategories, kind: RemarkKind, category: str, enabled: bool
) -> None:
    assert RemarkEngine(categories).is_enabled(kind, category) is enabled


class Loud:
    """A value that must never be formatted."""

    def __format__(self, spec: str) -> str:
        raise AssertionError("a disabled remark was formatted")

    def __str__(self) -> str:
        raise AssertionError("a disabled remark was formatted")


def test_disabled_remarks_build_and_format_nothing(
    parse: Callable[[str], ir.ModuleOp],
) -> None:
    ids: list[object] = []

    def body(p: OperationPass) -> None:
        opts = RemarkOpts.name("r").category("off")
        ids.append(p.remarks.passed(p.get_operation(), opts, add("{0}", Loud())))
        with p.remarks.in_flight(RemarkKind.MISSED, p.get_operation(), opts) as r:
            assert not r
            assert r.id is None
            r.append(metric("x", 1))
        ids.append(r.id)

    engine = RemarkEngine(RemarkCategories(all="on"))
    assert run(parse("func.func @f() { return }"), engine, body=body) == []
    assert run(parse("func.func @f() { return }"), None, body=body) == []
    assert ids == [None, None, None, None]


# --- policies and ids -----------------------------------------------------------


def test_all_policy_reports_in_emission_order_with_ids_and_links() -> None:
    module = ir.parse_module('"test.op"() : () -> ()', name="in.mlir")
    engine = RemarkEngine(RemarkCategories(all="category.*"))
    out = run(module, engine, "builtin.module(test-remark)")
    assert [d.severity for d in out] == [Severity.REMARK] * 6
    assert {str(d.location) for d in out} == {"in.mlir:1:1"}
    assert [d.message for d in out] == [
        '[Passed] test-remark | Category:category-1-passed | Reason="because we '
        'are testing the remark pipeline", Remark="This is a test passed remark '
        '(should be dropped)", RemarkId=1, Suggestion="try using the remark '
        'pipeline feature"',
        '[Passed] test-remark | Category:category-1-passed | Reason="because we '
        'are testing the remark pipeline", Remark="This is a test passed remark", '
        'RemarkId=2, Suggestion="try using the remark pipeline feature"',
        '[Failure] test-remark | Category:category-2-failed | Reason="because we '
        'are testing the remark pipeline", Remark="This is a test failed remark", '
        'RemarkId=3, Suggestion="try using the remark pipeline feature"',
        "[Analysis] test-remark | Category:category-2-analysis | "
        'Remark="This is a test analysis remark", RemarkId=4',
        # The analysis remark is numbered when made, reported after the link.
        "[Passed] test-remark | Category:category-link | RelatedTo=5, "
        'Remark="Optimization enabled by analysis", RemarkId=6',
        "[Analysis] test-remark | Category:category-link | "
        'Remark="Analysis that enables optimization", RemarkId=5',
    ]


def final_report(text: str, pipeline: str, categories: RemarkCategories) -> list[str]:
    module = ir.parse_module(text, name="in.mlir")
    pm = PassManager("builtin.module")
    pm.assign(parse_pass_pipeline(pipeline))
    delivered: list[Diagnostic] = []
    pm.add_diagnostic_handler(delivered.append)
    with RemarkEngine(categories, policy="final") as engine:
        pm.enable_remarks(engine)
        pm.run(module)
        assert delivered == []  # nothing before finalize
    return [f"{d.location}: {d.message.split(' | ')[1]}" for d in delivered]


def test_final_report_order_is_by_file_line_column_unknown_last() -> None:
    report = final_report(
        FUNCTIONS,
        "builtin.module(func.func(test-remark))",
        RemarkCategories(passed="category-1-passed"),
    )
    assert report == [
        "a.c:10:1: Category:category-1-passed",
        "a.c:10:5: Category:category-1-passed",
        "a.c:11:1: Category:category-1-passed",
        "a.c:20:1: Category:category-1-passed",
        "a.c:25:1: Category:category-1-passed",
        "a.c:30:1: Category:category-1-passed",
        "b.c:1:1: Category:category-1-passed",
        "<unknown>:0: Category:category-1-passed",
    ]


def test_final_policy_drops_the_replaced_remark_and_groups_related_ones() -> None:
    module = ir.parse_module('"test.op"() : () -> ()', name="in.mlir")
    pm = PassManager("builtin.module")
    pm.add(TestRemarkPass())
    delivered: list[Diagnostic] = []
    pm.add_diagnostic_handler(delivered.append)
    engine = RemarkEngine(RemarkCategories(all="category.*"), policy="final")
    pm.enable_remarks(engine)
    pm.run(module)
    engine.finalize()
    text = messages(delivered)
    assert not any("should be dropped" in m for m in text)
    assert len(text) == 5
    link = next(i for i, m in enumerate(text) if "Optimization enabled" in m)
    assert "RelatedTo=5" in text[link]
    assert "Analysis that enables optimization" in text[link + 1]
    assert "RemarkId=5" in text[link + 1]


def collecting_engine(
    policy: RemarkPolicy = "all",
) -> tuple[RemarkEngine, list[Diagnostic]]:
    """An engine for everything, printing into the returned list."""
    delivered: list[Diagnostic] = []
    diagnostics = DiagnosticEngine()
    diagnostics.handlers.append(delivered.append)
    return RemarkEngine(EVERYTHING, policy=policy, diagnostics=diagnostics), delivered


def test_finalize_reports_once_and_drops_later_remarks() -> None:
    engine, delivered = collecting_engine("final")
    emit = engine.emitter()
    assert emit.passed(at(2), RemarkOpts.name("late").category("c")) is not None
    emit.passed(at(1), RemarkOpts.name("early").category("c"))
    assert delivered == []
    engine.finalize()
    engine.finalize()
    emit.passed(at(3), RemarkOpts.name("after").category("c"))
    engine.finalize()
    assert [(str(d.location), d.message) for d in delivered] == [
        ("a.c:1:1", "[Passed] early | Category:c | RemarkId=2"),
        ("a.c:2:1", "[Passed] late | Category:c | RemarkId=1"),
    ]


def test_engine_as_context_manager_finalizes() -> None:
    engine, delivered = collecting_engine("final")
    with engine:
        engine.emitter().analysis(at(1), RemarkOpts.name("n").category("c"))
    assert [d.message for d in delivered] == ["[Analysis] n | Category:c | RemarkId=1"]


def test_in_flight_remark_is_reported_at_the_end_of_its_block() -> None:
    engine, delivered = collecting_engine()
    emit = engine.emitter()
    with emit.in_flight(RemarkKind.ANALYSIS, at(1), RemarkOpts.name("why")) as why:
        assert why and why.id is not None
        assert why.append(add("trip count {0}", 4)) << metric("Trips", 4) is why
        emit.passed(at(2), RemarkOpts.name("did").related_to(why), add("unrolled"))
        assert len(delivered) == 1
    why.append(add("too late"))  # reported: ignored
    why.report()
    assert [d.message for d in delivered] == [
        "[Passed] did | RelatedTo=1, Remark=unrolled, RemarkId=2",
        '[Analysis] why | Remark="trip count 4", RemarkId=1, Trips=4',
    ]


def test_related_to_an_id_and_to_nothing() -> None:
    engine, delivered = collecting_engine()
    emit = engine.emitter()
    first = emit.analysis(at(1), RemarkOpts.name("a"))
    emit.passed(at(1), RemarkOpts.name("b").related_to(first))
    emit.passed(at(1), RemarkOpts.name("c").related_to(InFlightRemark()))
    assert [d.message for d in delivered] == [
        "[Analysis] a | RemarkId=1",
        "[Passed] b | RelatedTo=1, RemarkId=2",
        "[Passed] c | RemarkId=3",
    ]


def test_remarks_are_in_the_failed_runs_diagnostics(
    parse: Callable[[str], ir.ModuleOp],
) -> None:
    def body(p: OperationPass) -> None:
        p.remarks.failed(p.get_operation(), RemarkOpts.name("r").category("c"))
        p.signal_pass_failure()

    pm = PassManager("builtin.module")
    pm.nest("func.func").add(EmitRemarks(body))
    pm.add_diagnostic_handler(lambda d: None)
    pm.enable_remarks(RemarkEngine(EVERYTHING))
    with pytest.raises(PassPipelineError) as failure:
        pm.run(parse("func.func @f() { return }"))
    assert [d.message for d in failure.value.diagnostics] == [
        "[Failure] r | Category:c | RemarkId=1"
    ]


def test_remarks_outside_a_run_are_an_error() -> None:
    with pytest.raises(PassflowError, match="is not running"):
        _ = TestRemarkPass().remarks


def test_an_engine_without_diagnostics_prints_to_stderr(
    capsys: pytest.CaptureFixture[str],
) -> None:
    RemarkEngine(EVERYTHING).emitter().missed(at(3, 4), RemarkOpts.name("m"))
    assert capsys.readouterr().err == "a.c:3:4: remark: [Missed] m | RemarkId=1\n"


def test_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown remark policy 'some'"):
        RemarkEngine(EVERYTHING, policy="some")  # pyright: ignore[reportArgumentType]


# --- locations --------------------------------------------------------------------


def test_locations_are_the_positions_mlir_opt_shows() -> None:
    module = ir.parse_module(
        FUNCTIONS + '"test.op"() : () -> () loc(callsite("f.c":1:2 at "g.c":3:4))\n'
        '"test.op"() : () -> () loc("only-a-name")\n'
        '"test.op"() : () -> ()\n',
        name="in.mlir",
    )
    shown = [str(ir.location(op)) for op in module.walk(region_first=True)]
    assert shown == [
        "b.c:1:1",
        "a.c:30:1",
        "a.c:11:1",
        "a.c:10:1",
        "a.c:20:1",  # a name: its child
        "a.c:10:5",  # fused: its first part with a position
        "<unknown>:0",  # loc(unknown), written
        "a.c:25:1",
        "f.c:1:2",  # a call site: the callee
        "<unknown>:0",  # a name without a position
        "in.mlir:15:1",  # no loc(...): where it was parsed
        "in.mlir:0:0",
    ]


# --- executors ----------------------------------------------------------------


def remark_outputs(
    executor: ChildExecutor | None, policy: RemarkPolicy
) -> tuple[list[str], str]:
    """What a run of test-remark on every function reports and writes."""
    copies = "".join(FUNCTIONS.replace("() {", f"{n}() {{") for n in range(4))
    module = ir.parse_module(copies, name="in.mlir")
    yaml = io.StringIO()
    engine = RemarkEngine(
        RemarkCategories(all="category.*"),
        policy=policy,
        streamer=YamlRemarkStreamer(yaml),
    )
    delivered = run(
        module, engine, "builtin.module(func.func(test-remark))", executor=executor
    )
    if policy == "final":
        assert delivered == []
        engine.finalize()  # the engine prints through the pass manager's handlers
    return messages(delivered) if policy == "all" else [], yaml.getvalue()


@pytest.mark.parametrize("policy", ["all", "final"])
def test_every_executor_reports_what_a_serial_run_reports(policy: RemarkPolicy) -> None:
    expected = remark_outputs(SerialExecutor(), policy)
    # 32 ops; the copies share locations, so `final` keeps 5 per location.
    assert expected[1].count("--- !") == (8 * 5 if policy == "final" else 32 * 6)
    forked = ProcessExecutor(3, serial_budget=0)
    with ThreadExecutor(3) as threads, ProcessPoolExecutor(2) as pool:
        shipped = ShippingExecutor(pool, jobs=2)
        for executor in (threads, forked, shipped):
            assert remark_outputs(executor, policy) == expected, executor.name
    assert forked.profile.children > forked.profile.in_parent  # workers ran some
    assert shipped.profile.shipped == 0  # test-remark changes nothing


def test_final_report_is_the_same_from_every_executor() -> None:
    reports: list[list[str]] = []
    for executor in (None, ThreadExecutor(2), ProcessExecutor(2, serial_budget=0)):
        module = ir.parse_module(FUNCTIONS, name="in.mlir")
        pm = PassManager("builtin.module", executor=executor)
        pm.assign(parse_pass_pipeline("builtin.module(func.func(test-remark))"))
        delivered: list[Diagnostic] = []
        pm.add_diagnostic_handler(delivered.append)
        with RemarkEngine(RemarkCategories(all="category.*"), policy="final") as engine:
            pm.enable_remarks(engine)
            pm.run(module)
        pm.close()
        reports.append(messages(delivered))
    assert reports[0] == reports[1] == reports[2]
    assert [line.split(":")[0] for line in reports[0][::5]] == [
        "a.c", "a.c", "a.c", "a.c", "a.c", "a.c", "b.c", "<unknown>"
    ]  # fmt: skip


# --- YAML ---------------------------------------------------------------------


def test_yaml_document_is_llvms_layout() -> None:
    remark = Remark(
        RemarkKind.PASSED,
        Location("/tmp/a/very/long/directory/name/for/the/input/file.mlir", 12, 3),
        "test-remark",
        "category-1-passed",
        args=[
            RemarkArg("RemarkId", "2"),
            RemarkArg("Remark", "This is a test passed remark"),
            RemarkArg("Reason", "because we are testing"),
        ],
    )
    assert remark_yaml(remark) == (
        "--- !Passed\n"
        "Pass:            category-1-passed\n"
        "Name:            test-remark\n"
        "DebugLoc:        { File: '/tmp/a/very/long/directory/name/for/the/input/file.mlir', \n"
        "                   Line: 12, Column: 3 }\n"
        "Function:        '<unknown function>'\n"
        "Args:\n"
        "  - RemarkId:        '2'\n"
        "  - Remark:          This is a test passed remark\n"
        "  - Reason:          because we are testing\n"
        "...\n"
    )


def test_yaml_wraps_the_location_past_column_70_and_names_unknowns() -> None:
    medium = Remark(
        RemarkKind.ANALYSIS, Location("../mlir/test/Pass/remark-final.mlir", 4, 3)
    )
    assert "\nDebugLoc:        { File: '../mlir/test/Pass/remark-final.mlir', Line: 4, \n" \
        "                   Column: 3 }\n" in remark_yaml(medium)  # fmt: skip
    unknown = Remark(RemarkKind.FAILURE, UNKNOWN_LOCATION, function_name="main")
    assert remark_yaml(unknown) == (
        "--- !Failure\n"
        "Pass:            ''\n"
        "Name:            '<unknown remark name>'\n"
        "DebugLoc:        { File: '<unknown file>', Line: 0, Column: 0 }\n"
        "Function:        main\n"
        "...\n"
    )


@pytest.mark.parametrize(
    ("value", "written"),
    [
        (
            "plain text, with commas. and-dashes_^",
            "plain text, with commas. and-dashes_^",
        ),
        ("", "''"),
        ("12", "'12'"),
        ("-1.5e3", "'-1.5e3'"),
        (".inf", "'.inf'"),
        ("0x1F", "'0x1F'"),
        ("1.2.3", "1.2.3"),
        ("true", "'true'"),
        ("null", "'null'"),
        ("~", "'~'"),
        (" padded", "' padded'"),
        ("- dash first", "'- dash first'"),
        ("a:b", "'a:b'"),
        ("path/to", "'path/to'"),
        ("it's", "'it''s'"),
        ("one\nline", '"one\\nline"'),
        ("tab\tand\x01", '"tab\\tand\\x01"'),
        ("caf\u00e9 \u2028", '"caf\u00e9 \\L"'),
    ],
)
def test_yaml_scalars_are_quoted_as_llvm_quotes_them(value: str, written: str) -> None:
    remark = Remark(RemarkKind.PASSED, at(1), args=[RemarkArg("K", value)])
    assert f"\n  - K:               {written}\n...\n" in remark_yaml(remark)


def test_yaml_multi_line_values_are_literal_blocks() -> None:
    remark = Remark(
        RemarkKind.MISSED,
        at(1),
        "n",
        "c",
        args=[
            RemarkArg("Remark", "first\nsecond\n"),
            RemarkArg("LongerThan16Chars", "x"),
        ],
    )
    assert remark_yaml(remark).endswith(
        "Args:\n"
        "  - Remark:           |\n"
        "      first\n"
        "      second\n"
        "\n"
        "  - LongerThan16Chars: x\n"
        "...\n"
    )


def test_yaml_file_is_committed_at_finalize(tmp_path: Path) -> None:
    path = tmp_path / "remarks.yaml"
    engine = RemarkEngine(
        EVERYTHING,
        policy="final",
        streamer=YamlRemarkStreamer.to_file(str(path)),
        print_as_diagnostics=False,
    )
    engine.emitter().passed(at(1), RemarkOpts.name("n").category("c"))
    assert not path.exists()
    engine.finalize()
    assert path.read_text().startswith("--- !Passed\nPass:            c\n")


def test_yaml_file_that_cannot_be_opened(tmp_path: Path) -> None:
    with pytest.raises(OutputFileError, match="cannot open output file"):
        YamlRemarkStreamer.to_file(str(tmp_path / "missing" / "remarks.yaml"))


# --- passflow-opt -----------------------------------------------------------------


def run_opt(
    tmp_path: Path, text: str, *args: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, str]:
    source = tmp_path / "in.mlir"
    source.write_text(text)
    status = opt.main([str(source), "--mlir-disable-threading", *args])
    out = capsys.readouterr()
    return status, out.out, out.err


def test_opt_prints_remarks_with_the_source_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run_opt(
        tmp_path,
        '"test.op"() : () -> ()\n',
        "--test-remark",
        "--remarks-filter-analyse=category-2.*",
        capsys=capsys,
    )
    assert status == 0
    assert err == (
        f"{tmp_path}/in.mlir:1:1: remark: [Analysis] test-remark | "
        'Category:category-2-analysis | Remark="This is a test analysis remark", '
        "RemarkId=1\n"
        '"test.op"() : () -> ()\n'
        "^\n"
    )


def test_opt_writes_yaml_and_no_remark_diagnostics(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    status, _, err = run_opt(
        tmp_path,
        '"test.op"() : () -> ()\n',
        "--test-remark",
        "--remarks-filter=category-2-failed",
        "--remark-format=yaml",
        capsys=capsys,
    )
    assert (status, err) == (0, "")
    written = (tmp_path / "mlir-remarks.yaml").read_text()
    assert written.count("--- !Failure\n") == 1
    assert written.count("--- !") == 1


def test_opt_yaml_file_exists_without_filters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "r.yaml"
    status, _, _ = run_opt(
        tmp_path,
        "",
        "--remark-format=yaml",
        f"--remarks-output-file={target}",
        capsys=capsys,
    )
    assert status == 0
    assert target.read_text() == ""


def test_opt_final_policy_reports_after_a_failed_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run_opt(
        tmp_path,
        '"test.op"() : () -> ()\n',
        "--pass-pipeline=builtin.module(test-remark,test-pass-failure)",
        "--remarks-filter=category-1-passed",
        "--remark-policy=final",
        capsys=capsys,
    )
    assert status == 1
    assert err.count("remark: ") == 1
    assert 'Remark="This is a test passed remark"' in err


def test_opt_remark_file_error_fails_before_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing" / "r.yaml"
    status, out, err = run_opt(
        tmp_path,
        '"test.op"() : () -> ()\n',
        "--test-remark",
        "--remarks-filter=.*",
        "--remark-format=yaml",
        f"--remarks-output-file={target}",
        capsys=capsys,
    )
    assert (status, out) == (1, "")
    assert err == (
        f"<unknown>:0: error: cannot open output file '{target}': "
        "No such file or directory\n"
    )


@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (
            "--remark-policy=last",
            "for the --remark-policy option: Cannot find option named 'last'!",
        ),
        (
            "--remark-format=json",
            "for the --remark-format option: Cannot find option named 'json'!",
        ),
    ],
)
def test_opt_rejects_unknown_values_as_llvm_cl_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str, message: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        run_opt(tmp_path, "", flag, capsys=capsys)
    assert exit_.value.code == 1
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"passflow-opt: {message}"
    assert err[1].startswith("passflow-opt: note: ")  # the values it takes


def test_opt_bitstream_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, err = run_opt(tmp_path, "", "--remark-format=bitstream", capsys=capsys)
    assert status == 1
    assert "bitstream remark format is not supported" in err
    assert not (tmp_path / "mlir-remarks.bitstream").exists()
