"""The pages link and cite only what exists: every relative link of README.md
and docs/*.md reaches a file of the repository, and every repository path a page
cites in backticks is there. (`make docs`, part of `make test`, checks the links
between the pages of the site and the API reference with `mkdocs build --strict`;
README.md is not in the site, so this test is what checks its links.)"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from docs_blocks import PAGES, ROOT

_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_CITED = re.compile(
    r"`(?P<path>(?:src|tests|examples|bench|docs|shared|passflow)/[\w./-]*\w\.\w+)`"
)
_IDS = [str(page.relative_to(ROOT)) for page in PAGES]


def _prose(page: Path) -> str:
    """The page without its fenced blocks (code, not links)."""
    return re.sub(r"^[ \t]*```.*?^[ \t]*```", "", page.read_text(), flags=re.M | re.S)


@pytest.mark.parametrize("page", PAGES, ids=_IDS)
def test_every_relative_link_reaches_a_file(page: Path) -> None:
    broken = [
        link["target"]
        for link in _LINK.finditer(_prose(page))
        if not re.match(r"[\w+.-]+:|#", link["target"])
        and not (page.parent / link["target"].split("#")[0]).exists()
    ]
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=_IDS)
def test_every_cited_path_is_in_the_repository(page: Path) -> None:
    missing = [
        cited["path"]
        for cited in _CITED.finditer(page.read_text())
        if not (ROOT / cited["path"]).exists()
        and not (ROOT / "src" / cited["path"]).exists()
    ]
    assert missing == []
