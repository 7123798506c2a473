"""The HTML run report in a real browser: the system's Chromium (Debian package,
`/usr/bin/chromium`, which `make test` offers to install when missing) driven headless
by Playwright. The pass list, a diff and the timing chart must render, the
script must work, and the console must stay free of errors.

The screenshots go to a temporary directory; with PASSFLOW_UPDATE_SCREENSHOT=1
they replace docs/img/report.png and docs/img/report-graph.png, the ones
docs/report.md shows.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright
from report_support import INPUT, PIPELINE, JumpOnce

from passflow import OpPassManager, PassManager, ir
from passflow.graph import PipelineGraph, dump_pipeline_graphs
from passflow.pipeline_text import parse_pass_pipeline_into
from passflow.tools import opt

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def page() -> Iterator[Page]:
    assert os.access(CHROMIUM, os.X_OK), (
        f"{CHROMIUM} is missing: `make test CHROMIUM_INSTALL=yes` installs it "
        "(apt-get install chromium)"
    )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox"]
        )
        try:
            yield browser.new_page(viewport={"width": 1100, "height": 760})
        finally:
            browser.close()


def test_the_report_renders_in_chromium_without_console_errors(
    page: Page, tmp_path: Path
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(INPUT)
    report = tmp_path / "report.html"
    opt.main(
        [
            str(source),
            f"--pass-pipeline={PIPELINE}",
            f"--report={report}",
            "-o",
            str(tmp_path / "out.mlir"),
        ]
    )
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(report.as_uri())

    names = page.locator("li.pass > details > summary > .name")
    assert names.all_inner_texts() == [
        "Canonicalizer",
        "CSE",
        "TestStatisticPass",
        "TestFailurePass",
    ]
    bars = page.locator("li.pass .bar")
    assert bars.count() == 4
    widths = [box["width"] for box in (b.bounding_box() for b in bars.all()) if box]
    assert len(widths) == 4 and sum(widths) > 0  # the chart is drawn
    diff = page.locator("li.pass[data-name=CSE] pre.diff")
    assert not diff.is_visible()  # a pass's details start closed
    page.locator("li.pass[data-name=CSE] > details > summary").click()
    assert diff.is_visible()
    added = diff.locator("span.add")
    assert added.inner_text() == "+  %s = arith.addi %m1, %m1 : i32"
    assert added.evaluate("e => getComputedStyle(e).backgroundColor") != (
        "rgba(0, 0, 0, 0)"
    )
    # The failing pass is open, its error beside it.
    assert page.locator("li.pass[data-name=TestFailurePass] li.diag").is_visible()

    page.locator("#only-changed").check()
    assert not page.locator("li.pass[data-name=TestStatisticPass]").is_visible()
    assert page.locator("li.pass[data-name=CSE]").is_visible()
    page.locator("#only-changed").uncheck()
    page.locator("#expand").click()
    assert page.locator("li.pass[data-name=Canonicalizer] pre.diff").is_visible()

    update = os.environ.get("PASSFLOW_UPDATE_SCREENSHOT") == "1"
    shot = ROOT / "docs" / "img" / "report.png" if update else tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes().startswith(b"\x89PNG")
    assert errors == []


def _functions(count: int, failing: int) -> str:
    """`count` functions CSE changes; the one numbered `failing` has the op
    test-pass-crash-on-op crashes on."""
    return "".join(
        f"func.func @f{i}(%x: i32) -> i32 {{\n"
        "  %a = arith.muli %x, %x : i32\n  %b = arith.muli %x, %x : i32\n"
        + ("  %q = arith.remui %x, %x : i32\n" if i == failing else "")
        + "  %s = arith.addi %a, %b : i32\n  func.return %s : i32\n}\n"
        for i in range(count)
    )


def test_a_thousand_function_report_is_found_through_its_filter(
    page: Page, tmp_path: Path
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(_functions(1000, failing=617))
    report = tmp_path / "report.html"
    pipeline = "builtin.module(func.func(cse,test-pass-crash-on-op{op=arith.remui}))"
    argv = [str(source), f"-p={pipeline}", f"--report={report}", "-o", "-"]
    assert opt.main([*argv, "--mlir-disable-threading"]) == 1
    page.goto(report.as_uri())

    # A row says it opens: ▶ closed, ▼ open.
    cse = page.locator("li.pass[data-name=CSE]")
    marker = "e => getComputedStyle(e, '::before').content"
    summary = cse.locator(":scope > details > summary")
    assert summary.evaluate(marker) == '"\u25b6"'
    summary.click()
    assert summary.evaluate(marker) == '"\u25bc"'
    # 1,000 changed functions: each one folded, with its time, none unfolded.
    changes = cse.locator("div.change")
    assert changes.count() == 1000
    assert not page.locator("li.pass[data-name=CSE] pre.diff").first.is_visible()
    assert "ms" in changes.first.locator(".optime").inner_text()
    assert cse.locator("p.optimes").is_visible()

    page.locator("#filter-op").fill("@f617")
    visible = [c for c in changes.all() if c.is_visible()]
    assert len(visible) == 1
    diff = visible[0].locator("pre.diff")
    assert diff.is_visible()
    assert "+  %s = arith.addi %a, %a : i32" in diff.inner_text().splitlines()

    # The failing pass: its error, and the op it failed on as it was before.
    failing = page.locator("li.pass[data-name=TestPassCrashOnOp]")
    assert failing.locator("li.diag").first.is_visible()
    before = failing.locator("div.failure pre.before")
    assert before.is_visible()
    assert "arith.remui" in before.inner_text()
    assert page.locator("#shown").inner_text() == "2 pass(es) shown"

    page.locator("#filter-op").fill("")
    page.locator("#filter-pass").fill("crash")
    assert not cse.is_visible()
    assert failing.is_visible()


def _inlined(count: int) -> str:
    """`count` functions that each call a private helper (the inliner inlines
    it, then erases it), and `@g500`, which only the canonicalize the inliner
    runs as its dynamic pipeline changes."""
    helpers = "".join(
        f"func.func private @h{i}(%v: i32) -> i32 {{\n"
        "  %r = arith.muli %v, %v : i32\n  func.return %r : i32\n}\n"
        f"func.func @f{i}(%x: i32) -> i32 {{\n"
        f"  %r = func.call @h{i}(%x) : (i32) -> i32\n  func.return %r : i32\n}}\n"
        for i in range(count)
    )
    return helpers + (
        "func.func @g500(%x: i32) -> i32 {\n  %c0 = arith.constant 0 : i32\n"
        "  %r = arith.addi %x, %c0 : i32\n  func.return %r : i32\n}\n"
    )


def test_a_thousand_function_report_filters_into_dynamic_pipelines(
    page: Page, tmp_path: Path
) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(_inlined(1000))
    report = tmp_path / "report.html"
    pipeline = "builtin.module(inline,func.func(canonicalize,cse),symbol-dce)"
    argv = [str(source), f"-p={pipeline}", f"--report={report}", "-o", "-"]
    assert opt.main([*argv, "--report-max-changes=3000"]) == 0
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(report.as_uri())

    # A function changed only by the canonicalize inside the inliner's dynamic
    # pipeline: the filter shows that nested row, opened, with its change.
    page.locator("#filter-op").fill("@g500")
    inliner = page.locator("li.pass[data-name=Inliner]")
    nested = inliner.locator("li.pass[data-name=Canonicalizer]")
    assert nested.is_visible()
    change = nested.locator("div.change[data-op='func.func @g500']")
    assert change.is_visible()
    assert "-  %r = arith.addi %x, %c0 : i32" in change.locator("pre.diff").inner_text()
    top_canonicalize = page.locator(
        "ul.tree > li.pass[data-name=Canonicalizer]:not(li.pass li.pass)"
    )
    assert not top_canonicalize.first.is_visible()  # the outer one changed nothing

    # A module pass's change to one function: its own diff, built only when
    # its fold opens (the filter opens it).
    own = inliner.locator(
        ":scope > details > .body > div.change[data-op='func.func @f7']"
    )
    assert own.locator("pre.diff").count() == 0  # folded: not built yet
    page.locator("#filter-op").fill("@f7")
    assert own.is_visible()
    diff = own.locator("pre.diff")
    assert diff.is_visible()
    assert "-  %r = func.call @h7(%x) : (i32) -> i32" in diff.inner_text()
    assert "builtin.module" not in diff.inner_text()
    erased = inliner.locator("div.change[data-op='func.func @h7']")
    assert "(erased by the pass)" in erased.inner_text()

    # "expand all" opens a bounded number of folds and says so.
    page.locator("#filter-op").fill("")
    page.locator("#expand").click()
    assert page.locator("#shown").inner_text().startswith("opened 300 of ")
    assert errors == []


def test_clicking_a_pass_in_the_graph_opens_its_row(page: Page, tmp_path: Path) -> None:
    source = tmp_path / "input.mlir"
    source.write_text(INPUT)
    report = tmp_path / "report.html"
    opt.main([str(source), f"-p={PIPELINE}", f"--report={report}", "-o", "-"])
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(report.as_uri())

    graph = page.locator("svg#run-1-passes")
    assert graph.is_visible()
    labels = graph.locator("g.node text.label").all_text_contents()
    assert labels == ["canonicalize", "cse", "test-stats-pass", "test-pass-failure"]
    row = page.locator("li.pass[data-name=CSE]")
    diff = row.locator("pre.diff")
    assert not diff.is_visible()
    graph.locator("g.node", has_text="cse").locator("a.goto").click()
    assert diff.is_visible()  # the pass's row is open, its diff shown
    assert page.url.endswith(f"#{row.get_attribute('id')}")
    top = row.bounding_box()
    assert top is not None and 0 <= top["y"] < 760  # scrolled to
    assert errors == []


def _simplify(pm: OpPassManager) -> None:
    parse_pass_pipeline_into("func.func(canonicalize)", pm)
    pm.add(JumpOnce("simplify"))


def _compiler() -> PipelineGraph:
    """A schedule with a fork, a join, a choice and a jump."""
    graph = PipelineGraph("my-compiler")
    graph.register_pipeline("frontend")
    graph.register_pipeline(
        "simplify",
        ["frontend"],
        jump_targets=["simplify"],
        populate=_simplify,
    )
    graph.register_pipeline("analyse", ["frontend"], populate="func.func(cse)")
    graph.register_choice(
        "device",
        ["gpu", "cpu"],
        ["simplify", "analyse"],
        select=lambda op: "cpu",
    )
    graph.register_pipeline("gpu", populate="func.func(cse)")
    graph.register_pipeline("cpu", populate="func.func(canonicalize)")
    graph.register_pipeline("lower", ["device"], populate="symbol-dce")
    return graph


def test_clicking_a_stage_in_the_pipeline_graph_opens_its_row(
    page: Page, tmp_path: Path
) -> None:
    report = tmp_path / "report.html"
    pm = PassManager()
    pm.add(_compiler().create_schedule().as_pass())
    pm.enable_report(str(report)).set_graph(dump_pipeline_graphs(pm, "dot"))
    pm.run(ir.parse_module(INPUT))
    errors: list[str] = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(report.as_uri())

    graph = page.locator("svg[id^=run-1-graph-]")
    assert graph.count() == 1 and graph.is_visible()
    labels = graph.locator("g.node text.label").all_text_contents()
    assert "2. simplify" in labels and "choose" in labels
    assert graph.locator("g.edge", has_text="jump").count() == 1
    row = page.locator("li.pipeline[data-name=\"'simplify' Stage\"]")
    assert not row.is_visible()  # inside the schedule pass's folded row
    graph.locator("g.node", has_text="2. simplify").locator("a.goto").click()
    assert row.is_visible()
    assert row.locator("li.pass[data-name=Canonicalizer]").is_visible()

    update = os.environ.get("PASSFLOW_UPDATE_SCREENSHOT") == "1"
    shot = ROOT / "docs" / "img" / "report-graph.png" if update else tmp_path / "g.png"
    page.locator("details.graph").screenshot(path=str(shot))
    assert shot.read_bytes().startswith(b"\x89PNG")
    assert errors == []
