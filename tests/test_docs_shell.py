"""Every shell block of README.md and docs/*.md runs, and prints what it shows.

A page's shell blocks run in order in one temporary directory that looks like a
fresh clone after `make demo`: it holds `examples/`, `bench/` and `.venv` (links to the
repository's) and every block marked `{file=NAME}` above the block that runs,
nothing else. Each block runs as written, in a fresh shell whose PATH holds no
passflow tool, with only the README's setup line (`SETUP`) run first. A block
of `$ command` lines is a transcript, fenced `console`: it shows each command's
output (stdout and stderr, as a terminal shows them; a `...` line stands for
any lines), and the output must be that. A block without prompts is a script:
it must exit 0. `{no-run="why"}` says why a block cannot run here
(tests/docs_blocks.py describes the markers).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_blocks import (
    PAGES,
    ROOT,
    SETUP,
    SHELL,
    Block,
    all_blocks,
    blocks,
    run_block,
    workspace,
)

SHELL_PAGES = [
    page for page in PAGES if any(block.language in SHELL for block in blocks(page))
]
NO_RUN = [block for block in all_blocks() if "no-run" in block.attributes]


@pytest.mark.parametrize(
    "page", SHELL_PAGES, ids=[str(page.relative_to(ROOT)) for page in SHELL_PAGES]
)
def test_the_shell_blocks_of_the_page_run(page: Path, tmp_path: Path) -> None:
    env = workspace(tmp_path)
    for block in blocks(page):
        if "file" in block.attributes:
            target = tmp_path / block.attributes["file"]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(block.code)
        elif block.language in SHELL and "no-run" not in block.attributes:
            run_block(block, tmp_path, env)


@pytest.mark.parametrize("block", NO_RUN, ids=[block.where for block in NO_RUN])
def test_a_block_that_cannot_run_says_why(block: Block) -> None:
    assert len(block.attributes["no-run"].split()) >= 3, block.where


def test_the_readme_gives_the_setup_the_blocks_run_with() -> None:
    assert (
        f"\n{SETUP}    # or: source .venv/bin/activate\n"
        in (ROOT / "README.md").read_text()
    )


SHELL_BLOCKS = [block for block in all_blocks() if block.language in SHELL]


@pytest.mark.parametrize(
    "block", SHELL_BLOCKS, ids=[block.where for block in SHELL_BLOCKS]
)
def test_a_transcript_is_fenced_console_and_a_script_is_not(block: Block) -> None:
    transcript = block.code.startswith("$ ")
    assert transcript == (block.language == "console"), (
        f"{block.where}: a block of `$ command` lines and their output is fenced "
        "`console`; a script is fenced `sh`"
    )
