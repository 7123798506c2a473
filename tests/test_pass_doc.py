"""docs/passes.md is generated from the pass declarations and must not go stale."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from passflow.tools import opt
from passflow.tools.pass_doc import generate_markdown, main, pass_groups, pass_help
from passflow.xdsl_passes import xdsl_pass_names

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


def test_help_groups_every_registered_pass() -> None:
    groups = {group.title: group.entries for group in pass_groups()}
    names = {title: [e.argument for e in entries] for title, entries in groups.items()}
    own, xdsl, tests = names.values()
    assert "cse" in own and "canonicalize" in own
    assert "test-pass-failure" in tests and "test-pm-nested-pipeline" in tests
    assert "test-pass-failure" not in own
    assert "convert-arith-to-riscv" in xdsl
    assert not set(xdsl) & set(own + tests)  # passflow's own shadow xDSL's
    assert sorted(xdsl) == sorted(n for n in xdsl_pass_names() if n not in own)
    summaries = {e.argument: e.summary for e in groups["xDSL's passes"]}
    assert summaries["convert-linalg-to-loops"]
    assert not any(s.startswith("ApplyPDLPass(") for s in summaries.values())


@pytest.mark.parametrize("width", [60, 100])
def test_help_is_wrapped_to_the_width(width: int) -> None:
    text = pass_help(width)
    lines = text.splitlines()
    too_long = [
        line for line in lines if len(line) > width and " " in line.strip()[:width]
    ]
    assert too_long == []
    assert "--cse" in text and "--convert-arith-to-riscv" in text
    assert lines[0] == "passflow's passes and pipelines:"


def test_list_passes_shows_groups_and_summaries(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert opt.main(["--list-passes"]) == 0
    out = capsys.readouterr().out
    titles = [line for line in out.splitlines() if line and not line.startswith(" ")]
    assert titles == [
        "passflow's passes and pipelines:",
        "xDSL's passes:",
        "Test passes and pipelines (MLIR's test/Pass):",
    ]
    assert re.search(r"^  cse +Eliminate common sub-expressions$", out, re.M)
    assert max(len(line) for line in out.splitlines()) <= 100


def test_passflow_doc_help_is_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: passflow-doc")
    assert "### `-cse`" not in out
    assert main([]) == 0
    assert capsys.readouterr().out == generate_markdown()
