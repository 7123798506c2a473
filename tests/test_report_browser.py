"""The HTML run report in a real browser: the system's Chromium (Debian package,
`/usr/bin/chromium`, which `make test` offers to install when missing) driven headless
by Playwright. The pass list, a diff and the timing chart must render, the
script must work, and the console must stay free of errors.

The screenshot goes to a temporary directory; with PASSFLOW_UPDATE_SCREENSHOT=1
it replaces docs/img/report.png, the one docs/report.md shows.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, sync_playwright
from report_support import INPUT, PIPELINE

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
