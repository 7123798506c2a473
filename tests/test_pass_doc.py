"""docs/passes.md is generated from the pass declarations and must not go stale."""

from __future__ import annotations

from pathlib import Path

from passflow.tools.pass_doc import generate_markdown, pass_help

DOC = Path(__file__).resolve().parent.parent / "docs" / "passes.md"


def test_docs_passes_md_is_current() -> None:
    assert DOC.read_text() == generate_markdown(), (
        "docs/passes.md is stale: run `.venv/bin/passflow-doc > docs/passes.md`"
    )


def test_every_option_and_statistic_is_documented() -> None:
    text = generate_markdown()
    assert "### `-canonicalize`" in text
    assert "-max-iterations   : Max. iterations" in text
    assert "(default: 10)" in text
    assert "num-cse'd : Number of operations CSE'd" in text
    assert "### `-test-stats-pass`" in text


def test_help_lists_passes_with_their_options() -> None:
    text = pass_help()
    assert "--cse" in text and "--canonicalize" in text
    assert "-max-iterations" in text
