"""The plugin example of docs/guide.md works once installed: its package files,
installed as pip would (the package's `passflow.passes` entry points in a
dist-info on the path, the package importable), make the transcript that shows
passflow-opt using it print what the page shows. Nothing is installed into the
venv."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from docs_blocks import ROOT, Block, blocks, run_block, workspace

PAGE = ROOT / "docs" / "guide.md"
PACKAGE = "my-passes"


def _install(directory: Path) -> str:
    """Install the page's package in `directory/site` the way pip records it:
    the dist-info with its metadata and entry points; the PYTHONPATH to use."""
    project = tomllib.loads((directory / PACKAGE / "pyproject.toml").read_text())[
        "project"
    ]
    name = project["name"].replace("-", "_")
    dist = directory / "site" / f"{name}-{project['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n"
    )
    groups: dict[str, dict[str, str]] = project["entry-points"]
    (dist / "entry_points.txt").write_text(
        "".join(
            f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in points.items())
            for group, points in groups.items()
        )
    )
    return os.pathsep.join([str(directory / "site"), str(directory / PACKAGE / "src")])


def _plugin_blocks() -> tuple[list[Block], Block]:
    page = blocks(PAGE)
    files = [b for b in page if b.attributes.get("file", "").startswith(PACKAGE)]
    shown = [
        b
        for b in page
        if b.language == "console"
        and "my-passes installed" in b.attributes.get("no-run", "")
    ]
    assert len(files) == 3 and len(shown) == 1
    return files, shown[0]


def test_the_plugin_example_works_once_installed(tmp_path: Path) -> None:
    env = workspace(tmp_path)
    files, transcript = _plugin_blocks()
    for block in files:
        target = tmp_path / block.attributes["file"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(block.code)
    env["PYTHONPATH"] = _install(tmp_path)
    run_block(transcript, tmp_path, env)


def test_without_the_plugin_its_names_are_unknown(tmp_path: Path) -> None:
    """The check above sees the plugin, not something else: uninstalled, the
    same transcript fails."""
    env = workspace(tmp_path)
    _, transcript = _plugin_blocks()
    try:
        run_block(transcript, tmp_path, env)
    except AssertionError:
        return
    raise AssertionError("the transcript ran without the plugin installed")
