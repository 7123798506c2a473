"""MkDocs hooks (mkdocs.yml `hooks:`) that make the guide pages read like a
product's without changing what GitHub shows of them:

- an API name in inline code (`PassManager`, `parse_pass_pipeline(text)`)
  becomes a link to its entry in the API reference (mkdocs-autorefs resolves
  it; `mkdocs build --strict` fails on one it cannot);
- a `{file=NAME}` block (a file the reader writes, which the tests write too)
  shows NAME as its title.

Fenced code is left as it is; so are headings.
"""

from __future__ import annotations

import importlib
import inspect
import re
from typing import Any, cast

PUBLIC_MODULES = (
    "passflow.builder",
    "passflow.graph",
    "passflow.remarks",
    "passflow",
)
"""Where a name is documented, first match wins: the builder's and the graph's
names, which `passflow` re-exports, are documented on their own pages."""

_FENCE = re.compile(
    r"^(?P<indent>[ \t]*)(?P<fence>```+)(?P<info>[^\n`]*)\n(?P<code>.*?)^(?P=indent)(?P=fence)[ \t]*$",
    re.M | re.S,
)
_FILE = re.compile(r"^(?P<language>[\w+-]*)\s*\{(?P<attributes>[^}]*)\}\s*$")
_FILE_NAME = re.compile(r"(?:^|\s)file=(?P<name>\S+)")
_CODE = re.compile(r"(?<![`\[])`(?P<name>[A-Za-z_][\w.]*)(?P<call>\([^`]*\))?`(?!\])")


def api_identifiers() -> dict[str, str]:
    """Each public name, as a reader writes it (`PassManager`,
    `PassManager.run`, `ir.parse_module`, `passflow.graph.PipelineGraph`), with
    its API reference id. A class's own documented methods count; inherited
    ones are not on its entry."""
    found: dict[str, str] = {}
    for module_name in (*PUBLIC_MODULES, "passflow.ir"):
        module = importlib.import_module(module_name)
        short = module_name.removeprefix("passflow").lstrip(".")
        for name in getattr(module, "__all__", ()):
            if name == "ir" or name.isupper():
                continue
            identifier = f"{module_name}.{name}"
            written = [identifier, f"{short}.{name}" if short else name]
            if module_name != "passflow.ir":
                written.append(name)
            for spelling in written:
                found.setdefault(spelling, identifier)
            value = getattr(module, name)
            if isinstance(value, type):
                for member, attribute in vars(value).items():
                    # mkdocstrings shows a method with a docstring of its own
                    if not member.startswith("_") and _documented(attribute):
                        for spelling in written:
                            found.setdefault(
                                f"{spelling}.{member}", f"{identifier}.{member}"
                            )
    return found


def _documented(attribute: object) -> bool:
    """Whether `attribute` is a method or property with a docstring."""
    if isinstance(attribute, staticmethod | classmethod):
        attribute = cast(object, attribute.__func__)  # pyright: ignore[reportUnknownMemberType]
    is_method = inspect.isfunction(attribute) or isinstance(attribute, property)
    return is_method and bool(getattr(attribute, "__doc__", None))


def link_names(text: str, identifiers: dict[str, str]) -> str:
    """`text` (Markdown prose) with each inline-code API name linked."""

    def link(match: re.Match[str]) -> str:
        identifier = identifiers.get(match["name"])
        if identifier is None:
            return match[0]
        return f"[{match[0]}][{identifier}]"

    lines = [
        line if line.lstrip().startswith("#") else _CODE.sub(link, line)
        for line in text.split("\n")
    ]
    return "\n".join(lines)


def titled_fence(match: re.Match[str]) -> str:
    """A `{file=NAME}` fence with NAME as its title; other fences unchanged."""
    info = _FILE.fullmatch(match["info"].strip())
    name = _FILE_NAME.search(info["attributes"]) if info else None
    if info is None or name is None:
        return match[0]
    header = (
        f'{match["indent"]}{match["fence"]}{info["language"]} title="{name["name"]}"'
    )
    return match[0].replace(match[0].split("\n", 1)[0], header, 1)


def transform(markdown: str, identifiers: dict[str, str]) -> str:
    """The page as the site shows it: prose linked, file blocks titled."""
    pieces: list[str] = []
    end = 0
    for fence in _FENCE.finditer(markdown):
        pieces.append(link_names(markdown[end : fence.start()], identifiers))
        pieces.append(titled_fence(fence))
        end = fence.end()
    pieces.append(link_names(markdown[end:], identifiers))
    return "".join(pieces)


_identifiers: dict[str, str] = {}


def on_page_markdown(markdown: str, **_: Any) -> str:
    """MkDocs' hook: every page but the API reference's (which mkdocstrings
    links itself) is transformed."""
    if not _identifiers:
        _identifiers.update(api_identifiers())
    if re.search(r"^::: ", markdown, re.M):
        return markdown
    return transform(markdown, _identifiers)
