"""The documentation site reads like a product's: the API reference in the order
a user meets the API, every guide page on the home page, API names in the guides
linked to their entries, code highlighted without the network, and the name of
every file a page asks the reader to write shown above it."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import passflow

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _hooks() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "autolinks", DOCS / "_hooks" / "autolinks.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOOKS = _hooks()


def test_the_api_reference_starts_where_a_user_starts() -> None:
    text = (DOCS / "api" / "passflow.md").read_text()
    rendered = re.findall(r"^::: passflow\.(\w+)$", text, re.M)
    linked = re.findall(r"\]\[passflow\.\w+\.(\w+)\]", text)
    assert sorted({*rendered, *linked, "ir"}) == sorted(passflow.__all__)
    assert len(rendered) == len(set(rendered))
    first = ["PassManager", "OperationPass", "Option", "register_pass"]
    first += ["parse_pass_pipeline", "PassInstrumentation"]
    assert [rendered.index(name) for name in first] == sorted(
        rendered.index(name) for name in first
    )
    assert rendered[0] == "PassManager"
    assert text.count("\n# ") + text.startswith("# ") == 1  # the title, once


def test_the_home_page_lists_every_page() -> None:
    nav = re.findall(
        r"^\s+- [^:]+: (\S+\.md)$", (ROOT / "mkdocs.yml").read_text(), re.M
    )
    pages = {page.relative_to(DOCS).as_posix() for page in DOCS.rglob("*.md")}
    pages -= {"index.md"}
    assert pages <= set(nav)
    linked = set(re.findall(r"\]\(([\w/]+\.md)\)", (DOCS / "index.md").read_text()))
    assert {page for page in nav if page != "index.md"} - linked == set()


def test_the_home_page_says_how_to_serve_the_site_for_search() -> None:
    text = (DOCS / "index.md").read_text()
    assert "python -m http.server -d site" in text
    assert "mkdocs serve" in text


def test_api_names_in_prose_become_links_and_code_stays_code() -> None:
    identifiers = HOOKS.api_identifiers()
    assert identifiers["PassManager"] == "passflow.PassManager"
    assert identifiers["PipelineBuilder"] == "passflow.builder.PipelineBuilder"
    assert identifiers["ir.parse_module"] == "passflow.ir.parse_module"
    assert identifiers["PassManager.run"] == "passflow.PassManager.run"
    page = (
        "## `PassManager`\n"
        "Make a `PassManager`, call `parse_pass_pipeline(text)`; `pm.run` and "
        "`no_such_name` stay.\n"
        "```python\nPassManager()  # `PassManager`\n```\n"
    )
    assert HOOKS.transform(page, identifiers) == (
        "## `PassManager`\n"
        "Make a [`PassManager`][passflow.PassManager], call "
        "[`parse_pass_pipeline(text)`][passflow.parse_pass_pipeline]; `pm.run` "
        "and `no_such_name` stay.\n"
        "```python\nPassManager()  # `PassManager`\n```\n"
    )


def test_a_file_block_shows_its_file_name() -> None:
    page = "Write:\n\n```toml {file=my-passes/pyproject.toml}\n[project]\n```\n"
    assert HOOKS.transform(page, {}) == (
        'Write:\n\n```toml title="my-passes/pyproject.toml"\n[project]\n```\n'
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site as `make docs` builds it, in a directory of its own."""
    directory = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    done = subprocess.run(
        [str(mkdocs), "build", "--strict", "--quiet", "-d", str(directory)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return directory


def test_the_site_loads_nothing_from_the_network(site: Path) -> None:
    remote = [
        f"{page.relative_to(site)}: {found}"
        for page in site.rglob("*.html")
        for found in re.findall(
            r'<script[^>]*src="https?://[^"]*"|<link[^>]*href="https?://[^"]*"',
            page.read_text(),
        )
    ]
    assert remote == []
    guide = (site / "guide" / "index.html").read_text()
    assert '<span class="k">class</span>' in guide  # highlighted at build time


def test_the_guides_plugin_package_shows_each_files_name(site: Path) -> None:
    guide = (site / "guide" / "index.html").read_text()
    shown = re.findall(r'<span class="filename">([^<]*)</span>', guide)
    written = re.findall(r"\{file=([^}\s]+)\}", (DOCS / "guide.md").read_text())
    assert shown == written
    assert "my-passes/pyproject.toml" in shown
    assert 'href="../api/passflow/#passflow.PassManager"' in guide


def test_the_architecture_page_walks_every_wing_and_cites_real_modules() -> None:
    text = (DOCS / "architecture.md").read_text()
    walks = re.findall(r"^## (.*)$", text, re.M)
    for wing in ("--cache", "warm path", "PASSFLOW_SERVER", "Print options", "Plugins"):
        assert any(wing in walk for walk in walks), wing
    cited = set(re.findall(r"`((?:[a-z_]+/)*[a-z_]+\.py)`", text))
    missing = [
        path
        for path in cited
        if not (ROOT / "src" / "passflow" / path).exists()
        and not (ROOT / path).exists()
    ]
    assert len(cited) > 20
    assert missing == []
