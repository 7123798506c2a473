"""The xDSL versions passflow supports, checked when passflow is imported.

passflow runs on the xDSL its users have, within `SUPPORTED_XDSL` (the range in
`pyproject.toml`, from the lowest xDSL passflow is tested on through the newest
release; `tests/test_xdsl_version.py` keeps the two equal, and `make
test-xdsl-newest` runs the tests on the newest). Another xDSL, forced in with
`pip install --no-deps` or left by an upgrade, would fail somewhere deep in a
run; `import passflow` says so first, in one line naming the range and the fix.

This module imports nothing of xDSL: it reads the installed version from the
package's metadata directory, and only asks `importlib.metadata` (about 10-20 ms)
when that directory is not beside the package (an editable install of xDSL).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import TracebackType

__all__ = [
    "SUPPORTED_XDSL",
    "UnsupportedXDSLError",
    "check_xdsl_version",
    "installed_xdsl_version",
    "is_supported",
    "unsupported_message",
]

SUPPORTED_XDSL = ">=0.74.0,<0.76"
"""The `xdsl` requirement of `pyproject.toml`."""

_LOWEST = (0, 74, 0)
_BEYOND = (0, 76)


class UnsupportedXDSLError(ImportError):
    """The installed xDSL is outside `SUPPORTED_XDSL`; the message says which
    version is installed and how to install a supported one."""


def installed_xdsl_version() -> str | None:
    """The installed xDSL's version, None if xDSL is not installed."""
    spec = importlib.util.find_spec("xdsl")
    if spec is None or spec.origin is None:
        return None
    beside = Path(spec.origin).parent.parent
    found = sorted(beside.glob("xdsl-*.dist-info"))
    if len(found) == 1:
        return found[0].name[len("xdsl-") : -len(".dist-info")]
    from importlib import metadata  # an editable or unusual install

    try:
        return metadata.version("xdsl")
    except metadata.PackageNotFoundError:
        return None


def _release(version: str) -> tuple[int, ...]:
    """The numeric release part of a version (`0.75.0.dev3+g1` is 0.75.0)."""
    match = re.match(r"\d+(?:\.\d+)*", version)
    return tuple(int(part) for part in match.group().split(".")) if match else ()


def is_supported(version: str) -> bool:
    """Whether xDSL `version` is within `SUPPORTED_XDSL`."""
    release = _release(version)
    return _LOWEST <= release < _BEYOND


def unsupported_message(version: str | None) -> str | None:
    """The one line for an installed xDSL `version` passflow cannot run on
    (None: not installed), or None when it can."""
    fix = f"fix: pip install 'xdsl{SUPPORTED_XDSL}'"
    if version is None:
        return f"passflow needs xDSL {SUPPORTED_XDSL}, and xDSL is not installed; {fix}"
    if is_supported(version):
        return None
    return (
        f"passflow supports xDSL {SUPPORTED_XDSL}, but xDSL {version} is "
        f"installed; {fix}"
    )


def check_xdsl_version() -> None:
    """Raise `UnsupportedXDSLError` when the installed xDSL is not supported.

    Left uncaught (a tool started on an unsupported xDSL), it prints its one
    line and exits with status 1, not a traceback.
    """
    message = unsupported_message(installed_xdsl_version())
    if message is None:
        return
    previous = sys.excepthook

    def one_line(
        kind: type[BaseException],
        error: BaseException,
        trace: TracebackType | None,
    ) -> None:
        if isinstance(error, UnsupportedXDSLError):
            print(f"error: {error}", file=sys.stderr)
        else:
            previous(kind, error, trace)

    sys.excepthook = one_line
    raise UnsupportedXDSLError(message)
