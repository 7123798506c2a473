"""The HTML run report (`--report=FILE`, `pm.enable_report`): the pass tree with
times, a diff exactly where a pass changed an op, diagnostics and statistics
beside their pass, the pipeline graph, and nothing fetched from the network."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from report_support import INPUT, PIPELINE

from passflow import PassManager, ir, registry
from passflow.diagnostics import Diagnostic, PassPipelineError
from passflow.graph import PipelineGraph
from passflow.instruments.report import RunReport
from passflow.pipeline_text import parse_pass_pipeline
from passflow.tools import opt

VOID = {"meta", "input", "br", "img", "link"}


@dataclass(eq=False)
class Element:
    tag: str
    attrs: dict[str, str]
    parent: Element | None = None
    children: list[Element] = field(default_factory=lambda: list[Element]())
    text: list[str] = field(default_factory=lambda: list[str]())

    @property
    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def walk(self) -> Iterator[Element]:
        yield self
        for child in self.children:
            yield from child.walk()

    def find(self, tag: str, cls: str) -> list[Element]:
        return [e for e in self.walk() if e.tag == tag and cls in e.classes]

    def all_text(self) -> str:
        return "".join(self.text) + "".join(c.all_text() for c in self.children)

    def ancestor(self, tag: str, cls: str) -> Element | None:
        current = self.parent
        while current is not None:
            if current.tag == tag and cls in current.classes:
                return current
            current = current.parent
        return None


class TreeBuilder(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.root = Element("#document", {})
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_endtag(self, tag: str) -> None:
        assert self.current.tag == tag, f"</{tag}> closes <{self.current.tag}>"
        assert self.current.parent is not None
        self.current = self.current.parent

    def handle_data(self, data: str) -> None:
        self.current.text.append(data)


def parse_html(text: str) -> Element:
    builder = TreeBuilder()
    builder.feed(text)
    builder.close()
    assert builder.current is builder.root, "unclosed elements"
    return builder.root


def passes(doc: Element) -> list[Element]:
    return doc.find("li", "pass")


def owner(element: Element) -> str:
    """The pass an element of the report is shown beside."""
    node = element.ancestor("li", "node")
    assert node is not None
    return node.attrs["data-name"]


def run_opt(tmp_path: Path, *flags: str, text: str = INPUT) -> tuple[int, str]:
    source = tmp_path / "input.mlir"
    source.write_text(text)
    report = tmp_path / "report.html"
    status = opt.main(
        [str(source), f"--report={report}", "-o", str(tmp_path / "out.mlir"), *flags]
    )
    return status, report.read_text()


def test_the_report_shows_every_pass_its_time_and_a_diff_exactly_where_ir_changed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The process executor with two jobs: an instrumented run stays in this
    # process, or the report would see no function pass at all.
    status, text = run_opt(
        tmp_path, f"--pass-pipeline={PIPELINE}", "--executor=process", "--jobs=2"
    )
    assert status == 1  # test-pass-failure fails; the report is written anyway
    assert "error: illegal operation" in capsys.readouterr().err
    doc = parse_html(text)
    assert [p.attrs["data-name"] for p in passes(doc)] == [
        "Canonicalizer",
        "CSE",
        "TestStatisticPass",
        "TestFailurePass",
    ]
    for node in passes(doc):
        (time,) = [
            e for e in node.find("span", "time") if e.ancestor("li", "node") is node
        ]
        assert float(time.attrs["data-wall"]) > 0
        assert "ms wall" in time.all_text()
        (bar,) = [
            e for e in node.find("span", "bar") if e.ancestor("li", "node") is node
        ]
        assert re.fullmatch(r"width:\d+\.\d\d%", bar.attrs["style"])
    changes = {(owner(c), c.attrs["data-op"]) for c in doc.find("div", "change")}
    assert changes == {("Canonicalizer", "func.func @a"), ("CSE", "func.func @c")}
    (cse_change,) = [c for c in doc.find("div", "change") if owner(c) == "CSE"]
    (diff,) = cse_change.find("pre", "diff")
    assert [e.all_text() for e in diff.find("span", "del")] == [
        "-  %m2 = arith.muli %x, %x : i32",
        "-  %s = arith.addi %m1, %m2 : i32",
    ]
    assert [e.all_text() for e in diff.find("span", "add")] == [
        "+  %s = arith.addi %m1, %m1 : i32"
    ]
    (whole,) = cse_change.find("pre", "after")
    assert whole.all_text().startswith("func.func @c(%x: i32) -> i32 {")
    (diagnostic,) = doc.find("li", "diag")
    assert owner(diagnostic) == "TestFailurePass"
    assert "error: illegal operation" in diagnostic.all_text()
    statistics = {owner(e): e.all_text() for e in doc.find("ul", "statistics")}
    assert set(statistics) == {"CSE", "TestStatisticPass"}
    assert "num-ops: 8 " in statistics["TestStatisticPass"]


def test_the_report_needs_no_network(tmp_path: Path) -> None:
    _, text = run_opt(tmp_path, f"--pass-pipeline={PIPELINE}")
    assert re.search(r"https?://", text) is None
    doc = parse_html(text)
    assert not [e for e in doc.walk() if "src" in e.attrs or e.tag == "link"]
    assert [e.tag for e in doc.walk() if e.tag in ("style", "script")] == [
        "style",
        "script",
    ]


def test_split_input_chunks_share_one_report(tmp_path: Path) -> None:
    chunks = "func.func @p(%x: i32) -> i32 {\n  func.return %x : i32\n}\n"
    chunks += "// -----\n" + INPUT
    status, text = run_opt(
        tmp_path,
        "--split-input-file",
        "--pass-pipeline=builtin.module(func.func(canonicalize))",
        text=chunks,
    )
    assert status == 0
    doc = parse_html(text)
    runs = doc.find("section", "run")
    assert len(runs) == 2
    assert runs[0].find("div", "change") == []
    assert [c.attrs["data-op"] for c in runs[1].find("div", "change")] == [
        "func.func @a"
    ]


def test_the_report_shows_the_pipeline_graph(tmp_path: Path) -> None:
    graph = PipelineGraph("test-report-graph")
    graph.register_pipeline("first", populate=lambda pm: None)
    graph.register_pipeline("second", ["first"], populate=lambda pm: None)
    graph.create_schedule().register(summary="a schedule for the report test")
    try:
        status, text = run_opt(
            tmp_path, "--pass-pipeline=builtin.module(test-report-graph)"
        )
    finally:
        registry.unregister("test-report-graph")
    assert status == 0
    (shown,) = parse_html(text).find("details", "graph")
    assert "digraph" in shown.all_text()
    assert '"first"' in shown.all_text()
    _, plain = run_opt(tmp_path, "--canonicalize")
    assert parse_html(plain).find("details", "graph") == []


def test_enable_report_keeps_diagnostics_flowing_to_handlers(tmp_path: Path) -> None:
    path = tmp_path / "lib.html"
    pm = PassManager()
    pm.assign(
        parse_pass_pipeline("builtin.module(test-pass-failure{gen-diagnostics=true})")
    )
    report = pm.enable_report(str(path))
    seen: list[Diagnostic] = []
    pm.add_diagnostic_handler(seen.append)  # added after the report
    module = ir.parse_module(INPUT)
    for _ in range(2):
        with pytest.raises(PassPipelineError):
            pm.run(module)
    assert [d.message for d in seen] == ["illegal operation"] * 2
    assert len(report.runs) == 2
    doc = parse_html(path.read_text())
    assert [owner(d) for d in doc.find("li", "diag")] == ["TestFailurePass"] * 2


def test_changes_past_the_cap_are_counted_per_pass_not_embedded(
    tmp_path: Path,
) -> None:
    path = tmp_path / "capped.html"
    pm = PassManager()
    pm.assign(parse_pass_pipeline("builtin.module(func.func(canonicalize,cse))"))
    pm.enable_report(RunReport(str(path), max_changes=1))
    second_a = INPUT.split("func.func @b")[0].replace("@a(", "@a2(")
    pm.run(ir.parse_module(INPUT + second_a))
    doc = parse_html(path.read_text())
    # canonicalize changed @a and @a2: one embedded, one counted; cse's change
    # to @c is embedded all the same (the limit is per pass, not run-wide).
    assert [owner(c) for c in doc.find("div", "change")] == ["Canonicalizer", "CSE"]
    (note,) = doc.find("p", "unrecorded")
    assert owner(note) == "Canonicalizer"
    assert note.all_text() == (
        "1 more change(s) by this pass, past the report's limit of 1 per pass "
        "(--report-max-changes)"
    )


def test_a_module_pass_shows_a_diff_per_function_it_changed(tmp_path: Path) -> None:
    path = tmp_path / "inline.html"
    pm = PassManager()
    pm.assign(parse_pass_pipeline("builtin.module(inline,symbol-dce)"))
    pm.enable_report(RunReport(str(path)))
    text = (
        "func.func private @callee(%x: i32) -> i32 {\n"
        "  %r = arith.addi %x, %x : i32\n  func.return %r : i32\n}\n"
        "func.func @user(%x: i32) -> i32 {\n"
        "  %r = func.call @callee(%x) : (i32) -> i32\n  func.return %r : i32\n}\n"
        "func.func @other(%x: i32) -> i32 {\n  func.return %x : i32\n}\n"
    )
    pm.run(ir.parse_module(text))
    doc = parse_html(path.read_text())
    changes = {
        c.attrs["data-op"]: c
        for c in doc.find("div", "change")
        if owner(c) == "Inliner"
    }
    assert set(changes) == {"func.func @user", "func.func @callee"}
    user = changes["func.func @user"].all_text()
    assert "-  %r = func.call @callee(%x) : (i32) -> i32" in user
    assert "builtin.module" not in user  # the function, not the whole module
    assert "(erased by the pass)" in changes["func.func @callee"].all_text()


def test_remarks_appear_beside_the_pass_that_made_them(tmp_path: Path) -> None:
    status, text = run_opt(
        tmp_path,
        "--pass-pipeline=builtin.module(func.func(cse,test-remark))",
        "--remarks-filter=.*",
    )
    assert status == 0
    remarks = [d for d in parse_html(text).find("li", "diag") if "remark" in d.classes]
    assert remarks
    assert {owner(d) for d in remarks} == {"TestRemarkPass"}
    assert "remark: [Missed] test-remark" in remarks[0].all_text()


def test_a_report_that_cannot_be_written_fails_the_tool(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(INPUT)
    missing = tmp_path / "missing" / "report.html"
    with pytest.raises(SystemExit) as exit_info:
        opt.main([str(source), "--canonicalize", f"--report={missing}", "-o", "-"])
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == (
        f"passflow-opt: cannot open output file '{missing}': "
        "No such file or directory\n"
    )


def test_a_failing_pass_shows_the_op_it_failed_on_as_it_was_before(
    tmp_path: Path,
) -> None:
    text = INPUT.replace(
        "@b(%x: i32) -> i32 {\n",
        "@b(%x: i32) -> i32 {\n  %q = arith.remui %x, %x : i32\n",
    )
    pipeline = "builtin.module(func.func(cse,test-pass-crash-on-op{op=arith.remui}))"
    status, html = run_opt(tmp_path, f"--pass-pipeline={pipeline}", text=text)
    assert status == 1
    (failure,) = parse_html(html).find("div", "failure")
    assert owner(failure) == "TestPassCrashOnOp"
    assert failure.attrs["data-op"] == "func.func @b"
    (before,) = failure.find("pre", "before")
    assert before.all_text().startswith(
        "func.func @b(%x: i32) -> i32 {\n  %q = arith.remui"
    )


def test_each_changed_op_has_its_time_and_many_are_folded(tmp_path: Path) -> None:
    text = "".join(
        f"func.func @f{i}(%x: i32) -> i32 {{\n  %a = arith.muli %x, %x : i32\n"
        "  %b = arith.muli %x, %x : i32\n  %s = arith.addi %a, %b : i32\n"
        "  func.return %s : i32\n}\n"
        for i in range(8)
    )
    pipeline = "builtin.module(func.func(cse))"
    _, html = run_opt(tmp_path, f"--pass-pipeline={pipeline}", text=text)
    doc = parse_html(html)
    (cse,) = [node for node in passes(doc) if node.attrs["data-name"] == "CSE"]
    folds = cse.find("details", "fold")
    assert len(folds) == 8 and not any("open" in fold.attrs for fold in folds)
    for fold in folds:
        (spent,) = fold.find("span", "optime")
        assert re.fullmatch(r"\d+\.\d ms", spent.all_text())
        assert "+1 \u22122" in fold.find("span", "delta")[0].all_text()
    (slowest,) = cse.find("p", "optimes")
    named = [e.all_text() for e in slowest.walk() if e.tag == "code"]
    assert len(named) == 5 and all(name.startswith("func.func @f") for name in named)
    _, few = run_opt(tmp_path, f"--pass-pipeline={PIPELINE}")
    assert all("open" in fold.attrs for fold in parse_html(few).find("details", "fold"))
    # a pass with nothing to show has no marker saying it opens
    one = "func.func @f() {\n  func.return\n}\n"
    pipeline = "builtin.module(func.func(loop-invariant-code-motion,cse))"
    _, html = run_opt(tmp_path, f"--pass-pipeline={pipeline}", text=one)
    leaves = [node.attrs["data-name"] for node in passes(parse_html(html))]
    assert leaves == ["LoopInvariantCodeMotion", "CSE"]
    assert ["leaf" in node.classes for node in passes(parse_html(html))] == [
        True,
        False,  # its statistics
    ]


def test_a_negative_report_limit_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(INPUT)
    with pytest.raises(SystemExit) as exit_info:
        opt.main(
            [str(source), "--canonicalize", f"--report={tmp_path / 'r.html'}",
             "--report-max-changes=-1"]
        )  # fmt: skip
    assert exit_info.value.code == 1
    assert capsys.readouterr().err == (
        "passflow-opt: for the --report-max-changes option: '-1' is negative; "
        "give a count of 0 or more\n"
    )
    assert not (tmp_path / "r.html").exists()
