"""The README documents every passflow-opt flag."""

from __future__ import annotations

import re
from pathlib import Path

from passflow.tools.opt import build_parser

README = Path(__file__).resolve().parent.parent / "README.md"


def test_every_flag_is_in_the_readme() -> None:
    text = README.read_text()
    missing = [
        flag
        for flag in sorted(build_parser().known)
        if not re.search(rf"`{re.escape(flag)}(?![\w-])", text)
        and not re.search(rf"`-{re.escape(flag.lstrip('-'))}(?![\w-])", text)
    ]
    assert missing == []
