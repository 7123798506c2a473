"""docs/passes.md is generated from the pass declarations and must not go stale."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.transforms import get_all_passes

from passflow.tools.pass_doc import generate_markdown, main, pass_groups, pass_help
from passflow.tools.xdsl_summaries import FROM_XDSL, WRITTEN, docstring_summary
from passflow.xdsl_passes import xdsl_pass_names

DOC = Path(__file__).resolve().parent.parent / "docs" / "passes.md"


def _fresh(code: str, **env: str) -> str:
    """What `code` prints in a fresh interpreter: the registry holds passflow's
    passes only, not the plugins other tests in this process loaded."""
    import os

    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    return done.stdout


def test_docs_passes_md_is_current() -> None:
    generated = _fresh("from passflow.tools.pass_doc import main; main([])")
    assert DOC.read_text() == generated, (
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
    own = names["passflow's passes and pipelines"]
    xdsl = names["xDSL's passes"]
    tests = names["Test passes and pipelines (MLIR's test/Pass)"]
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
    text = _fresh(
        "from passflow import register_all_passes\n"
        "from passflow.tools.pass_doc import pass_help\n"
        f"register_all_passes(); print(pass_help({width}), end='')"
    )
    lines = text.splitlines()
    too_long = [
        line for line in lines if len(line) > width and " " in line.strip()[:width]
    ]
    assert too_long == []
    assert "--cse" in text and "--convert-arith-to-riscv" in text
    assert lines[0] == "passflow's passes and pipelines:"


def test_list_passes_shows_groups_and_summaries() -> None:
    out = _fresh(
        "import sys\nfrom passflow.tools import opt\n"
        "sys.exit(opt.main(['--list-passes']))",
        COLUMNS="100",
    )
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


def test_every_pass_listed_has_a_one_line_summary() -> None:
    for options in (False, True):
        for group in pass_groups(options=options):
            empty = [e.argument for e in group.entries if not e.summary.strip()]
            assert empty == [], group.title
            multi = [e.argument for e in group.entries if "\n" in e.summary]
            assert multi == [], group.title


def test_the_xdsl_summaries_are_current() -> None:
    """FROM_XDSL is the first sentence of each pass class's docstring, WRITTEN
    covers exactly the passes without one (after an xDSL upgrade, the message
    says what to change)."""
    factories = get_all_passes()
    fresh = {
        name: docstring_summary(factories[name]().__doc__) for name in xdsl_pass_names()
    }
    with_doc = {name: line for name, line in fresh.items() if line is not None}
    assert with_doc == FROM_XDSL
    assert sorted(WRITTEN) == sorted(set(fresh) - set(with_doc))
    assert all(line.endswith(".") and "\n" not in line for line in WRITTEN.values())


def test_list_passes_imports_no_xdsl_pass_module() -> None:
    probe = (
        "import sys\n"
        "from passflow.tools.opt import main\n"
        "assert main(['--list-passes']) == 0\n"
        "loaded = [m for m in sys.modules if m.startswith(('xdsl.transforms.', "
        "'xdsl.backend.'))]\n"
        "sys.stderr.write(repr(loaded))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert "lower-affine " in done.stdout
    loaded = ast.literal_eval(done.stderr)
    assert [name for name in loaded if "lower_affine" in name] == []
    assert len(loaded) < 10, loaded


@pytest.mark.parametrize("width", [60, 140])
def test_the_usage_follows_the_terminal_width(width: int) -> None:
    # The flags are declared at a fixed width (no terminal asked, `FlagParser`);
    # help itself is formatted at the terminal's.
    out = _fresh(
        "import sys\nfrom passflow.tools import opt\nsys.exit(opt.main(['--help']))",
        COLUMNS=str(width),
    )
    usage = out.split("\n\n")[0].splitlines()
    assert usage[0].startswith("usage: passflow-opt ")
    # argparse fills each usage line up to the width (one flag and its value
    # never split).
    assert width - 40 < len(usage[0]) <= width
